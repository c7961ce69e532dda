package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A binary built from a git checkout reports the checkout's commit in
// --version, `version --json` and doctor's first line.
func TestVersionFromGitCheckout(t *testing.T) {
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("not a git checkout: %v", err)
		}
		t.Skipf("not a git checkout: %v", err)
	}
	tmp := t.TempDir()
	clone := filepath.Join(tmp, "clone")
	if out, err := exec.Command("git", "clone", "-q", "--no-checkout", ".", clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	// HEAD's tree, without the corpus (not needed to build).
	if out, err := exec.Command("git", "-C", clone, "-c", "advice.detachedHead=false", "checkout", "-q", strings.TrimSpace(string(head)), "--", ".", ":!testdata").CombinedOutput(); err != nil {
		t.Fatalf("git checkout: %v\n%s", err, out)
	}
	bin := filepath.Join(tmp, "relay-baton")
	build := exec.Command("go", "build", "-buildvcs=true", "-o", bin, ".")
	build.Dir = clone
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	rev := strings.TrimSpace(string(head))
	out, err := exec.Command(bin, "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "relay-baton v0.0.0-") || !strings.Contains(string(out), "commit "+rev[:12]) {
		t.Fatalf("--version: %v %q (HEAD %s)", err, out, rev)
	}
	out, _ = exec.Command(bin, "version", "--json").Output()
	if !strings.Contains(string(out), `"revision": "`+rev+`"`) || !strings.Contains(string(out), `"time": "`) {
		t.Fatalf("version --json: %s", out)
	}
	cmd := exec.Command(bin, "doctor")
	cmd.Dir = tmp
	out, _ = cmd.Output()
	if first, _, _ := strings.Cut(string(out), "\n"); !strings.Contains(first, "relay-baton") || !strings.Contains(first, rev[:12]) {
		t.Fatalf("doctor's first line %q", first)
	}
}
