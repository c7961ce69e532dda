package room

import (
	"github.com/relay-baton/relay-baton/runs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/agents/agenttest"
)

// The room shows the agents' work, in a real terminal (tmux) with the
// real claude and codex CLIs against the mocks: /plan twice (the second
// backs up the first), /execute (codex, run with -C in the run's own
// worktree, edits greet.py there: the user's greet.py is untouched; the
// change summary names it with its line counts), /diff, /review (a change
// to greet.py does not tick the step about test_greet.py), /apply then y
// (the change reaches the user's greet.py, no worktree is left), /undo
// then y (greet.py is back), and two identical codex questions that report the same per-run
// tokens. -update writes the screen to testdata/golden/work-140.txt (the
// capture in docs/room-work.md).

const greetPy = "def greet(name):\n    return 'hello ' + name\n"

const workPlan = "## Goal\nAdd shout().\n\n## Steps\n1. Add shout() to greet.py\n2. Add a test to test_greet.py\n\n## Verification\npython3 -c 'import greet'\n\n## Next step\nAdd shout() to greet.py"

func TestTmuxRoomWork(t *testing.T) {
	a := agenttest.NewAnthropic(t,
		agenttest.Reply(agenttest.Text("## Goal\nAdd shout().\n\n## Steps\n1. Add shout() to greet.py\n")),
		agenttest.Reply(agenttest.Text(workPlan)),
	)
	o := agenttest.NewOpenAI(t)
	o.When("Implement the plan", agenttest.Reply(agenttest.Exec(`printf '\ndef shout(name):\n    return greet(name).upper()\n' >> greet.py`)))
	o.When("Wall time", agenttest.Reply(agenttest.Text("Added shout() to greet.py.")))
	o.When("Process exited", agenttest.Reply(agenttest.Text("Added shout() to greet.py.")))
	o.When("LINES-QUESTION", agenttest.Reply(agenttest.Text("greet.py has 5 lines.")))
	dir := agenttest.GitRepo(t, map[string]string{"greet.py": greetPy})
	gitRun(t, dir, "add", "greet.py")
	gitRun(t, dir, "commit", "-qm", "greet")
	r := startTmuxRoom(t, dir, 140, 50, []string{"chat"}, agenttest.OfflineEnv(t, a, o)...)
	defer func() {
		if t.Failed() {
			t.Logf("pane:\n%s", r.all())
		}
	}()
	asks := 0
	yes := func() {
		t.Helper()
		asks++
		r.wait("run this? [y/N/e]", asks, agentWait)
		r.line("y")
	}
	r.wait("claude›", 1, agentWait)

	// /plan, then /plan over it: the first plan is backed up.
	r.line("/plan add shout")
	yes()
	r.wait("wrote .ai-session/plan.md", 1, agentWait)
	r.line("/plan add shout and its test")
	yes()
	r.wait("backed up the previous plan as .ai-session/plan.", 1, agentWait)
	r.wait("wrote .ai-session/plan.md", 2, agentWait)
	backups, _ := filepath.Glob(filepath.Join(dir, ".ai-session", "plan.*.md"))
	if len(backups) != 1 {
		t.Fatalf("plan backups: %v", backups)
	}
	if b, _ := os.ReadFile(backups[0]); !strings.Contains(string(b), "1. Add shout() to greet.py\n") || strings.Contains(string(b), "test_greet.py") {
		t.Fatalf("the backup holds %q", b)
	}

	// /execute: codex appends three lines to greet.py, in the run's
	// worktree (codex -C <worktree>): the user's greet.py is untouched.
	r.line("/execute")
	r.wait("run this? [y/N/e]", asks+1, agentWait)
	if !strings.Contains(r.all(), "worktree: "+os.Getenv("RELAY_BATON_WORKTREES")) {
		t.Fatal("the preview does not name the run's worktree")
	}
	yes()
	r.wait("changed 1 file: +3 -0", 1, agentWait)
	r.wait("greet.py  +3 -0", 1, agentWait)
	r.wait("/apply brings them into your tree", 1, agentWait)
	if b, _ := os.ReadFile(filepath.Join(dir, "greet.py")); string(b) != greetPy {
		t.Fatalf("codex wrote in the user's tree: greet.py is %q", b)
	}
	runsDir, _ := runs.RepoDir(dir)
	wts, _ := filepath.Glob(filepath.Join(runsDir, "*", "greet.py"))
	if len(wts) != 1 {
		t.Fatalf("the run's worktrees: %v", wts)
	}
	if b, _ := os.ReadFile(wts[0]); !strings.Contains(string(b), "def shout(name):") {
		t.Fatalf("greet.py in the worktree: %q", b)
	}

	r.line("/diff")
	r.wait("+def shout(name):", 1, agentWait)

	r.line("/review")
	r.wait("step 2: Add a test to test_greet.py", 1, agentWait)
	if all := r.all(); !strings.Contains(all, "✓ step 1: Add shout() to greet.py [greet.py]") || !strings.Contains(all, "· step 2: Add a test to test_greet.py") ||
		!strings.Contains(all, "no tests touched") {
		t.Fatal("/review matched the steps wrongly")
	}

	// /apply, y: the change reaches the user's tree, three-way.
	r.line("/apply")
	r.wait("apply these? [y/N]", 1, agentWait)
	if !strings.Contains(r.all(), "greet.py  write   (+3 -0, 1 hunk)") {
		t.Fatal("/apply's preview does not name greet.py with its hunk")
	}
	r.line("y")
	r.wait("applied 1 file of codex /execute", 1, agentWait)
	if b, _ := os.ReadFile(filepath.Join(dir, "greet.py")); !strings.Contains(string(b), "def shout(name):") {
		t.Fatalf("greet.py after /apply: %q", b)
	}
	if wl := gitRun(t, dir, "worktree", "list"); strings.Count(wl, "\n") != 1 {
		t.Fatalf("after /apply, git worktree list:\n%s", wl)
	}

	// /undo, y: greet.py is as it was.
	r.line("/undo")
	r.wait("take these out? [y/N]", 1, agentWait)
	if !strings.Contains(r.all(), "greet.py  restore (what it held before the apply)") {
		t.Fatal("/undo's preview does not name greet.py")
	}
	r.line("y")
	r.wait("took out 1 file of codex /execute", 1, agentWait)
	if b, _ := os.ReadFile(filepath.Join(dir, "greet.py")); string(b) != greetPy {
		t.Fatalf("greet.py after /undo: %q", b)
	}
	if st := gitRun(t, dir, "status", "--porcelain", "--", "greet.py"); st != "" || gitRun(t, dir, "rev-list", "--count", "HEAD") != "1\n" {
		t.Fatalf("after /undo: status %q, or a commit was made", st)
	}

	// Two identical codex questions in one conversation: the same per-run
	// tokens (codex reports the thread's running totals).
	r.line("/agent codex")
	r.wait("active agent: codex", 1, agentWait)
	for i := range 2 {
		r.line("LINES-QUESTION: how many lines has greet.py?")
		yes()
		r.wait("greet.py has 5 lines.", i+1, agentWait)
		r.wait("codex: exit 0", 2+i, agentWait) // the run is over: the prompt is back
		r.wait("codex›", 2+i, agentWait)
	}
	runs := regexp.MustCompile(`codex: exit 0 · [^·\n]+ · (\d+ in / \d+ out tokens)`).FindAllStringSubmatch(r.all(), -1)
	if len(runs) != 3 || runs[1][1] != runs[2][1] {
		t.Fatalf("codex runs report %v: the two identical questions differ", runs)
	}
	r.line("/budget")
	r.wait("spent this session:", 1, agentWait)

	if updateGolden() {
		got := strings.ReplaceAll(strings.ReplaceAll(r.all(), dir, "/tmp/demo"), os.Getenv("RELAY_BATON_WORKTREES"), "~/.cache/relay-baton/worktrees")
		if err := os.WriteFile(filepath.Join("testdata", "golden", "work-140.txt"), []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
