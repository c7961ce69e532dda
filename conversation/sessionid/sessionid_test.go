package sessionid

import (
	"strings"
	"testing"
)

func TestShapes(t *testing.T) {
	const id = "0b7e2c1a-3f4d-4e5f-8a9b-0c1d2e3f4a5b"
	for s, want := range map[string]bool{id: true, strings.ToUpper(id): true, id[:35] + "g": false, id[:23] + "_" + id[24:]: false, id + "0": false, "../" + id[3:]: false, "": false} {
		if got := IsUUID(s); got != want {
			t.Errorf("IsUUID(%q) = %v", s, got)
		}
	}
	for s, want := range map[string]bool{id[:8]: true, id[:9]: true, id[:10]: true, "0b7e2c1a_": false, "0b7e2c1g": false, id + "0": false, "": true} {
		if got := Shaped(s); got != want {
			t.Errorf("Shaped(%q) = %v", s, got)
		}
	}
}
