//go:build unix

package testkit

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FakeRegistry is a `claude` stand-in whose `agents --json` prints what a
// test writes with Set (and an old claude's error after Old): Claude
// Code's registry of live sessions (package conversation/claudecode) as
// the test wants it. The test points the claude binary at Bin.
type FakeRegistry struct {
	t      testing.TB
	Bin    string // the stand-in claude
	List   string // the file its `agents --json` prints
	forget func()
}

// NewFakeRegistry writes the stand-in (listing no session) and gives the
// test a cache folder of its own (XDG_CACHE_HOME: where the last answer is
// remembered). forget drops the registry's cached answer; it runs after
// each change and at the test's end.
func NewFakeRegistry(t testing.TB, forget func()) *FakeRegistry {
	t.Helper()
	d := t.TempDir()
	f := &FakeRegistry{t: t, List: filepath.Join(d, "list.json"), Bin: filepath.Join(d, "claude"), forget: forget}
	script := "#!/bin/sh\nif [ \"$1 $2\" = \"agents --json\" ]; then\n  if [ -f " + f.List + ".old ]; then echo \"error: unknown option '--json'\" >&2; exit 1; fi\n  cat " + f.List + "\n  exit 0\nfi\nexit 3\n"
	if err := os.WriteFile(f.Bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the remembered answer
	f.Set(nil)
	t.Cleanup(forget)
	return f
}

// Set makes `agents --json` print list (a slice of sessions; nil prints
// an empty array).
func (f *FakeRegistry) Set(list any) {
	f.t.Helper()
	b := []byte("[]")
	if list != nil {
		var err error
		if b, err = json.Marshal(list); err != nil {
			f.t.Fatal(err)
		}
	}
	if err := os.WriteFile(f.List, b, 0o600); err != nil {
		f.t.Fatal(err)
	}
	f.forget()
}

// Old makes the stand-in an old claude: `agents --json` is an unknown option.
func (f *FakeRegistry) Old() {
	if err := os.WriteFile(f.List+".old", nil, 0o600); err != nil {
		f.t.Fatal(err)
	}
	f.forget()
}
