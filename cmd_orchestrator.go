package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/events"
)

// This file holds the orchestrator lane's commands: send, targets, tail,
// wait and the Claude Code hooks (stop, wait, prompt-submit,
// session-start, install). The protocol itself lives in conversation/.

var sendCommand = &command{
	Name:  "send",
	Usage: "[--session ID | --lead] [--from NAME] [--follow] TEXT|-",
	Short: "Queue a chat message for a running Claude Code or Codex session",
	Long: `Writes TEXT (or standard input, for "-") into the session's inbox
(.claude/session-chat/<sessionId>/inbox/). The session receives it at its next
turn boundary (Stop hook), or at once when idle (the asyncRewake waiter or an
armed Monitor; for an idle Codex session, codex queue). Without --session, the
lead session of the workspace is used
(see 'relay-baton targets'). --follow waits for the delivery and prints the
session's reply from its transcript until the end of its turn.

Messages over 64 KB are refused.`,
	Run: runSend,
}

var targetsCommand = &command{
	Name:  "targets",
	Usage: "[--all] [--json] [--set-lead ID|none]",
	Short: "List the Claude Code and Codex sessions in this workspace that can be chatted with",
	Long: `Lists the running Claude Code sessions of this workspace (started after
'relay-baton hook install': their hooks record the session's process), most
recently active first: whether each is chat-capable (its inbox exists), its
queue depth and oldest message age, whether it is in a turn (busy) and whether
an idle-lane waiter is armed, its last activity and transcript path. Codex
threads (AGENT codex) whose rollout cwd is in the workspace are listed too:
running while a codex process holds the thread, busy from the rollout, "idle
(codex queue)" when the queue lane reaches it, the rollout as the transcript.

One-shot 'claude -p' runs (relay-baton's own agent runs among them) are never
targets: the hooks leave them alone. --all also lists the sessions that have
ended and those whose process is unknown (a transcript only, or registered by
an older relay-baton), with their state.

The lead (marked *) is the one 'send' uses by default: the running session
marked with --set-lead, else the most recently active running one. There is
no lead while no session runs.`,
	Run: runTargets,
}

var tailCommand = &command{
	Name:  "tail",
	Usage: "[--session ID] [--from-start] [--no-follow] [--json]",
	Short: "Stream a session's transcript as activity",
	Long: `Follows a Claude Code session's transcript (located from its registration,
then ~/.claude/projects/<slug>/, then a scan), or a Codex thread's rollout
($CODEX_HOME/sessions/.../rollout-*-<thread id>.jsonl), and prints what the session does:
thinking, tool calls, reply text, end of turn, and chat deliveries. It starts
at the end of the file unless --from-start; --no-follow stops at the end.
--json prints one activity object per line.`,
	Run: runTail,
}

var waitCommand = &command{
	Name:  "wait",
	Usage: "--session ID [--once]",
	Short: "Block until a chat message arrives, claim it and print it (Monitor lane)",
	Long: `The Monitor lane: a session arms Claude Code's Monitor tool on this command.
It watches the inbox (fsnotify), claims each message while the session is not in
a turn, and prints its framed text as one write. --once exits after the first
message. Claiming is by rename, so it is safe beside the hooks. When its
output is closed (nobody reads it), the message goes back to the inbox and
wait exits 1.`,
	Run: runWait,
}

