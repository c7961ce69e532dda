package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGitignoreRepaired(t *testing.T) {
	for in, repaired := range map[string]bool{"!*\n": true, "*\n!inbox\n": true, "# mine\n": true, "x": true, ignoreAll: false, "*\n": false, "!a\n*\n": false} {
		d := t.TempDir()
		os.WriteFile(filepath.Join(d, ".gitignore"), []byte(in), 0o644)
		if w := EnsureIgnored(d); w != "" {
			t.Fatalf("%q: %s", in, w)
		}
		b, _ := os.ReadFile(filepath.Join(d, ".gitignore"))
		if got := string(b) != in; got != repaired || !ignoresAll(b) || !strings.HasPrefix(string(b), in) {
			t.Errorf("%q became %q", in, b)
		}
	}
	d := t.TempDir()
	os.Symlink("/etc/hostname", filepath.Join(d, ".gitignore"))
	if w := EnsureIgnored(d); w == "" {
		t.Error("a symlinked .gitignore gives no warning")
	}
}

// The user's own lines in relay-baton's .gitignore are kept; a "*" after
// them ignores the rest.
func TestUsersIgnoreLinesKept(t *testing.T) {
	root2 := t.TempDir()
	os.MkdirAll(filepath.Join(root2, SessionDirName), 0o700)
	os.WriteFile(filepath.Join(root2, SessionDirName, ".gitignore"), []byte("mine\n"), 0o644)
	if _, err := EnsureSessionDir(root2); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(root2, SessionDirName, ".gitignore")); string(b) != "mine\n"+ignoreAll {
		t.Fatalf("the user's .gitignore was not kept and completed: %q", b)
	}
}
