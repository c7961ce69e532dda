package selftest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/hookinstall"
	"github.com/relay-baton/relay-baton/mockapi"
	"github.com/relay-baton/relay-baton/subprocess"
	"github.com/relay-baton/relay-baton/transcript"
)

// The texts the mock answers with, keyed by the prompts selftest sends.
const (
	firstPrompt  = "SELFTEST-FIRST: answer with one line."
	firstAnswer  = "selftest: first answer"
	chatText     = "SELFTEST-CHAT: a chat message delivered by the Stop hook."
	chatAnswer   = "selftest: answer to the chat message"
	resumePrompt = "SELFTEST-RESUME: answer with one line."
	resumeAnswer = "selftest: resumed answer"
	socketPrompt = "SELFTEST-SOCKET: answer with one line."
)

// claudeHook is a settings.json hook group running the recorder.
func claudeHook(self string) []any {
	return []any{map[string]any{"hooks": []any{map[string]any{
		"type": "command", "command": hookinstall.ShellQuote(self) + " selftest --" + HookFlag, "timeout": 60,
	}}}}
}

// claudeExecHook is a settings.json hook group running the recorder in
// exec form ("args", no shell), recording into HookDirEnv's ExecFormArg
// folder.
func claudeExecHook(self string) map[string]any {
	return map[string]any{"hooks": []any{map[string]any{
		"type": "command", "command": self, "args": []string{"selftest", "--" + HookFlag, ExecFormArg}, "timeout": 60,
	}}}
}

// hookPayload is the part of a hook payload relay-baton's hooks use.
type hookPayload struct {
	SessionID            string  `json:"session_id"`
	TranscriptPath       string  `json:"transcript_path"`
	Cwd                  string  `json:"cwd"`
	HookEventName        string  `json:"hook_event_name"`
	Source               string  `json:"source"`
	StopHookActive       *bool   `json:"stop_hook_active"`
	LastAssistantMessage *string `json:"last_assistant_message"`
	TurnID               string  `json:"turn_id"`
}