var hookCommand = &command{
	Name:  "hook",
	Usage: "stop|wait|prompt-submit|session-start|install [flags]",
	Short: "Claude Code hooks that deliver chat messages",
	Long: `Subcommands (the first four are run by Claude Code with a JSON payload on stdin):
  stop            Stop hook: claims one queued message and blocks the stop with
                  it; silent when the inbox is empty or stop_hook_active is true.
  wait            asyncRewake waiter (Stop and SessionStart): waits for a message
                  while the session is idle, claims it and exits 2 with it.
  prompt-submit   UserPromptSubmit hook: marks the session busy.
  session-start   SessionStart hook: registers the session and creates its inbox.
  install [--agent claude|codex] [--scope project|local|user] [--wait-timeout D]
          [--check] [--uninstall]
                  merges these hooks into the Claude Code settings file, or with
                  --agent codex the Stop, SessionStart and UserPromptSubmit hooks
                  into Codex's hooks.json (--scope user: $CODEX_HOME, the
                  default; project: .codex/) and records the trust Codex needs
                  (the hashes codex app-server reports, for relay-baton's hooks
                  only); --check then also asks Codex whether they are trusted.

The hooks never print errors toward Claude Code: they record them in
.claude/session-chat/<sessionId>/errors.log. Each one serves its own
hook_event_name only (another event claims nothing), finishes well within its
timeout, and a claim it cannot finish (killed) is delivered again by the next
lane.

They serve the interactive TUI and 'claude -p --input-format stream-json'. For a
one-shot 'claude -p' (also with --resume) and for relay-baton's own agent runs
(RELAY_BATON_AGENT_RUN=1) every hook returns at once and registers nothing:
such a session cannot be woken, and a waiter would stall it.`,
	Run: runHook,
}

// --- shared helpers ---

func workspaceFlag(fs *pflag.FlagSet) *string {
	return fs.String("workspace", "", "the workspace (default: nearest folder with .claude/session-chat, else the git root, else the current folder)")
}

func resolveWorkspace(flag string) (string, error) {
	if flag != "" {
		return filepath.Abs(flag)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return conversation.ResolveWorkspace(wd)
}

// pickSession resolves --session / --lead to a session id.
func pickSession(ws, id string, lead bool) (string, error) {
	if id != "" && lead {
		return "", usagef("give --session or --lead, not both")
	}
	if id != "" {
		if err := conversation.ValidSessionID(id); err != nil {
			return "", &usageError{msg: err.Error(), hint: "relay-baton targets"}
		}
		return id, nil
	}
	t, err := conversation.Lead(ws)
	if err != nil {
		return "", err
	}
	return t.SessionID, nil
}

func renderActivity(w io.Writer, a events.Activity) {
	// Session text is untrusted: no escape sequences reach the terminal.
	a.Text, a.Tool, a.Detail = termSafe(a.Text), termSafe(a.Tool), termSafe(a.Detail)
	switch a.Kind {
	case events.ActThinking:
		fmt.Fprintln(w, "· thinking")
	case events.ActTool:
		if a.Detail != "" {
			fmt.Fprintf(w, "⏺ %s: %s\n", a.Tool, a.Detail)
		} else {
			fmt.Fprintf(w, "⏺ %s\n", a.Tool)
		}
	case events.ActToolResult:
		mark := "⎿"
		if a.IsError {
			mark = "⎿ error:"
		}
		if a.Text != "" {
			fmt.Fprintf(w, "  %s %s\n", mark, a.Text)
		}
	case events.ActText:
		fmt.Fprintln(w, a.Text)
	case events.ActDone:
		fmt.Fprintln(w, "✓ end of turn")
	case events.ActDelivered:
		fmt.Fprintf(w, "→ chat message delivered %s\n", conversation.ViaLane(conversation.Lane(a.Detail)))
	case events.ActUser:
		fmt.Fprintf(w, "> %s\n", firstLine(a.Text, 200))
	case events.ActError:
		fmt.Fprintf(w, "! %s\n", a.Text)
	}
}

// termSafe drops control characters (ESC, CR, BEL, C1) except newline and
// tab.
func termSafe(s string) string {
	if strings.IndexFunc(s, isCtl) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isCtl(r) {
			return -1
		}
		return r
	}, s)
}

func isCtl(r rune) bool {
	return r != '\n' && r != '\t' && (r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f))
}

