package selftest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/hookinstall"
	"github.com/relay-baton/relay-baton/mockapi"
	"github.com/relay-baton/relay-baton/subprocess"
	"github.com/relay-baton/relay-baton/transcript"
)

// codexModel is the model name the mock provider is configured with.
const codexModel = "gpt-5.5"

func checkCodex(ctx context.Context, o Options, root string, add func(Check)) (CLI, error) {
	cli := CLI{Agent: agents.Codex}
	c := checksOf(agents.Codex, add)
	home, tmp, work, hooks := filepath.Join(root, "home"), filepath.Join(root, "tmp"), filepath.Join(root, "work"), filepath.Join(root, "hooks-run")
	codexHome := filepath.Join(home, ".codex")
	if err := mkdirs(codexHome, tmp, work, hooks); err != nil {
		return cli, err
	}
	// relay-baton runs codex in a git repository (codex refuses other
	// folders without --skip-git-repo-check): the smallest one git accepts.
	if err := mkdirs(filepath.Join(work, ".git", "objects"), filepath.Join(work, ".git", "refs", "heads")); err != nil {
		return cli, err
	}
	if err := writeFile(filepath.Join(work, ".git", "HEAD"), []byte("ref: refs/heads/main\n")); err != nil {
		return cli, err
	}
	mock, err := mockapi.NewOpenAI()
	if err != nil {
		return cli, err
	}
	defer mock.Close()
	scriptAnswers(mock)
	if err := writeFile(filepath.Join(codexHome, "config.toml"), []byte(mockapi.CodexConfig(codexModel, mock.URL))); err != nil {
		return cli, err
	}
	hooksPath := filepath.Join(codexHome, "hooks.json")
	hj, _ := json.MarshalIndent(map[string]any{"hooks": map[string]any{"Stop": claudeHook(o.Self)}}, "", "  ")
	if err := writeFile(hooksPath, hj); err != nil {
		return cli, err
	}
	base := lay(o.Env, isolated(home, tmp)...)

	inv, ok := findCLI(ctx, c, &cli, work, base, o.Step)
	if !ok {
		return cli, nil
	}

	// 1. Hook trust, as `relay-baton hook install --agent codex` records it:
	// app-server's hooks/list reports the hook and its hash,
	// config/batchWrite trusts it.
	trusted := codexTrust(ctx, c, inv.Path, inv.Env, hooksPath, work, o.Step)

	// 2. An exec run as relay-baton's agent runs are made, the Stop hook
	// delivering a chat message once.
	var acts []events.Activity
	res := agents.Run(ctx, agents.Request{Agent: agents.Codex, Role: agents.RoleAsk, Prompt: firstPrompt, Dir: work,
		Env: lay(base, HookDirEnv+"="+hooks, HookBlockEnv+"="+chatText), Timeout: o.Step,
		OnActivity: func(a events.Activity) { acts = append(acts, a) }})
	want := chatAnswer
	if !trusted {
		want = firstAnswer
	}
	streamOutput(c, "exec --json output", "no thread id (thread.started)", "no usage reported (turn.completed)", res, acts, want)
	stops := readRecords(hooks, "Stop")
	var rollout string
	if trusted {
		rollout = codexStop(c, res, stops, work, mock)
	} else {
		c("Stop hook payload", Skipped, "the hook is not trusted")
		c("Stop hook delivery", Skipped, "the hook is not trusted")
	}
	codexRollout(c, codexHome, res.Session, work, rollout, trusted)

	// 3. Resume.
	if res.Session != "" {
		res2 := agents.Run(ctx, agents.Request{Agent: agents.Codex, Role: agents.RoleAsk, Prompt: resumePrompt, Dir: work,
			Env: base, Timeout: o.Step, Resume: res.Session})
		resumed(c, "resume (exec resume)", res, res2, resumeAnswer, func() bool {
			reqs := mock.Requests()
			return len(reqs) > 0 && strings.Contains(string(reqs[len(reqs)-1].Body), firstAnswer)
		})
	} else {
		c("resume (exec resume)", Skipped, "the first run reported no thread id")
	}

	// 4. The queue lane's command line, the steer lane's protocol.
	codexQueue(ctx, c, inv.Path, inv.Env, o.Step)
	allowedFlags(ctx, c, agents.Codex, inv.Path, inv.Env, o.Step)
	codexSteerProtocol(ctx, c, inv.Path, inv.Env, tmp, o.Step)
	return cli, nil
}

