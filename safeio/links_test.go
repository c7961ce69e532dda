package safeio

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNoLinkBelow(t *testing.T) {
	root := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret.jsonl")
	os.WriteFile(outside, []byte("x\n"), 0o600)
	os.Mkdir(filepath.Join(root, ".ai-session"), 0o700)
	log := filepath.Join(root, ".ai-session", "conversation.jsonl")
	if err := NoLinkBelow(root, log); err != nil {
		t.Fatalf("missing log: %v", err)
	}
	os.Symlink(outside, log)
	err := NoLinkBelow(root, log)
	if !errors.Is(err, ErrLinked) || !strings.Contains(err.Error(), log) || !strings.Contains(err.Error(), outside) {
		t.Fatalf("linked log: %v", err)
	}
	root2 := t.TempDir()
	os.Symlink(filepath.Dir(outside), filepath.Join(root2, ".ai-session"))
	if err := NoLinkBelow(root2, filepath.Join(root2, ".ai-session", "secret.jsonl")); !errors.Is(err, ErrLinked) {
		t.Fatalf("linked folder: %v", err)
	}
}