func firstLine(s string, n int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// --- send ---

func runSend(inv *invocation) error {
	fs := inv.flags()
	session := fs.String("session", "", "the session id (default: the lead)")
	lead := fs.Bool("lead", false, "send to the workspace's lead session")
	from := fs.String("from", "relay-baton", "who the message is from")
	follow := fs.Bool("follow", false, "wait for the delivery and print the reply until the end of the turn")
	wsFlag := workspaceFlag(fs)
	if err := inv.parse(fs); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return &usageError{msg: "send takes one TEXT argument (or - to read standard input)", hint: `relay-baton send --lead "how is it going?"`}
	}
	text := fs.Arg(0)
	if text == "-" {
		b, err := io.ReadAll(io.LimitReader(inv.IO.In, conversation.MaxMessageBytes+1))
		if err != nil {
			return err
		}
		text = string(b)
	}
	if strings.TrimSpace(text) == "" {
		return &usageError{msg: "send: the message is empty", hint: `relay-baton send --lead "how is it going?"`}
	}
	ws, err := resolveWorkspace(*wsFlag)
	if err != nil {
		return err
	}
	id, err := pickSession(ws, *session, *lead)
	if err != nil {
		return err
	}
	r, err := conversation.Send(ws, id, *from, text)
	if err != nil {
		return err
	}
	q, _ := r.Session.Queue()
	fmt.Fprintf(inv.IO.Out, "queued %s for session %s (%d in the inbox)\n", r.Message.ID, id, q.Depth)
	if r.QueueErr != nil {
		fmt.Fprintf(inv.IO.Err, "relay-baton: note: %v\n", r.QueueErr)
	}
	if !*follow {
		return nil
	}
	return conversation.Watch(inv.Ctx, r, conversation.WatchOptions{}, func(u conversation.Update) {
		switch u.Kind {
		case conversation.UpdQueued:
			fmt.Fprintf(inv.IO.Out, "queued (%d ahead)\n", u.Ahead)
		case conversation.UpdCancelled:
			fmt.Fprintln(inv.IO.Out, "cancelled: the message left the inbox without being delivered")
		case conversation.UpdDelivered:
			fmt.Fprintf(inv.IO.Out, "delivered %s at %s\n", conversation.ViaLane(u.Lane), u.At.Local().Format("15:04:05"))
		case conversation.UpdUnconfirmed, conversation.UpdUnreadable, conversation.UpdIncomplete:
			fmt.Fprintf(inv.IO.Out, "! %v\n", u.Err)
		case conversation.UpdActivity:
			renderActivity(inv.IO.Out, u.Activity)
		case conversation.UpdDone:
			fmt.Fprintln(inv.IO.Out, "✓ end of turn")
		}
	})
}

// --- targets ---

