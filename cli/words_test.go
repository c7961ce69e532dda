package cli

import "testing"

func TestSuggest(t *testing.T) {
	if got := Suggest("repaly", []string{"chat", "replay", "review", "plan"}); len(got) != 1 || got[0] != "replay" {
		t.Errorf("Suggest(repaly) = %q", got)
	}
	if got := Suggest("re", []string{"chat", "replay", "review"}); len(got) != 2 {
		t.Errorf("Suggest(re) = %q", got)
	}
	if got := Suggest("folow", []string{"color", "follow", "json"}); len(got) != 1 || got[0] != "follow" {
		t.Errorf("Suggest(folow) = %q, want only the nearest", got)
	}
}
