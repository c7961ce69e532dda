package server

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestPageDiffApplyUndo: an executor run left pending (3 new files in its
// worktree), brought back with /resume in the page: /diff shows its diff
// with its lines coloured by kind; /apply shows the terminal's apply
// preview (every path with its counts), not editable, and the user's
// files change only on its Apply click; /undo's preview and its click
// take the apply out.
func TestPageDiffApplyUndo(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	dir, r := pendingRunRepo(t)
	ctx, _, _ := pageIn(t, dir, nil)
	if err := within(ctx, 10*time.Second,
		waitText(`#room-status`, "ready"),
		typeLine("/resume"),
		waitText(`#console`, "pending run: codex /execute"),
		waitText(`#room-status`, "ready"),
		typeLine("/diff"),
		waitText(`#console`, "diff: the changes of codex /execute"),
		waitJS(`[...document.querySelectorAll("#console .diff .dfile")].some(e => e.textContent === "+++ b/a.txt\n")`),
		waitJS(`[...document.querySelectorAll("#console .diff .dhunk")].length === 3`),
		waitJS(`[...document.querySelectorAll("#console .diff .dadd")].map(e => e.textContent).join("") === "+a.txt\n+b.txt\n+c.txt\n"`),
		waitText(`#room-status`, "ready"),
	); err != nil {
		t.Fatalf("/diff: %v\nconsole: %s", err, pageText(ctx, t, "#console"))
	}
	absent := func(when string) {
		t.Helper()
		if _, err := os.Stat(filepath.Join(dir, "a.txt")); !os.IsNotExist(err) {
			t.Fatalf("%s: a.txt is in the user's tree (%v)", when, err)
		}
	}
	if err := within(ctx, 10*time.Second,
		typeLine("/apply"),
		waitText(`#preview-title`, "apply these? /apply"),
		waitText(`#preview-text`, "/apply brings the change of codex /execute"),
		waitText(`#preview-text`, "a.txt  create  (+1, new file)"),
		waitText(`#preview-text`, "c.txt  create  (+1, new file)"),
		waitText(`#preview-run`, "Apply"),
		waitJS(`document.getElementById("preview-edit").hidden`),
	); err != nil {
		t.Fatalf("the apply preview: %v\nconsole: %s", err, pageText(ctx, t, "#console"))
	}
	absent("before the click")
	if err := within(ctx, 10*time.Second,
		press(`#preview-cancel`),
		waitText(`#console`, "nothing applied; the run stays pending"),
		waitText(`#room-status`, "ready"),
	); err != nil {
		t.Fatalf("cancel: %v\nconsole: %s", err, pageText(ctx, t, "#console"))
	}
	absent("after Cancel")
	if err := within(ctx, 10*time.Second,
		typeLine("/apply"),
		waitText(`#preview-run`, "Apply"),
		press(`#preview-run`),
		waitText(`#console`, "applied 3 files of codex /execute"),
		waitText(`#room-status`, "ready"),
	); err != nil {
		t.Fatalf("apply: %v\nconsole: %s", err, pageText(ctx, t, "#console"))
	}
	if b, err := os.ReadFile(filepath.Join(dir, "a.txt")); err != nil || string(b) != "a.txt\n" {
		t.Fatalf("a.txt after Apply: %q %v", b, err)
	}
	if _, err := os.Stat(r.Worktree); !os.IsNotExist(err) {
		t.Fatalf("the applied run's worktree is left (%v)", err)
	}
	if err := within(ctx, 10*time.Second,
		typeLine("/undo"),
		waitText(`#preview-title`, "take these out? /undo"),
		waitText(`#preview-text`, "/undo takes out what /apply wrote"),
		waitText(`#preview-text`, "b.txt"),
		waitText(`#preview-run`, "Undo"),
		press(`#preview-run`),
		waitText(`#console`, "took out 3 files of codex /execute"),
		waitText(`#room-status`, "ready"),
	); err != nil {
		t.Fatalf("undo: %v\nconsole: %s", err, pageText(ctx, t, "#console"))
	}
	absent("after Undo")
}