func runTargets(inv *invocation) error {
	fs := inv.flags()
	asJSON := fs.Bool("json", false, "print JSON")
	all := fs.Bool("all", false, "also list sessions that ended or whose process is unknown")
	setLead := fs.String("set-lead", "", "mark session ID as the lead (\"none\" clears the mark)")
	wsFlag := workspaceFlag(fs)
	if err := inv.parse(fs); err != nil {
		return err
	}
	ws, err := resolveWorkspace(*wsFlag)
	if err != nil {
		return err
	}
	if *setLead != "" {
		id := *setLead
		if id == "none" {
			id = ""
		}
		if err := conversation.SetLead(ws, id); err != nil {
			return &usageError{msg: err.Error(), hint: "relay-baton targets"}
		}
		if id != "" {
			// Marking a session that has not started yet is allowed (it
			// becomes the lead when it appears), but a typo should not
			// pass silently.
			if known, err := conversation.ListTargets(ws); err == nil && !slices.ContainsFunc(known, func(t conversation.Target) bool { return t.SessionID == id }) {
				fmt.Fprintf(inv.IO.Err, "relay-baton: note: session %s is not running in %s; it becomes the lead while it runs with the hooks installed (until then the most recently active running one is)\n", id, ws)
			}
		}
	}
	list := conversation.ListTargets
	if *all {
		list = conversation.ListAllTargets
	}
	ts, err := list(ws)
	if err != nil {
		return err
	}
	if *asJSON {
		if ts == nil {
			ts = []conversation.Target{}
		}
		enc := json.NewEncoder(inv.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(ts)
	}
	if len(ts) == 0 {
		fmt.Fprintf(inv.IO.Out, "No running Claude Code session found for %s.\nRun 'relay-baton hook install', then start a session there (for Codex: 'relay-baton hook install --agent codex', then start codex).\n", ws)
		if others, err := conversation.ListAllTargets(ws); err == nil && len(others) > 0 && !*all {
			fmt.Fprintf(inv.IO.Out, "%d earlier session(s) ended or are of unknown state: 'relay-baton targets --all' lists them.\n", len(others))
		}
		return nil
	}
	now := time.Now()
	tw := tabwriter.NewWriter(inv.IO.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  SESSION\tCHAT\tSTATE\tQUEUE\tLAST ACTIVITY\tAGENT\tTRANSCRIPT")
	for _, t := range ts {
		mark := " "
		if t.Lead {
			mark = "*"
		}
		chat, state, queue := "no", "-", "-"
		if t.ChatCapable {
			chat, queue = "yes", fmt.Sprint(t.Depth)
			if t.Depth > 0 {
				queue += fmt.Sprintf(" (oldest %s)", now.Sub(t.Oldest).Round(time.Second))
			}
		}
		switch {
		case t.State == conversation.Ended:
			state = "ended"
		case t.State == conversation.Unknown:
			state = "unknown (no process recorded)"
		case t.ChatCapable:
			switch {
			case t.Busy:
				state = "busy"
			case t.Agent == conversation.AgentCodex && t.Waiting:
				state = "idle (codex queue)"
			case t.Agent == conversation.AgentCodex:
				state = "not loaded"
			case t.Waiting:
				state = "idle, waiter armed"
			default:
				state = "idle, not reachable"
			}
		}
		last := "-"
		if !t.LastActivity.IsZero() {
			last = now.Sub(t.LastActivity).Round(time.Second).String() + " ago"
		}
		tr := t.TranscriptPath
		if tr == "" {
			tr = "-"
		}
		fmt.Fprintf(tw, "%s %s\t%s\t%s\t%s\t%s\t%s\t%s\n", mark, t.SessionID, chat, state, queue, last, t.Agent, tr)
	}
	tw.Flush()
	if slices.ContainsFunc(ts, func(t conversation.Target) bool { return t.Lead }) {
		fmt.Fprintln(inv.IO.Out, "* lead (the default target of 'relay-baton send')")
	}
	return nil
}

// --- tail ---

func runTail(inv *invocation) error {
	fs := inv.flags()
	session := fs.String("session", "", "the session id (default: the lead)")
	fromStart := fs.Bool("from-start", false, "read the transcript from its start")
	noFollow := fs.Bool("no-follow", false, "stop at the end of the transcript")
	asJSON := fs.Bool("json", false, "print one activity JSON object per line")
	wsFlag := workspaceFlag(fs)
	if err := inv.parse(fs); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("tail takes no arguments")
	}
	ws, err := resolveWorkspace(*wsFlag)
	if err != nil {
		return err
	}
	id, err := pickSession(ws, *session, false)
	if err != nil {
		return err
	}
	s, err := conversation.OpenSession(ws, id)
	if err != nil {
		return err
	}
	path := conversation.LocateTranscript(s)
	if path == "" {
		return fmt.Errorf("no transcript found for session %s (looked in its registration and %s): `relay-baton targets` lists the sessions of this workspace", id, conversation.ProjectsWhere())
	}
	var off int64
	if !*fromStart {
		off = conversation.Size(path)
	}
	// Buffered: a scan of a big transcript would otherwise make one write
	// per activity. Following flushes after each line, so nothing waits.
	out := bufio.NewWriterSize(inv.IO.Out, 64<<10)
	defer out.Flush()
	var line []byte
	return conversation.Tail(inv.Ctx, conversation.TailOptions{
		Path: path, Offset: off, Follow: !*noFollow,
		OnSkip: func(_ int64, why string) {
			out.Flush()
			fmt.Fprintf(inv.IO.Err, "relay-baton: %s\n", why)
		},
		OnActivity: func(_ int64, acts []events.Activity) bool {
			for _, a := range acts {
				if *asJSON {
					// What json.Encoder writes, without reflection.
					var err error
					if line, err = events.AppendActivityJSON(line[:0], a); err == nil {
						out.Write(append(line, '\n'))
					}
				} else {
					renderActivity(out, a)
				}
			}
			if !*noFollow {
				out.Flush()
			}
			return true
		},
	})
}

// --- wait (Monitor lane) ---

func runWait(inv *invocation) error {
	fs := inv.flags()
	session := fs.String("session", "", "the session id")
	once := fs.Bool("once", false, "exit after the first message")
	wsFlag := workspaceFlag(fs)
	if err := inv.parse(fs); err != nil {
		return err
	}
	if *session == "" {
		return &usageError{msg: "wait needs --session ID", hint: "relay-baton targets"}
	}
	ws, err := resolveWorkspace(*wsFlag)
	if err != nil {
		return err
	}
	s, err := conversation.OpenSession(ws, *session)
	if err != nil {
		return &usageError{msg: err.Error()}
	}
	if !s.ChatCapable() {
		return fmt.Errorf("session %s: %w", *session, conversation.ErrNotChatReady)
	}
	// A reader that is gone must show as a failed write (the message goes
	// back to the inbox), not kill the process with SIGPIPE.
	signal.Ignore(syscall.SIGPIPE)
	for {
		res, err := s.WaitClaimWith(inv.Ctx, conversation.LaneMonitor, true, 0, conversation.ClaimOptions{Handover: true})
		for _, r := range res.Rejected {
			fmt.Fprintf(inv.IO.Err, "relay-baton: moved unreadable inbox file aside (rejected/%s): %s\n", r.Name, r.Reason)
		}
		if err != nil {
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return nil
			}
			return err
		}
		if _, err := io.WriteString(inv.IO.Out, s.Frame(res.Message)+"\n"); err != nil {
			// The reader is gone (wait | true): nobody got the message.
			_ = res.Abandon(err)
			return fmt.Errorf("wait: the output is closed (%v): message %s put back in the inbox for the next lane", err, res.Message.ID)
		}
		_ = res.Delivered()
		if *once {
			return nil
		}
	}
}

