package preview

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// With neither $VISUAL nor $EDITOR, e opens the first of editor, vi and
// nano found on PATH, as git does.
func TestEditFallsBackToAnEditorOnPath(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the fallback on Windows is notepad")
	}
	bin := t.TempDir()
	// nano and vi on PATH: vi comes first.
	for _, name := range []string{"nano", "vi"} {
		os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\nprintf '"+name+" EDITED' > \"$1\"\n"), 0o755)
	}
	env := map[string]string{"PATH": "relative:" + t.TempDir() + string(os.PathListSeparator) + bin}
	got, err := EditText("prompt", func(k string) string { return env[k] }, t.TempDir(), nil, io.Discard, io.Discard)
	if err != nil || got != "vi EDITED" {
		t.Fatalf("edit with vi on PATH: %q %v", got, err)
	}
	os.Remove(filepath.Join(bin, "vi"))
	if got, err := EditText("prompt", func(k string) string { return env[k] }, t.TempDir(), nil, io.Discard, io.Discard); err != nil || got != "nano EDITED" {
		t.Fatalf("edit with nano on PATH: %q %v", got, err)
	}
	os.Remove(filepath.Join(bin, "nano"))
	if _, err := EditText("prompt", func(k string) string { return env[k] }, t.TempDir(), nil, io.Discard, io.Discard); !errors.Is(err, ErrNoEditor) ||
		!strings.Contains(err.Error(), "none of editor, vi, nano is on PATH") {
		t.Fatalf("no editor at all: %v", err)
	}
}
