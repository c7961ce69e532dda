package room

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/gitrepo"
	"github.com/relay-baton/relay-baton/reports"

	"github.com/relay-baton/relay-baton/agents/agenttest"
	"github.com/relay-baton/relay-baton/internal/testkit"
	"github.com/relay-baton/relay-baton/safeio"
)

// The room reads its own files in .ai-session and the repository's
// untracked files: a FIFO at any of those paths must give an error (or be
// passed over) at once instead of hanging the room, and a symlink must not
// lead it to read a file elsewhere.

func mkfifo(t *testing.T, p string) {
	t.Helper()
	os.Remove(p)
	testkit.MakeFIFO(t, p)
}

// secretFile is a file outside the repository that a symlink points at.
func secretFile(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(p, []byte("SECRET-CONTENT\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestHandoffFIFOs(t *testing.T) {
	// handoff.md is a FIFO: the backup read says so; nothing runs.
	h := newHarness(t, "y")
	mkfifo(t, filepath.Join(h.e.SessionDir, "handoff.md"))
	err := agenttest.Within(t, "/handoff with a FIFO handoff.md", func() error { _, err := h.e.Process(context.Background(), "/handoff claude"); return err })
	if !errors.Is(err, safeio.ErrNotRegular) || !strings.Contains(err.Error(), "handoff.md is a named pipe (FIFO), not a regular file: move it aside") {
		t.Fatalf("err = %v", err)
	}
	if h.fr.runs() != 0 {
		t.Fatal("an agent ran")
	}

	// commands.log is a FIFO: the handoff is written, and says why it
	// lacks the log's tail.
	h = newHarness(t, "n")
	mkfifo(t, filepath.Join(h.e.SessionDir, "commands.log"))
	doc := agenttest.Within(t, "HandoffDoc with a FIFO commands.log", func() string { return h.e.HandoffDoc(context.Background(), "claude") })
	if !strings.Contains(doc, "## Known Errors\nerror: commands.log not read: ") || !strings.Contains(doc, "a named pipe (FIFO)") {
		t.Fatalf("handoff.md:\n%s", doc)
	}

	// A symlinked handoff.md is not read (nor backed up) through.
	h = newHarness(t, "y")
	secret := secretFile(t)
	os.Symlink(secret, filepath.Join(h.e.SessionDir, "handoff.md"))
	err = agenttest.Within(t, "/handoff with a linked handoff.md", func() error { _, err := h.e.Process(context.Background(), "/handoff claude"); return err })
	if !errors.Is(err, safeio.ErrNotRegular) || !strings.Contains(err.Error(), "a symbolic link") {
		t.Fatalf("err = %v", err)
	}
	if m, _ := filepath.Glob(filepath.Join(h.e.SessionDir, "handoff.*.md")); len(m) != 0 {
		t.Fatalf("the link's target was backed up: %v", m)
	}
	if b, _ := os.ReadFile(secret); string(b) != "SECRET-CONTENT\n" {
		t.Fatalf("the link's target changed: %q", b)
	}
	if h.fr.runs() != 0 {
		t.Fatal("an agent ran")
	}
}

func TestDoctorFIFOLog(t *testing.T) {
	h := newHarness(t)
	mkfifo(t, h.e.LogPath()) // the room keeps its own descriptor of the old file
	r := agenttest.Within(t, "doctor with a FIFO conversation.jsonl", func() reports.Doctor { return h.e.Doctor(context.Background(), true) })
	var c reports.Check
	for _, x := range r.Checks {
		if x.Name == "conversation.jsonl" {
			c = x
		}
	}
	if c.Status != "warn" || !strings.Contains(c.Detail, "is a named pipe (FIFO), not a regular file: move it aside") {
		t.Fatalf("conversation.jsonl check: %+v", c)
	}
}

// doctor --deep names a FIFO or a link in place of relay-baton's own
// documents in .ai-session, which the commands that use them refuse.
func TestDoctorFlagsNonFileDocs(t *testing.T) {
	h := newHarness(t)
	mkfifo(t, h.e.planMD.path())
	if err := os.Symlink(secretFile(t), filepath.Join(h.e.SessionDir, "review.md")); err != nil {
		t.Fatal(err)
	}
	r := agenttest.Within(t, "doctor with a FIFO plan.md", func() reports.Doctor { return h.e.Doctor(context.Background(), true) })
	got := map[string]reports.Check{}
	for _, x := range r.Checks {
		got[x.Name] = x
	}
	if c := got["plan.md"]; c.Status != "fail" || !strings.Contains(c.Detail, "plan.md is a named pipe (FIFO), not a regular file") {
		t.Errorf("plan.md check: %+v", c)
	}
	if c := got["review.md"]; c.Status != "fail" || !strings.Contains(c.Detail, "review.md is a symbolic link, not a regular file") {
		t.Errorf("review.md check: %+v", c)
	}
	if c, ok := got["handoff.md"]; ok {
		t.Errorf("an absent handoff.md was reported: %+v", c)
	}
}

func TestPlanSymlinkNotFollowed(t *testing.T) {
	h := newHarness(t, "y")
	secret := secretFile(t)
	if err := os.Symlink(secret, h.e.planMD.path()); err != nil {
		t.Fatal(err)
	}
	err := agenttest.Within(t, "/execute with a linked plan.md", func() error { _, err := h.e.Process(context.Background(), "/execute"); return err })
	if !errors.Is(err, safeio.ErrNotRegular) || !strings.Contains(err.Error(), "plan.md is a symbolic link, not a regular file") {
		t.Fatalf("err = %v", err)
	}
	if h.fr.runs() != 0 || len(h.fr.prepared) != 0 {
		t.Fatalf("the linked plan reached an agent: %+v", h.fr.prepared)
	}
}

func TestEditorLeavesAFIFO(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "fifo-editor")
	os.WriteFile(script, []byte("#!/bin/sh\nrm -f \"$1\" && mkfifo \"$1\"\n"), 0o755)
	getenv := func(k string) string {
		if k == "EDITOR" {
			return script
		}
		return ""
	}
	err := agenttest.Within(t, "EditText", func() error {
		_, err := EditText("prompt", getenv, dir, nil, &strings.Builder{}, &strings.Builder{})
		return err
	})
	if !errors.Is(err, safeio.ErrNotRegular) || !strings.Contains(err.Error(), "a named pipe (FIFO)") {
		t.Fatalf("err = %v", err)
	}
}

// Untracked symlinks (git lists them; it never lists a FIFO) are not read
// through: their target may be a FIFO, or a file outside the repository
// that must not reach a prompt.
func TestUntrackedLinksNotFollowed(t *testing.T) {
	h := newRepo(t)
	ctx := context.Background()
	secret := secretFile(t)
	os.Symlink(secret, filepath.Join(h, "key"))
	fifo := filepath.Join(t.TempDir(), "fifo")
	mkfifo(t, fifo)
	os.Symlink(fifo, filepath.Join(h, "pipe"))
	os.WriteFile(filepath.Join(h, "new.txt"), []byte("a\nb\n"), 0o644)

	diff := agenttest.Within(t, "diffText", func() string { return gitrepo.Diff(ctx, h) })
	if strings.Contains(diff, "SECRET") {
		t.Fatalf("the diff read through a link:\n%s", diff)
	}
	for _, want := range []string{
		"diff --git a/key b/key\nnew file (a symbolic link, not read)\n",
		"diff --git a/pipe b/pipe\nnew file (a symbolic link, not read)\n",
		"+++ b/new.txt\n+a\n+b\n",
	} {
		if !strings.Contains(diff, want) {
			t.Fatalf("diff lacks %q:\n%s", want, diff)
		}
	}
	ch := agenttest.Within(t, "changes", func() []gitrepo.Change { ch, _ := gitrepo.Changes(ctx, h); return ch })
	for _, c := range ch {
		if want := map[string]int{"key": 0, "pipe": 0, "new.txt": 2}[c.Path]; c.Added != want {
			t.Errorf("%s: +%d, want +%d", c.Path, c.Added, want)
		}
	}
	k1 := agenttest.Within(t, "progressKey", func() string { k, _ := gitrepo.ProgressKey(ctx, h); return k })
	// A link pointed elsewhere is a change.
	os.Remove(filepath.Join(h, "key"))
	os.Symlink(secret+"-2", filepath.Join(h, "key"))
	if k2, _ := gitrepo.ProgressKey(ctx, h); k2 == k1 || k1 == "" {
		t.Fatalf("progress keys %q %q", k1, k2)
	}
}

// A FIFO (or a link) at plan.md is no plan: /status and /review say
// why it is unusable rather than "ready" or "no plan.md", and the panel
// shows no plan.
func TestStatusReviewFIFOPlan(t *testing.T) {
	h := newHarness(t)
	mkfifo(t, filepath.Join(h.e.SessionDir, "plan.md"))
	s := agenttest.Within(t, "Status with a FIFO plan.md", func() reports.SessionStatus { return h.e.Status(context.Background()) })
	if s.Plan || !strings.Contains(s.Text(), "plan:    unusable: ") || !strings.Contains(s.PlanError, "plan.md is a named pipe (FIFO), not a regular file: move it aside") {
		t.Fatalf("status: plan %v, planError %q:\n%s", s.Plan, s.PlanError, s.Text())
	}
	var err error
	r := agenttest.Within(t, "Review with a FIFO plan.md", func() reports.Review { r, e := h.e.Review(context.Background()); err = e; return r })
	if err != nil || r.Plan || !strings.Contains(r.Text(), "plan.md unusable: changes are not compared with plan steps: ") {
		t.Fatalf("review (err %v):\n%s", err, r.Text())
	}
	if p := h.e.Panel(context.Background()); p.Plan {
		t.Fatal("the panel counts a FIFO plan.md as a plan")
	}

	os.Remove(filepath.Join(h.e.SessionDir, "plan.md"))
	os.Symlink(secretFile(t), filepath.Join(h.e.SessionDir, "plan.md"))
	if s := h.e.Status(context.Background()); s.Plan || !strings.Contains(s.PlanError, "a symbolic link") {
		t.Fatalf("status with a linked plan.md: plan %v, planError %q", s.Plan, s.PlanError)
	}
}