// --- hooks ---

// hookPayload is the part of a Claude Code hook payload the hooks use.
type hookPayload struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	StopHookActive bool   `json:"stop_hook_active"`
	Source         string `json:"source"`
	HookEventName  string `json:"hook_event_name"`

	env conversation.HookEnv // the session's mode and process
}

// busyFresh: a busy mark younger than this is this process's own.
const busyFresh = 30 * time.Second

// maxPayload caps what a hook reads from stdin (last_assistant_message can
// be long).
const maxPayload = 8 << 20

// readHookSession reads the payload of hook sub and opens its session;
// ok=false for anything unusable (junk, empty, a bad id, another hook
// event: recorded in errors.log): the hook then stays silent.
func readHookSession(in io.Reader, sub string) (hookPayload, *conversation.Session, bool) {
	var p hookPayload
	// One-shot print-mode sessions and relay-baton's own agent runs are
	// not served: return at once (a waiter would stall them).
	env := conversation.CurrentHook()
	if in == nil || conversation.SkipHook(env, in) {
		return p, nil, false
	}
	b, err := io.ReadAll(io.LimitReader(in, maxPayload+1))
	if err != nil {
		return p, nil, false
	}
	projectDir := os.Getenv("CLAUDE_PROJECT_DIR")
	p, ws, ok := decodeHookPayload(b, projectDir)
	if !ok {
		return p, nil, false
	}
	p.env = env
	if projectDir == "" {
		ws = conversation.HookWorkspace(ws, p.SessionID)
	}
	s, err := conversation.OpenSession(ws, p.SessionID)
	if err != nil {
		return p, nil, false
	}
	if err := conversation.CheckHookEvent(sub, p.HookEventName); err != nil {
		s.RecordError(err)
		return p, nil, false
	}
	return p, s, true
}

// decodeHookPayload decodes a hook payload and picks its workspace:
// projectDir (CLAUDE_PROJECT_DIR) when set, else the payload's cwd. ok=false
// when the payload is over maxPayload, not JSON, or names no absolute
// workspace.
func decodeHookPayload(b []byte, projectDir string) (p hookPayload, ws string, ok bool) {
	if len(b) > maxPayload || json.Unmarshal(b, &p) != nil {
		return p, "", false
	}
	ws = projectDir
	if ws == "" {
		ws = p.Cwd
	}
	if ws == "" || !filepath.IsAbs(ws) {
		return p, "", false
	}
	return p, ws, true
}

