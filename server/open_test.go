package server

import (
	"slices"
	"testing"
)

func TestBrowserOpener(t *testing.T) {
	for goos, want := range map[string][]string{
		"linux":   {"xdg-open"},
		"freebsd": {"xdg-open"},
		"darwin":  {"open"},
		"windows": {"rundll32", "url.dll,FileProtocolHandler"},
	} {
		name, args := browserOpener(goos)
		if got := append([]string{name}, args...); !slices.Equal(got, want) {
			t.Errorf("%s: %q, want %q", goos, got, want)
		}
	}
}