func checkClaude(ctx context.Context, o Options, root string, add func(Check)) (CLI, error) {
	cli := CLI{Agent: agents.Claude}
	c := checksOf(agents.Claude, add)
	home, tmp, work := filepath.Join(root, "home"), filepath.Join(root, "tmp"), filepath.Join(root, "work")
	hooks1, hooks2, hooks3 := filepath.Join(root, "hooks-run"), filepath.Join(root, "hooks-socket"), filepath.Join(root, "hooks-resume")
	if err := mkdirs(filepath.Join(home, ".claude"), tmp, work, hooks1, hooks2, hooks3,
		filepath.Join(hooks1, ExecFormArg), filepath.Join(hooks2, ExecFormArg), filepath.Join(hooks3, ExecFormArg)); err != nil {
		return cli, err
	}
	settings, _ := json.MarshalIndent(map[string]any{
		"apiKeyHelper": "echo sk-selftest",
		"hooks": map[string]any{
			"SessionStart":     append(claudeHook(o.Self), claudeExecHook(o.Self)),
			"UserPromptSubmit": claudeHook(o.Self),
			"Stop":             claudeHook(o.Self),
		},
	}, "", "  ")
	if err := writeFile(filepath.Join(home, ".claude", "settings.json"), settings); err != nil {
		return cli, err
	}
	mock, err := mockapi.NewAnthropic()
	if err != nil {
		return cli, err
	}
	defer mock.Close()
	scriptAnswers(mock)

	base := lay(o.Env, isolated(home, tmp)...)
	base = lay(base, "ANTHROPIC_BASE_URL="+mock.URL)

	// The binary, as relay-baton resolves it for a real run.
	inv, ok := findCLI(ctx, c, &cli, work, base, o.Step)
	if !ok {
		return cli, nil
	}
	allowedFlags(ctx, c, agents.Claude, inv.Path, inv.Env, o.Step)

	// 1. A one-shot run as relay-baton's agent runs are made, with hooks
	// recording, the Stop hook delivering a chat message once.
	run1 := lay(base, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", HookDirEnv+"="+hooks1, HookBlockEnv+"="+chatText)
	var acts []events.Activity
	res := agents.Run(ctx, agents.Request{Agent: agents.Claude, Role: agents.RoleAsk, Prompt: firstPrompt, Dir: work,
		Env: run1, Timeout: o.Step, OnActivity: func(a events.Activity) { acts = append(acts, a) }})
	streamOutput(c, "stream-json output", "no session id (system init / result line)", "no usage reported", res, acts, chatAnswer)
	if res.Session == "" {
		c("hook payloads", Skipped, "the run reported no session id")
		return cli, nil
	}
	starts, stops := readRecords(hooks1, "SessionStart"), readRecords(hooks1, "Stop")
	prompts := readRecords(hooks1, "UserPromptSubmit")
	transcript := claudeHookPayloads(c, res.Session, work, starts, prompts, stops)
	claudeExecForm(c, res.Session, starts, readRecords(filepath.Join(hooks1, ExecFormArg), "SessionStart"))
	claudeStopDelivery(c, mock, res, stops)
	claudeTranscript(c, home, res.Session, transcript)

	// 2. Resume: the same session continues with the earlier turns.
	res2 := agents.Run(ctx, agents.Request{Agent: agents.Claude, Role: agents.RoleAsk, Prompt: resumePrompt, Dir: work,
		Env: lay(base, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", HookDirEnv+"="+hooks3), Timeout: o.Step, Resume: res.Session})
	resumed(c, "resume (--resume)", res, res2, resumeAnswer, func() bool {
		reqs := mock.Agent()
		return len(reqs) > 0 && strings.Contains(string(reqs[len(reqs)-1].Body), firstAnswer)
	})

	// 3. Messaging on (the variables that switch it off are cleared): the
	// hooks see the session's inbox socket.
	run3 := lay(base, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=", "DISABLE_TELEMETRY=", "DO_NOT_TRACK=", "DISABLE_GROWTHBOOK=",
		HookDirEnv+"="+hooks2)
	res3 := agents.Run(ctx, agents.Request{Agent: agents.Claude, Role: agents.RoleAsk, Prompt: socketPrompt, Dir: work,
		Env: run3, Timeout: o.Step})
	messagingSocket(c, res3, readRecords(hooks2, "SessionStart"), tmp)
	sessionRegistry(ctx, c, cli.Path, base, o.Step)
	return cli, nil
}

type checkFunc func(contract string, st Status, format string, a ...any)

// verdict checks contract: Changed with the problems found, else OK with
// what was seen.
func (c checkFunc) verdict(contract string, problems []string, format string, a ...any) {
	if len(problems) > 0 {
		c(contract, Changed, "%s", strings.Join(problems, "; "))
		return
	}
	c(contract, OK, format, a...)
}

// streamOutput checks a run's output as relay-baton parsed it: exit 0, a
// session id, the final text, usage; noSession and noUsage say what is
// missing in the agent's own terms.
func streamOutput(c checkFunc, name, noSession, noUsage string, res agents.Result, acts []events.Activity, want string) {
	var problems []string
	if res.ExitCode != 0 || res.Err != nil {
		problems = append(problems, fmt.Sprintf("run failed (exit %d: %v)", res.ExitCode, res.Err))
	}
	if res.Session == "" {
		problems = append(problems, noSession)
	}
	if res.FinalText != want {
		problems = append(problems, fmt.Sprintf("final text %q, want %q", cut(res.FinalText, 80), want))
	}
	usage := false
	for _, a := range acts {
		usage = usage || a.Kind == events.ActUsage
	}
	if !usage {
		problems = append(problems, noUsage)
	}
	c.verdict(name, problems, "session %s, %d activities, final text and usage parsed", res.Session, len(acts))
}

// claudeHookPayloads checks the SessionStart, UserPromptSubmit and Stop
// payloads and the hooks' environment; it returns the transcript path.
func claudeHookPayloads(c checkFunc, session, work string, starts, prompts, stops []record) string {
	var problems []string
	var transcript string
	if len(starts) == 0 {
		problems = append(problems, "no SessionStart hook ran")
	} else {
		var p hookPayload
		if err := starts[0].payload(&p); err != nil {
			problems = append(problems, "SessionStart payload is not JSON")
		} else {
			problems = append(problems, samePayload("SessionStart", p, session, work)...)
			if p.Source != "startup" {
				problems = append(problems, fmt.Sprintf("SessionStart source %q, want \"startup\"", p.Source))
			}
			transcript = p.TranscriptPath
		}
	}
	if len(prompts) == 0 {
		problems = append(problems, "no UserPromptSubmit hook ran")
	} else {
		var p hookPayload
		if err := prompts[0].payload(&p); err == nil {
			problems = append(problems, samePayload("UserPromptSubmit", p, session, work)...)
		}
	}
	if len(stops) == 0 {
		problems = append(problems, "no Stop hook ran")
	} else {
		var p hookPayload
		if err := stops[0].payload(&p); err != nil {
			problems = append(problems, "Stop payload is not JSON")
		} else {
			problems = append(problems, samePayload("Stop", p, session, work)...)
			if p.StopHookActive == nil || *p.StopHookActive {
				problems = append(problems, "Stop payload: stop_hook_active missing or true on the turn's first stop")
			}
			if p.LastAssistantMessage == nil {
				problems = append(problems, "Stop payload has no last_assistant_message")
			} else if *p.LastAssistantMessage != firstAnswer {
				problems = append(problems, fmt.Sprintf("Stop payload last_assistant_message %q, want %q", cut(*p.LastAssistantMessage, 60), firstAnswer))
			}
			if transcript == "" {
				transcript = p.TranscriptPath
			}
		}
	}
	c.verdict("hook payloads", problems, "SessionStart, UserPromptSubmit and Stop carry session_id, transcript_path, cwd, hook_event_name; Stop carries stop_hook_active and last_assistant_message")

	// The environment relay-baton's hooks read (conversation/hook/mode.go, conversation/session.go).
	problems = nil
	for _, r := range append(append([]record{}, starts...), stops...) {
		for _, k := range []string{"CLAUDE_PROJECT_DIR", "CLAUDE_CODE_SESSION_ID", "CLAUDE_PID", "CLAUDE_CODE_ENTRYPOINT"} {
			if r.Env[k] == "" {
				problems = append(problems, fmt.Sprintf("%s hook: no %s", r.Event, k))
			}
		}
		if v := r.Env["CLAUDE_CODE_SESSION_ID"]; v != "" && v != session {
			problems = append(problems, fmt.Sprintf("%s hook: CLAUDE_CODE_SESSION_ID %s, not the session %s", r.Event, v, session))
		}
		if v := r.Env["CLAUDE_PID"]; v != "" {
			if n, err := strconv.Atoi(v); err != nil || n <= 0 {
				problems = append(problems, fmt.Sprintf("%s hook: CLAUDE_PID %q is not a process id", r.Event, v))
			}
		}
		if v := r.Env["CLAUDE_PROJECT_DIR"]; v != "" && !sameDir(v, work) {
			problems = append(problems, fmt.Sprintf("%s hook: CLAUDE_PROJECT_DIR %s, want %s", r.Event, v, work))
		}
		if v := r.Env["CLAUDE_CODE_ENTRYPOINT"]; v != "" && v != "sdk-cli" {
			problems = append(problems, fmt.Sprintf("%s hook: CLAUDE_CODE_ENTRYPOINT %q, want \"sdk-cli\" in print mode", r.Event, v))
		}
	}
	switch {
	case len(starts)+len(stops) == 0:
		c("hook environment", Skipped, "no hook ran")
	case len(problems) > 0:
		c("hook environment", Changed, "%s", strings.Join(dedupe(problems), "; "))
	default:
		c("hook environment", OK, "CLAUDE_PROJECT_DIR, CLAUDE_CODE_SESSION_ID, CLAUDE_PID, CLAUDE_CODE_ENTRYPOINT=sdk-cli")
	}
	return transcript
}

// claudeExecForm checks that a hook in exec form ("command" the binary,
// "args" its arguments) runs, without a shell, as `hook install` writes
// them for a claude of hookinstall.ExecFormSince or later.
func claudeExecForm(c checkFunc, session string, starts, execStarts []record) {
	const name = "exec-form hooks (args)"
	var p hookPayload
	switch {
	case len(execStarts) == 0 && len(starts) == 0:
		c(name, Skipped, "no SessionStart hook ran")
	case len(execStarts) == 0:
		c(name, Changed, "the SessionStart hook in exec form (command and args, no shell) did not run, the shell-form one did: install the hooks with `relay-baton hook install --form shell`")
	case execStarts[0].payload(&p) != nil || p.SessionID != session:
		c(name, Changed, "the exec-form SessionStart hook ran without the session's payload (session_id %q)", p.SessionID)
	default:
		c(name, OK, "a SessionStart hook with \"args\" ran without a shell and read the payload (hook install writes this form for this claude)")
	}
}

// samePayload checks the fields every Claude Code hook payload carries.
func samePayload(event string, p hookPayload, session, work string) []string {
	var out []string
	if p.HookEventName != event {
		out = append(out, fmt.Sprintf("%s payload: hook_event_name %q", event, p.HookEventName))
	}
	if p.SessionID != session {
		out = append(out, fmt.Sprintf("%s payload: session_id %q, not the session %s", event, p.SessionID, session))
	}
	if p.TranscriptPath == "" || !filepath.IsAbs(p.TranscriptPath) {
		out = append(out, fmt.Sprintf("%s payload: no absolute transcript_path", event))
	}
	if !sameDir(p.Cwd, work) {
		out = append(out, fmt.Sprintf("%s payload: cwd %q, want %s", event, p.Cwd, work))
	}
	return out
}

// claudeStopDelivery checks the Stop hook's lane: a block decision makes
// the same session continue with the reason as its next input, and the
// next Stop says stop_hook_active.
func claudeStopDelivery(c checkFunc, mock *mockapi.Anthropic, res agents.Result, stops []record) {
	const name = "Stop hook delivery"
	got := false
	for _, r := range mock.Agent() {
		if strings.Contains(mockapi.LastUserText(r), "SELFTEST-CHAT") {
			got = true
		}
	}
	var problems []string
	if !got {
		problems = append(problems, "the block reason never reached the model")
	}
	if len(stops) < 2 {
		problems = append(problems, fmt.Sprintf("%d Stop hook runs, want 2 (the block, then the answer's end)", len(stops)))
	} else {
		var p hookPayload
		if stops[1].payload(&p) != nil || p.StopHookActive == nil || !*p.StopHookActive {
			problems = append(problems, "the Stop after a block does not say stop_hook_active: true")
		} else if p.LastAssistantMessage == nil || *p.LastAssistantMessage != chatAnswer {
			problems = append(problems, "the Stop after a block does not carry the answer as last_assistant_message")
		}
	}
	if res.FinalText != chatAnswer {
		problems = append(problems, fmt.Sprintf("the run's result is %q, not the answer to the delivered message", cut(res.FinalText, 60)))
	}
	c.verdict(name, problems, `{"decision":"block","reason":...} continued the turn; the answer ended it with stop_hook_active true`)
}

// claudeTranscript reads the session's transcript with relay-baton's
// parser: the prompt, the answer, the delivered message and its answer.
func claudeTranscript(c checkFunc, home, session, path string) {
	const name = "transcript shape"
	if path == "" {
		c(name, Skipped, "no hook reported transcript_path")
		return
	}
	projects := filepath.Join(home, ".claude", "projects") + string(filepath.Separator)
	var problems []string
	if !strings.HasPrefix(path, projects) || filepath.Base(path) != session+".jsonl" {
		problems = append(problems, fmt.Sprintf("transcript_path %s is not $CLAUDE_CONFIG_DIR/projects/<slug>/%s.jsonl", path, session))
	}
	acts, bad, err := parseFile(path, transcript.ParseLine)
	if err != nil {
		c(name, Changed, "%v", err)
		return
	}
	if bad > 0 {
		problems = append(problems, fmt.Sprintf("%d lines the parser rejected", bad))
	}
	problems = append(problems, expectActs(acts, firstAnswer, chatText, chatAnswer, string(transcript.DeliveredByHook))...)
	c.verdict(name, problems, "%d activities parsed: the prompt, the answer, the delivered message (lane hook) and its answer", len(acts))
}

// expectActs checks that acts hold the answer text, the delivered chat
// message (on lane, when not "") and the answer to it.
func expectActs(acts []events.Activity, answer, chat, chatAns, lane string) []string {
	var sawAnswer, sawChat, sawChatAnswer bool
	for _, a := range acts {
		switch a.Kind {
		case events.ActText:
			sawAnswer = sawAnswer || strings.Contains(a.Text, answer)
			sawChatAnswer = sawChatAnswer || strings.Contains(a.Text, chatAns)
		case events.ActDelivered:
			if strings.Contains(a.Text, chat) && (lane == "" || a.Tool == lane || a.Detail == lane) {
				sawChat = true
			}
		}
	}
	var out []string
	if !sawAnswer {
		out = append(out, fmt.Sprintf("no reply text %q", answer))
	}
	if !sawChat {
		out = append(out, "the delivered chat message is not recognised as a delivery")
	}
	if !sawChatAnswer {
		out = append(out, fmt.Sprintf("no reply text %q after the delivery", chatAns))
	}
	return out
}

// resumed checks a resumed run against the first one.
func resumed(c checkFunc, name string, first, res agents.Result, want string, sawHistory func() bool) {
	var problems []string
	if res.ExitCode != 0 || res.Err != nil || res.ResumeFailed {
		problems = append(problems, fmt.Sprintf("run failed (exit %d: %v)", res.ExitCode, res.Err))
	}
	if res.Session != first.Session {
		problems = append(problems, fmt.Sprintf("continued as %q, not %s", res.Session, first.Session))
	}
	if res.FinalText != want {
		problems = append(problems, fmt.Sprintf("final text %q, want %q", cut(res.FinalText, 60), want))
	}
	if !sawHistory() {
		problems = append(problems, "the request did not carry the earlier turns")
	}
	c.verdict(name, problems, "same id %s, earlier turns sent with the new prompt", res.Session)
}

// messagingSocket checks that a session with messaging on exports its
// inbox socket and token to its hooks, and that the socket takes a
// connection.
func messagingSocket(c checkFunc, res agents.Result, starts []record, tmp string) {
	const name = "messaging socket"
	if len(starts) == 0 {
		c(name, Changed, "no SessionStart hook ran with messaging on (run exit %d: %v)", res.ExitCode, res.Err)
		return
	}
	r := starts[0]
	var problems []string
	sock := r.Env["CLAUDE_CODE_MESSAGING_SOCKET"]
	if sock == "" {
		problems = append(problems, "no CLAUDE_CODE_MESSAGING_SOCKET in the hook environment")
	} else if r.Socket != "accepts" {
		problems = append(problems, fmt.Sprintf("socket %s: %s", sock, r.Socket))
	}
	if !r.Token {
		problems = append(problems, "no CLAUDE_CODE_MESSAGING_TOKEN in the hook environment")
	}
	c.verdict(name, problems, "CLAUDE_CODE_MESSAGING_SOCKET (%s) and CLAUDE_CODE_MESSAGING_TOKEN set; the socket takes a connection", filepath.Base(sock))
	// The rule relay-baton finds a session's socket by without hooks:
	// <temp dir>/cc-socks/<pid>.sock for the session's pid.
	if sock != "" {
		want := filepath.Join(tmp, "cc-socks", r.Env["CLAUDE_PID"]+".sock")
		if r.Env["CLAUDE_PID"] == "" || !sameFile(sock, want) {
			c("socket path rule", Changed, "the socket is %s, not <TMPDIR>/cc-socks/<CLAUDE_PID>.sock (%s): sessions without hooks are not reached", sock, want)
		} else {
			c("socket path rule", OK, "<TMPDIR>/cc-socks/<pid>.sock, the pid the session's hooks see")
		}
	}
}

// sameFile reports whether a and b are one path once links in their
// folders are resolved (macOS's /var -> /private/var).
func sameFile(a, b string) bool {
	if a == b {
		return true
	}
	da, err1 := filepath.EvalSymlinks(filepath.Dir(a))
	db, err2 := filepath.EvalSymlinks(filepath.Dir(b))
	return err1 == nil && err2 == nil && da == db && filepath.Base(a) == filepath.Base(b)
}

// registryFields are the fields of `claude agents --json` relay-baton reads.
var registryFields = []string{"pid", "cwd", "kind", "startedAt", "sessionId", "name", "status"}

// sessionRegistry checks `claude agents --json`, Claude Code's list of
// live sessions (relay-baton's targets without hooks): it exits 0 with a
// JSON array, and its help still offers --json. Each entry listed (none
// in selftest's HOME, where no session runs) must carry the fields used
// and a known status word.
func sessionRegistry(ctx context.Context, c checkFunc, bin string, env []string, step time.Duration) {
	const name = "session registry (agents --json)"
	if bin == "" {
		c(name, Skipped, "no claude binary")
		return
	}
	ctx, cancel := context.WithTimeout(ctx, step)
	defer cancel()
	out, err := subprocess.Output(ctx, cliCommand(bin, env, "agents", "--json"))
	if err != nil {
		c(name, Changed, "`claude agents --json` failed (%v: %s): sessions without relay-baton's hooks are not targets", err, cut(strings.TrimSpace(string(out)), 200))
		return
	}
	var list []map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(string(out))), &list); err != nil {
		c(name, Changed, "`claude agents --json` printed no JSON array (%v): %s", err, cut(string(out), 200))
		return
	}
	var problems []string
	for _, e := range list {
		for _, f := range registryFields {
			if _, ok := e[f]; !ok {
				problems = append(problems, "an entry lacks "+f)
			}
		}
		if st, _ := e["status"].(string); st != "idle" && st != "busy" && st != "waiting" {
			problems = append(problems, fmt.Sprintf("unknown status %q", st))
		}
	}
	c.verdict(name, problems, "a JSON array (%d sessions listed in the selftest HOME)", len(list))
}

// parseFile parses each line of path with parse; bad counts the lines it
// rejected.
func parseFile(path string, parse func([]byte) ([]events.Activity, error)) (acts []events.Activity, bad int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("cannot read %s: %w", path, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), agents.MaxLine)
	for sc.Scan() {
		a, err := parse(sc.Bytes())
		if err != nil {
			bad++
			continue
		}
		acts = append(acts, a...)
	}
	if err := sc.Err(); err != nil {
		return acts, bad, fmt.Errorf("reading %s: %w", path, err)
	}
	return acts, bad, nil
}

// sameDir reports whether a and b name the same folder.
func sameDir(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	if a == b {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