// codexSteerProtocol checks, in the app-server protocol's schema as the CLI
// prints it, the requests and fields the steer lane sends:
// thread/loaded/list, thread/turns/list and turn/steer {threadId,
// expectedTurnId, input}. (Steering a live TUI needs an interactive
// session, which selftest does not start; the e2e suite does.)
func codexSteerProtocol(ctx context.Context, c checkFunc, bin string, env []string, tmp string, step time.Duration) {
	const name = "steer protocol (app-server)"
	out := filepath.Join(tmp, "app-server-schema")
	ctx, cancel := context.WithTimeout(ctx, step)
	defer cancel()
	if b, err := subprocess.CombinedOutput(ctx, cliCommand(bin, env, "app-server", "generate-json-schema", "--out", out)); err != nil {
		c(name, Changed, "codex app-server generate-json-schema: %v: %s", err, cut(string(b), 120))
		return
	}
	var req struct {
		OneOf []struct {
			Properties struct {
				Method struct {
					Enum []string `json:"enum"`
				} `json:"method"`
			} `json:"properties"`
		} `json:"oneOf"`
	}
	b, err := os.ReadFile(filepath.Join(out, "ClientRequest.json"))
	if err != nil || json.Unmarshal(b, &req) != nil {
		c(name, Changed, "the schema has no readable ClientRequest.json")
		return
	}
	have := map[string]bool{}
	for _, o := range req.OneOf {
		for _, m := range o.Properties.Method.Enum {
			have[m] = true
		}
	}
	var problems []string
	for _, m := range []string{"initialize", "thread/loaded/list", "thread/turns/list", "turn/steer"} {
		if !have[m] {
			problems = append(problems, "no request "+m)
		}
	}
	var steer struct {
		Required []string `json:"required"`
	}
	b, err = os.ReadFile(filepath.Join(out, "v2", "TurnSteerParams.json"))
	if err != nil || json.Unmarshal(b, &steer) != nil {
		problems = append(problems, "no readable v2/TurnSteerParams.json")
	} else {
		req := map[string]bool{}
		for _, f := range steer.Required {
			req[f] = true
		}
		for _, f := range []string{"threadId", "expectedTurnId", "input"} {
			if !req[f] {
				problems = append(problems, "turn/steer does not take "+f)
			}
		}
		for f := range req {
			if f != "threadId" && f != "expectedTurnId" && f != "input" {
				problems = append(problems, "turn/steer requires a new field "+f)
			}
		}
	}
	c.verdict(name, problems, "thread/loaded/list, thread/turns/list, turn/steer {threadId, expectedTurnId, input} (steering a live TUI is not exercised here)")
}

// codexTrust lists the Stop hook through app-server and trusts it.
func codexTrust(ctx context.Context, c checkFunc, bin string, env []string, hooksPath, work string, step time.Duration) bool {
	const name = "hook trust (app-server)"
	ctx, cancel := context.WithTimeout(ctx, step)
	defer cancel()
	a, err := hookinstall.StartCodexAppServer(ctx, bin, env...)
	if err != nil {
		c(name, Changed, "codex app-server: %v", err)
		return false
	}
	defer a.Close()
	find := func() (hookinstall.CodexHookStatus, error) {
		hs, err := a.ListHooks(work)
		if err != nil {
			return hookinstall.CodexHookStatus{}, err
		}
		for _, h := range hs {
			if h.SourcePath == hooksPath && strings.HasSuffix(h.Command, " selftest --"+HookFlag) {
				return h, nil
			}
		}
		return hookinstall.CodexHookStatus{}, fmt.Errorf("hooks/list does not report the Stop hook of %s (%d hooks listed)", hooksPath, len(hs))
	}
	h, err := find()
	if err != nil {
		c(name, Changed, "%v", err)
		return false
	}
	if h.EventName == "" || !strings.HasPrefix(h.Key, hooksPath+":") {
		c(name, Changed, "hooks/list: key %q, event %q: not <path>:<event>:<group>:<handler>", h.Key, h.EventName)
		return false
	}
	if err := a.Trust([]hookinstall.CodexHookStatus{h}); err != nil {
		c(name, Changed, "%v", err)
		return false
	}
	h, err = find()
	if err != nil || h.TrustStatus != "trusted" {
		c(name, Changed, "after config/batchWrite the hook's trust status is %q (%v)", h.TrustStatus, err)
		return false
	}
	c(name, OK, "hooks/list reported key %s and its sha256 hash; config/batchWrite trusted it", filepath.Base(h.Key))
	return true
}