func runHook(inv *invocation) error {
	if len(inv.Args) == 0 || inv.Args[0] == "--help" || inv.Args[0] == "-h" {
		printCommandHelp(inv.IO.Out, inv.Cmd, nil)
		if len(inv.Args) == 0 {
			return &usageError{msg: "hook needs a subcommand", hint: "relay-baton hook --help"}
		}
		return nil
	}
	sub, rest := inv.Args[0], inv.Args[1:]
	subInv := &invocation{Ctx: inv.Ctx, IO: inv.IO, Cmd: inv.Cmd, Args: rest, colorMode: inv.colorMode}
	// The hooks run bounded: a payload that never ends, or anything else
	// that would hold them, must not outlive Claude Code's hook timeout,
	// and a signal ends them within a second.
	hooks := map[string]func(*invocation) error{"stop": hookStop, "wait": hookWait, "prompt-submit": hookPromptSubmit, "session-start": hookSessionStart}
	if h := hooks[sub]; h != nil {
		limit := conversation.HookBudget()
		if sub == "wait" {
			limit = 0 // bounded by its own --timeout
		}
		var err error
		if !conversation.RunBounded(inv.Ctx, limit, 500*time.Millisecond, func() { err = h(subInv) }) {
			return nil
		}
		return err
	}
	switch sub {
	case "install":
		return hookInstall(subInv)
	}
	return &usageError{msg: fmt.Sprintf("unknown hook %q", sub), hint: "relay-baton hook --help"}
}

// hookHelp handles --help for a hook subcommand (they take no other flag
// except install and wait).
func hookHelp(inv *invocation, usage, short string) bool {
	for _, a := range inv.Args {
		if a == "--help" || a == "-h" {
			fmt.Fprintf(inv.IO.Out, "Usage: relay-baton hook %s\n\n%s\n", usage, short)
			return true
		}
	}
	return false
}

// hookStop is the Stop hook. Its empty-inbox path is one payload decode,
// one directory read and one unlink (the busy mark).
func hookStop(inv *invocation) error {
	if hookHelp(inv, "stop", "Stop hook: reads the payload on stdin; claims one queued chat message and prints\n{\"decision\":\"block\",\"reason\":...}; silent when there is none or stop_hook_active is true.") {
		return nil
	}
	p, s, ok := readHookSession(inv.IO.In, "stop")
	if !ok {
		return nil
	}
	if p.StopHookActive {
		_ = s.ClearBusy()
		return nil
	}
	has, err := s.HasPending()
	if err != nil || !has {
		if err != nil {
			s.RecordError(fmt.Errorf("hook stop: %w", err))
		}
		_ = s.ClearBusy()
		return nil
	}
	// Handover: the claim stays marked in progress until the block is
	// printed; a hook killed before that leaves the message to the next lane.
	res, err := s.ClaimWith(conversation.LaneHook, conversation.ClaimOptions{Handover: true, Transcript: p.TranscriptPath})
	if err != nil {
		s.RecordError(fmt.Errorf("hook stop: %w", err))
	}
	if !res.OK {
		_ = s.ClearBusy()
		return nil
	}
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
	}{"block", s.Frame(res.Message)})
	if _, err := io.WriteString(inv.IO.Out, buf.String()); err != nil { // one line, one write
		_ = res.Abandon(err)
		return nil
	}
	_ = res.Delivered()
	return nil
}

func hookPromptSubmit(inv *invocation) error {
	if hookHelp(inv, "prompt-submit", "UserPromptSubmit hook: marks the session busy, so the idle lanes wait for the turn boundary.") {
		return nil
	}
	p, s, ok := readHookSession(inv.IO.In, "prompt-submit")
	if !ok {
		return nil
	}
	// In stream-json mode the first prompt's UserPromptSubmit can run
	// before the SessionStart hook has created the folder: create it here.
	err := s.Ensure()
	if err == nil {
		err = s.MarkBusy()
	}
	if err == nil {
		err = s.RecordProcess(p.env.Process)
	}
	if err != nil {
		s.RecordError(fmt.Errorf("hook prompt-submit: %w", err))
	}
	return nil
}

