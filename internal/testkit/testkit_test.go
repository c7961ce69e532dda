package testkit

import (
	"os/exec"
	"strings"
	"testing"
)

// The package is for tests only: no package's non-test code imports it.
func TestOnlyTestsImportTestkit(t *testing.T) {
	const self = "github.com/relay-baton/relay-baton/internal/testkit"
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		for _, imp := range f[1:] {
			if imp == self {
				t.Errorf("%s imports testkit outside its tests", f[0])
			}
		}
	}
}