// codexStop checks the Stop payloads and the delivery by a block; it
// returns the rollout path.
func codexStop(c checkFunc, res agents.Result, stops []record, work string, mock *mockapi.OpenAI) string {
	var problems []string
	var rollout string
	if len(stops) == 0 {
		c("Stop hook payload", Changed, "no Stop hook ran (trusted, in $CODEX_HOME/hooks.json)")
		c("Stop hook delivery", Skipped, "no Stop hook ran")
		return ""
	}
	var p hookPayload
	if err := stops[0].payload(&p); err != nil {
		problems = append(problems, "Stop payload is not JSON")
	} else {
		if p.HookEventName != "Stop" {
			problems = append(problems, fmt.Sprintf("hook_event_name %q", p.HookEventName))
		}
		if p.SessionID == "" || p.SessionID != res.Session {
			problems = append(problems, fmt.Sprintf("session_id %q, not the thread %s", p.SessionID, res.Session))
		}
		if p.TurnID == "" {
			problems = append(problems, "no turn_id")
		}
		if !transcript.IsRolloutPath(p.TranscriptPath) {
			problems = append(problems, fmt.Sprintf("transcript_path %q is not a rollout file", p.TranscriptPath))
		}
		if !sameDir(p.Cwd, work) {
			problems = append(problems, fmt.Sprintf("cwd %q, want %s", p.Cwd, work))
		}
		if p.StopHookActive == nil || *p.StopHookActive {
			problems = append(problems, "stop_hook_active missing or true on the turn's first stop")
		}
		if p.LastAssistantMessage == nil || *p.LastAssistantMessage != firstAnswer {
			problems = append(problems, "no last_assistant_message with the turn's answer")
		}
		rollout = p.TranscriptPath
	}
	c.verdict("Stop hook payload", problems, "session_id (the thread), turn_id, transcript_path (the rollout), cwd, stop_hook_active, last_assistant_message")

	problems = nil
	got := false
	for _, r := range mock.Requests() {
		got = got || strings.Contains(mockapi.LastInputText(r), "SELFTEST-CHAT")
	}
	if !got {
		problems = append(problems, "the block reason never reached the model")
	}
	if len(stops) < 2 {
		problems = append(problems, fmt.Sprintf("%d Stop hook runs, want 2", len(stops)))
	} else if stops[1].payload(&p) != nil || p.StopHookActive == nil || !*p.StopHookActive {
		problems = append(problems, "the Stop after a block does not say stop_hook_active: true")
	}
	if res.FinalText != chatAnswer {
		problems = append(problems, fmt.Sprintf("the run's last message is %q, not the answer to the delivered message", cut(res.FinalText, 60)))
	}
	c.verdict("Stop hook delivery", problems, `{"decision":"block","reason":...} continued the turn with the reason as input`)
	return rollout
}

// codexRollout reads the thread's rollout with relay-baton's parser.
func codexRollout(c checkFunc, codexHome, thread, work, path string, delivered bool) {
	const name = "rollout shape"
	if path == "" && thread != "" {
		path = findRollout(codexHome, thread)
	}
	if path == "" {
		c(name, Skipped, "no rollout file known (no thread id, no Stop payload)")
		return
	}
	var problems []string
	sessions := filepath.Join(codexHome, "sessions") + string(filepath.Separator)
	if !strings.HasPrefix(path, sessions) || !strings.HasSuffix(filepath.Base(path), "-"+thread+".jsonl") {
		problems = append(problems, fmt.Sprintf("%s is not $CODEX_HOME/sessions/.../rollout-...-%s.jsonl", path, thread))
	}
	f, err := os.Open(path)
	if err != nil {
		c(name, Changed, "cannot read the rollout: %v", err)
		return
	}
	first, _ := bufio.NewReaderSize(f, 1<<20).ReadBytes('\n')
	f.Close()
	if m, ok := transcript.ParseRolloutMeta(first); !ok {
		problems = append(problems, "the first line is not a session_meta relay-baton can read")
	} else {
		if m.ThreadID != thread {
			problems = append(problems, fmt.Sprintf("session_meta id %q, not the thread %s", m.ThreadID, thread))
		}
		if !sameDir(m.Cwd, work) {
			problems = append(problems, fmt.Sprintf("session_meta cwd %q, want %s", m.Cwd, work))
		}
	}
	acts, bad, err := parseFile(path, transcript.ParseRolloutLine)
	if err != nil {
		c(name, Changed, "%v", err)
		return
	}
	if bad > 0 {
		problems = append(problems, fmt.Sprintf("%d lines the parser rejected", bad))
	}
	if delivered {
		problems = append(problems, expectActs(acts, firstAnswer, chatText, chatAnswer, transcript.DeliveredByHook)...)
	} else {
		found := false
		for _, a := range acts {
			found = found || a.Kind == events.ActText && strings.Contains(a.Text, firstAnswer)
		}
		if !found {
			problems = append(problems, fmt.Sprintf("no reply text %q", firstAnswer))
		}
	}
	c.verdict(name, problems, "session_meta and %d activities parsed (reply text, the hook's delivery)", len(acts))
}

// findRollout finds the rollout of thread under codexHome/sessions.
func findRollout(codexHome, thread string) string {
	var found string
	_ = filepath.WalkDir(filepath.Join(codexHome, "sessions"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, "-"+thread+".jsonl") {
			found = p
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// codexQueue checks that `codex queue` still takes the arguments the queue
// lane passes (--thread, --message). Delivery into a running TUI needs an
// interactive session, which selftest does not start.
func codexQueue(ctx context.Context, c checkFunc, bin string, env []string, step time.Duration) {
	const name = "queue command line"
	ctx, cancel := context.WithTimeout(ctx, step)
	defer cancel()
	out, err := subprocess.CombinedOutput(ctx, cliCommand(bin, env, "queue", "--help"))
	if err != nil {
		c(name, Changed, "codex queue --help: %v: %s", err, cut(string(out), 120))
		return
	}
	var missing []string
	for _, f := range []string{"--thread", "--message"} {
		if !strings.Contains(string(out), f) {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		c(name, Changed, "codex queue no longer lists %s", strings.Join(missing, ", "))
		return
	}
	c(name, OK, "codex queue --thread ID --message TEXT (delivery into a running TUI is not exercised here)")
}