func hookSessionStart(inv *invocation) error {
	if hookHelp(inv, "session-start", "SessionStart hook: records the session's transcript path and cwd and creates its inbox.") {
		return nil
	}
	p, s, ok := readHookSession(inv.IO.In, "session-start")
	if !ok {
		return nil
	}
	_ = s.Ensure()
	if err := s.RecordProcess(p.env.Process); err != nil {
		s.RecordError(fmt.Errorf("hook session-start: %w", err))
	}
	tp := p.TranscriptPath
	if tp != "" && !filepath.IsAbs(tp) {
		tp = ""
	}
	if err := s.Register(conversation.Registration{TranscriptPath: tp, Cwd: p.Cwd, Source: p.Source}); err != nil {
		s.RecordError(fmt.Errorf("hook session-start: %w", err))
	}
	// A busy mark left by a previous process of this session (killed
	// mid-turn) would hold the idle lane back: drop it. Not after a
	// compaction (it can happen mid-turn), and not a fresh mark: the first
	// prompt's UserPromptSubmit may run before this hook.
	if p.Source != "compact" {
		_ = s.ClearBusyOlderThan(busyFresh)
	}
	return nil
}

// hookWait is the asyncRewake waiter.
func hookWait(inv *invocation) error {
	fs := inv.flags()
	timeout := fs.Duration("timeout", conversation.DefaultWaitTimeout-conversation.WaiterMargin(conversation.DefaultWaitTimeout), "give up (exit 0, nothing claimed) after this long; keep it under the hook's timeout")
	inv.Cmd = &command{Name: "hook wait", Usage: "[--timeout D]", Short: "asyncRewake waiter (Stop and SessionStart hooks): reads the payload on stdin, waits while\nthe session is idle for a chat message, claims it and exits 2 with its framed text on stderr;\nexits 0 with nothing claimed after --timeout or when another waiter is armed."}
	if err := inv.parse(fs); err != nil {
		// Exit 2 from an asyncRewake hook wakes the session with stderr as
		// a message: a bad flag must not reach the model. Exit 1 instead.
		var ue *usageError
		if errors.As(err, &ue) {
			return &exitError{code: 1, err: fmt.Errorf("%s (try: relay-baton hook wait --help)", ue.msg)}
		}
		return err
	}
	p, s, ok := readHookSession(inv.IO.In, "wait")
	if !ok {
		return nil
	}
	if err := s.Ensure(); err != nil {
		s.RecordError(fmt.Errorf("hook wait: %w", err))
		return nil
	}
	_ = s.RecordProcess(p.env.Process)
	lock, ok, err := s.LockWaiter()
	if err != nil {
		s.RecordError(fmt.Errorf("hook wait: %w", err))
		return nil
	}
	if !ok {
		return nil // another waiter is armed
	}
	defer lock.Release()
	// A waiter outliving its session would hold the lock for nothing.
	alive, stop := conversation.WhileAlive(inv.Ctx, p.env.Process, conversation.SystemProcs, 0)
	defer stop()
	ctx, cancel := context.WithTimeout(alive, *timeout)
	defer cancel()
	res, err := s.WaitClaimWith(ctx, conversation.LaneRewake, true, 0, conversation.ClaimOptions{Handover: true, Transcript: p.TranscriptPath})
	if err != nil {
		if ctx.Err() == nil {
			s.RecordError(fmt.Errorf("hook wait: %w", err))
		}
		return nil
	}
	if _, err := io.WriteString(inv.IO.Err, s.Frame(res.Message)+"\n"); err != nil {
		_ = res.Abandon(err)
		return nil
	}
	_ = res.Delivered()
	return &exitError{code: 2}
}

