package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/hookinstall"
)

func copyExe(t *testing.T, dst string) {
	t.Helper()
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o755); err != nil {
		t.Fatal(err)
	}
}

// `hook install` run by a binary of `go run` (its work folder in the
// temporary directory, or Go's build cache) refuses, says what to run
// instead and writes nothing; the same binary at a stable path installs.
func TestHookInstallRefusesGoRunBinary(t *testing.T) {
	base := t.TempDir()
	cases := []struct {
		name, bin string
		env       []string
	}{
		{"go run work folder", filepath.Join(base, "tmp", "go-build1770885760", "b001", "exe", "relay-baton"), []string{"TMPDIR=" + filepath.Join(base, "tmp")}},
		{"build cache", filepath.Join(base, "cache", "3f", "relay-baton"), []string{"GOCACHE=" + filepath.Join(base, "cache")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := t.TempDir()
			copyExe(t, c.bin)
			if _, ok := hookinstall.GoTemporaryBinary(c.bin); ok {
				t.Fatalf("%s counted as temporary without its environment", c.bin)
			}
			saved := os.Getenv("GOCACHE")
			t.Setenv("TMPDIR", os.TempDir())
			for _, kv := range c.env {
				k, v, _ := strings.Cut(kv, "=")
				t.Setenv(k, v)
			}
			if _, ok := hookinstall.GoTemporaryBinary(c.bin); !ok {
				t.Fatalf("%s not recognised as a go run binary", c.bin)
			}
			t.Setenv("GOCACHE", saved)
			code, out, errs := runBinary(t, c.bin, c.env, "hook", "install", "--workspace", ws)
			if code != 2 || !strings.Contains(errs, "temporary binary of `go run`") || !strings.Contains(errs, "go install .") {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
			}
			if _, err := os.Stat(filepath.Join(ws, ".claude")); !os.IsNotExist(err) {
				t.Fatalf(".claude created by a refused install: %v", err)
			}
		})
	}
	stable := filepath.Join(base, "bin", "relay-baton")
	copyExe(t, stable)
	ws := t.TempDir()
	code, out, errs := runBinary(t, stable, nil, "hook", "install", "--workspace", ws)
	if code != 0 || !strings.Contains(out, stable+" hook stop") {
		t.Fatalf("stable binary: exit %d\n%s\n%s", code, out, errs)
	}
}

func runBinary(t *testing.T, bin string, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	saved := os.Args[0]
	os.Args[0] = bin
	defer func() { os.Args[0] = saved }()
	return relayBaton(t, context.Background(), env, "", args...)
}