func hookInstall(inv *invocation) error {
	fs := inv.flags()
	scope := fs.String("scope", "project", "where: project (.claude/settings.json), local (.claude/settings.local.json) or user (~/.claude/settings.json)")
	check := fs.Bool("check", false, "only report whether the hooks are installed and current (exit 1 if not)")
	uninstall := fs.Bool("uninstall", false, "remove relay-baton's hooks")
	waitTimeout := fs.Duration("wait-timeout", conversation.DefaultWaitTimeout, "how long the idle-lane waiter stays armed after each turn (a claude -p stream-json session waits for it when its stdin closes)")
	agent := fs.String("agent", "claude", "claude (Claude Code settings) or codex (Codex hooks.json, default --scope user, plus Codex's hook trust)")
	wsFlag := workspaceFlag(fs)
	inv.Cmd = &command{Name: "hook install", Usage: "[--agent claude|codex] [--scope project|local|user] [--wait-timeout D] [--check] [--uninstall]", Short: "Merge relay-baton's chat hooks into a Claude Code settings file or Codex's hooks.json"}
	if err := inv.parse(fs); err != nil {
		return err
	}
	ws, err := resolveWorkspace(*wsFlag)
	if err != nil {
		return err
	}
	if *agent == "codex" {
		if !fs.Changed("scope") {
			*scope = "user"
		}
		bin, err := relayBatonPath()
		if err != nil {
			return err
		}
		return hookInstallCodex(inv, ws, *scope, bin, *check, *uninstall)
	} else if *agent != "claude" {
		return usagef("--agent must be claude or codex, not %q", *agent)
	}
	path, err := conversation.SettingsPath(*scope, ws)
	if err != nil {
		return &usageError{msg: err.Error(), hint: "relay-baton hook install --help"}
	}
	bin, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot find the relay-baton binary's path: %w", err)
	}
	if r, err := filepath.EvalSymlinks(bin); err == nil {
		bin = r
	}
	if dir, tmp := goTemporaryBinary(bin); tmp && !*uninstall {
		return &usageError{msg: fmt.Sprintf("this relay-baton is a temporary binary of `go run` (%s, under %s): hooks need a path that stays; install it first, then run the installed one", bin, dir),
			hint: "go install . && relay-baton hook install   (or: go build -o ~/.local/bin/relay-baton . && ~/.local/bin/relay-baton hook install)"}
	}
	if *waitTimeout < 10*time.Second {
		return usagef("--wait-timeout must be at least 10s")
	}
	opts := conversation.HookOptions{Binary: bin, WaitTimeout: *waitTimeout}
	plan, err := conversation.PlanHooks(path, opts, *uninstall)
	if err != nil {
		return err
	}
	out := inv.IO.Out
	if *check {
		if *uninstall {
			return usagef("--check and --uninstall do not go together")
		}
		if plan.Changed {
			fmt.Fprintf(out, "%s: relay-baton hooks missing or out of date (run 'relay-baton hook install --scope %s')\n", path, *scope)
			return errSilent
		}
		fmt.Fprintf(out, "%s: relay-baton hooks installed and current (%s)\n", path, bin)
		return nil
	}
	if err := plan.Apply(); err != nil {
		return err
	}
	switch {
	case *uninstall && plan.Changed:
		fmt.Fprintf(out, "Removed relay-baton's hooks from %s (other hooks kept).\n", path)
		return nil
	case *uninstall:
		fmt.Fprintf(out, "No relay-baton hooks in %s.\n", path)
		return nil
	case plan.Changed:
		fmt.Fprintf(out, "Installed relay-baton's chat hooks in %s (other hooks kept):\n", path)
	default:
		fmt.Fprintf(out, "relay-baton's chat hooks are already installed in %s:\n", path)
	}
	for _, h := range conversation.Hooks(opts) {
		extra := ""
		if h.AsyncRewake {
			extra = ", asyncRewake"
		}
		fmt.Fprintf(out, "  %-16s %s (timeout %ds%s)\n", h.Event, h.Command, h.Timeout, extra)
	}
	fmt.Fprintf(out, `
Adoption rule: Claude Code reads hooks when a session starts. Sessions started
before this install are not chat-capable; start (or resume) them again.

Lanes: the Stop hook delivers queued messages at turn ends; the asyncRewake
waiter delivers while the session is idle (for up to %s after each turn;
a 'claude -p --input-format stream-json' session waits for it when its stdin
closes: use --wait-timeout for such sessions, or end them with a signal).
Optional Monitor lane, for a session that should arm it itself: ask it to run
the Monitor tool with the command
  %s wait --session <its session id>
`, *waitTimeout, conversation.ShellQuote(bin))
	return nil
}
