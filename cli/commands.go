package cli

import (
	"strings"

	"github.com/relay-baton/relay-baton/events"
)

// The table of relay-baton's commands: what each is called, takes and says
// in --help. Package main binds each Run before Run dispatches; help,
// completion and version are this package's own.

// RelayBaton is relay-baton's command line, in the order --help lists it.
var RelayBaton = &Table{
	Suggest: func(word string, names []string) string { return DidYouMean("", Suggest(word, names)) },
	Commands: []*Command{Chat, Replay, Plan, Execute, Continue, Handoff, Diff, Apply, Undo, Runs, Review, Status, Budget, Doctor, Note, Trust,
		Send, Targets, Tail, Wait, Hook, Serve, Selftest, Version, Completion, Help, Complete},
	Values: map[string][]string{
		"color": {"auto", "always", "never"},
		"to":    {"claude", "codex"},
		"scope": {"project", "local", "user"},
		"form":  {"auto", "exec", "shell"},
		"kind":  events.KindNames(),
		"role":  events.RoleNames(),
	},
}

var Chat = &Command{
	Entry: Entry{Name: "chat", Aliases: []string{"room"}, Usage: "[--path DIR] [--agent claude|codex|orchestrator] [--diet PROFILE] [--resume [--recap N]] [--in-place] [--yes] [--allow-api-key-env] [--allow-env NAME]...", Short: "Open the Agent Room: a turn-based REPL with Claude and Codex"},
	Long: `Slash commands (/help lists them) plan, execute, loop, review and hand off; free text asks
the active agent a read-only question. Every agent run is previewed (argv, cwd, policy,
credentials held back) and runs only after you answer y. /agent orchestrator chats with a running
Claude Code session of the workspace instead (after 'relay-baton hook install'): free text is
previewed, queued in its inbox and its reply shown inline. Ctrl-C cancels a running agent
(or stops waiting for a reply); Ctrl-C twice on an empty prompt, Ctrl-D or /exit leaves.

--resume rebuilds the room from .ai-session/conversation.jsonl (active agent, plan and its
age, orchestrator target, an unfinished /continue loop, chat messages still waiting) and
recaps the last turns, and each agent continues its conversation (claude's session,
codex's thread) from where it was; /new starts afresh. Each agent keeps one conversation
for the whole room session: a follow-up question reaches it with the earlier turns.

Input: a paste (bracketed paste) is one message, however many lines; end a line with \ or
press Alt-Enter to type a newline. A confirmation counts only a key pressed after its
preview is shown; with stdin not a terminal, no agent runs unless --yes is given.

On a terminal of 100 columns or more the context panel is pinned to the bottom rows and
redrawn in place; narrower terminals and pipes get a one-line status before each prompt.`,
}

var Replay = &Command{
	Entry: Entry{Name: "replay", Usage: "[--json] [--session ID] [--kind k1,k2] [--role r1,r2] [--since DURATION|TIMESTAMP] [--limit N] [--follow] [--file PATH] [--path DIR]", Short: "Show the recorded conversation timeline (read-only)"},
	Long: `Prints .ai-session/conversation.jsonl of the repository as a numbered
timeline, "N. [ts] who kind: text", then a summary footer. Filters combine:
--session, --kind and --role take comma-separated lists; --since takes a
duration back from now (90m, 2h, 3d) or an RFC 3339 time. --limit N keeps
only the newest N events (numbered from 1). --json prints {entries, summary}.
--follow keeps printing events as they are appended, until Ctrl-C.

Lines that are not valid events (a torn last line after a crash, bad JSON,
a line over 1 MiB) are skipped and reported after the footer. replay never
writes: it does not create .ai-session.`,
}

var Plan = &Command{Entry: Entry{Name: "plan", Usage: "<task> [--yes] [--continue] [--allow-env NAME]...", Short: "Have the planner write plan.md (preview first)"}}

var Execute = &Command{Entry: Entry{Name: "execute", Usage: "[--yes] [--continue] [--in-place] [--allow-env NAME]...", Short: "Run the executor against plan.md in a worktree of its own (preview first)"}}

var Continue = &Command{
	Entry: Entry{Name: "continue", Usage: "[--max-steps N] [--yes] [--json] [--in-place] [--allow-env NAME]...", Short: "Run the bounded plan<->execute loop on plan.md (one confirmation)"},
	Long: `The room's /continue as one command: each step codex (the executor) works on the plan's
next step, then claude (the planner) reads the step's answer and diff and rewrites
.ai-session/plan.md (the old one backed up), or ends its answer with the line PLAN COMPLETE.
No plan update follows the last step. The loop stops on --max-steps (default 3, at most 20),
PLAN COMPLETE, a step that leaves the repository unchanged, a budget ratio of 0.95, an agent
failure or Ctrl-C. One preview shows the loop's shape and its first prompt; every later prompt
is logged as a prompt_preview before it runs (relay-baton replay shows them). --json prints
the loop's result (steps, reason, agent runs, plan updates) on stdout, everything else on
stderr. Exit 0 when the loop stopped normally, 4 on an agent failure or Ctrl-C.`,
}

var Handoff = &Command{
	Entry:       Entry{Name: "handoff", Usage: "--to claude|codex [--yes] [--continue] [--in-place] [--allow-env NAME]...", Short: "Build handoff.md and launch the next agent (preview first)"},
	Subcommands: []string{"claude", "codex"},
}

var Diff = &Command{
	Entry: Entry{Name: "diff", Usage: "[--run ID] [--json] [file...]", Short: "Show an executor run's change, not applied or as applied (read-only)"},
	Long: `The change of the newest pending run (or, with none, the newest applied one; --run ID
picks one: relay-baton runs lists them), as a unified diff against your tree when the run
started. Paths limit it to some files. --json prints {run, state, worktree, files, diff}.`,
}

var Apply = &Command{
	Entry: Entry{Name: "apply", Usage: "[--run ID] [--yes]", Short: "Bring a pending run's change into your tree, three-way, after a preview (all or nothing)"},
	Long: `The room's /apply outside the room. The preview lists every path the run changed with its
hunks and what apply does to it: write (your copy is what the run started from), merge (you
changed it too: both kept), create, same, kept (the run deleted it: apply never deletes a file).
A conflict anywhere applies nothing and names each path. Your index and HEAD are not touched.
Then the run's worktree is removed; undo takes out exactly what was written.`,
}

var Undo = &Command{
	Entry: Entry{Name: "undo", Usage: "[--run ID] [--yes]", Short: "Discard a pending run, or take out what apply wrote, after a preview"},
	Long: `The room's /undo outside the room. A pending run is discarded: its worktree is removed
(git worktree remove and prune) and your files are not touched. An applied run has what
apply wrote taken out, three-way: edits you made since are kept, and a path where they
overlap refuses the whole undo. A file apply made is removed only while it is as apply
left it; no file that existed before the run is removed.`,
}

var Runs = &Command{Entry: Entry{Name: "runs", Usage: "[--json]", Short: "List the executor runs kept for this repository: worktree, age, change size (read-only)"}}

var Review = &Command{Entry: Entry{Name: "review", Usage: "[--json]", Short: "Review changed files against the plan (read-only)"}}

var Status = &Command{Entry: Entry{Name: "status", Usage: "[--json]", Short: "Show session status (read-only)"}}

var Budget = &Command{Entry: Entry{Name: "budget", Usage: "[--diet PROFILE] [--json]", Short: "Show context-budget usage (read-only)"}}

var Doctor = &Command{Entry: Entry{Name: "doctor", Usage: "[--deep] [--json]", Short: "Check git, agent binaries, keys and .ai-session health (read-only)"}}

var Note = &Command{Entry: Entry{Name: "note", Usage: "<text>", Short: "Append a note to the conversation log"}}

var Trust = &Command{
	Entry: Entry{Name: "trust", Usage: "[--path DIR] [--revoke | --list] [--json]", Short: "Trust this repository's .relay-baton.json so that agents run with it"},
	Long: `A repository's .relay-baton.json (extra claude and codex arguments, a timeout,
allowEnv) is ignored until you trust it: read it, then run relay-baton trust in the
repository. Its absolute path and SHA-256 are recorded in your config folder
(relay-baton/trusted.json there, mode 0600), never in the repository. Any change to
the file untrusts it again: until you trust it anew, agents run without it and every
preview says so in one line.

Even trusted, arguments that start processes or widen an agent's permissions are
refused by name (MCP servers, notify, hooks, plugins, settings, tool allow-lists,
extra directories, profiles, sandbox, approval and permission settings): trust
fails and says which. --revoke forgets the repository's file; --list shows every
trusted file and whether it changed since (read-only). --json prints JSON.

Exit codes: 0 done, 1 the file cannot be trusted (missing, malformed, refused
arguments) or the record cannot be written, 2 usage.`,
}

var Send = &Command{
	Entry: Entry{Name: "send", Usage: "[--session ID | --lead] [--from NAME] [--follow] TEXT|-", Short: "Queue a chat message for a running Claude Code or Codex session"},
	Long: `Writes TEXT (or standard input, for "-") into the session's inbox
(.claude/session-chat/<sessionId>/inbox/). A Claude Code session receives it
through its messaging socket (no hooks needed): at once when idle, at its next
tool result when busy. With relay-baton's hooks installed, a message the socket
did not deliver comes at the next turn boundary (Stop hook) or, when idle, by
the asyncRewake waiter or an armed Monitor; an idle Codex session gets it by
codex queue. It counts as delivered once the session's transcript shows it.
Without --session, the
lead session of the workspace is used
(see 'relay-baton targets'). --follow waits for the delivery and prints the
session's reply from its transcript until the end of its turn.

Messages over 64 KB are refused.`,
}

var Targets = &Command{
	Entry: Entry{Name: "targets", Usage: "[--all] [--everywhere] [--json] [--set-lead ID|none]", Short: "List the Claude Code and Codex sessions in this workspace that can be chatted with"},
	Long: `Lists the running Claude Code sessions of this workspace, most recently
active first: those Claude Code's own list names (claude agents --json, run
as RELAY_BATON_CLAUDE or claude on PATH; no hooks needed: relay-baton reaches
them through their messaging socket) and those relay-baton's hooks registered,
one row per session. A missing or older claude leaves the hooks' sessions, with
a note saying why. --everywhere lists every session Claude Code names, in any
folder. For each: whether it is chat-capable (its inbox exists, or its socket), its
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
no lead while no session runs. When a newer session takes the lead, send and
the room's /agent orchestrator say so ("lead is now ...").`,
}

var Tail = &Command{
	Entry: Entry{Name: "tail", Usage: "[--session ID] [--from-start] [--no-follow] [--json]", Short: "Stream a session's transcript as activity"},
	Long: `Follows a Claude Code session's transcript (located from its registration,
then ~/.claude/projects/<slug>/, then a scan), or a Codex thread's rollout
($CODEX_HOME/sessions/.../rollout-*-<thread id>.jsonl), and prints what the
session does: thinking, tool calls, reply text, end of turn, and chat
deliveries (with the message's text). It follows from the end of the file;
--from-start starts at its beginning. --no-follow stops at the end: alone, it
prints the session's last 3 turns (the one in progress included), with
--from-start the whole file. --json prints one activity object per line.`,
}

var Wait = &Command{
	Entry: Entry{Name: "wait", Usage: "--session ID [--once]", Short: "Block until a chat message arrives, claim it and print it (Monitor lane)"},
	Long: `The Monitor lane: a session arms Claude Code's Monitor tool on this command.
It watches the inbox (fsnotify), claims each message while the session is not in
a turn, and prints its framed text as one write. --once exits after the first
message. Claiming is by rename, so it is safe beside the hooks. When its
output is closed (nobody reads it), the message goes back to the inbox and
wait exits 1.`,
}

var Hook = &Command{
	Entry:       Entry{Name: "hook", Usage: strings.Join(hookNames(), "|") + " [flags]", Short: "Claude Code hooks that deliver chat messages"},
	Long:        hookHelp(),
	Subcommands: hookNames(),
	Dispatch:    true,
}

var Serve = &Command{
	Entry: Entry{Name: "serve", Usage: "[--port N] [--open] [--path DIR]", Short: "Serve the room's second screen (timeline, context, composer, chat) on localhost, behind a per-start secret"},
	Long: `Serves the workspace's page at http://127.0.0.1:PORT/ (default 4181): the Agent
Room's timeline (conversation.jsonl, live, grouped by turn, filterable by role and
kind, with plan.md, handoff.md, review.md and saved prompts opened read-only), the
room's context panel (active agent, plan age and gate, budget, changed files, last
run, the orchestrator's queue), and a chat with a running Claude Code session: pick
a session, type a message, and its reply streams back on the page. Messages go
through the same session-chat inbox as 'relay-baton send' and the room, so all of
them can run at once without losing or duplicating a message.

Inside a git repository the page is also a second room: its composer takes what
the room's prompt takes (text for the active agent, /plan, /execute, /continue,
/review, /status, ...), run by the same engine. An agent starts only after its
preview, the one the terminal shows, is confirmed with Run; the click names the
preview (its id and a hash of what was shown), and a stale one (plan.md or HEAD
changed) is refused and previewed again. Cancel runs nothing; Stop ends a run as
Ctrl-C does. /apply and /undo stay in the terminal room (relay-baton chat). One
agent run at a time per repository, whichever screen starts it: the other says
which run (pid, command, screen) holds .ai-session/run.lock.

Each start makes a new secret and prints the page's address with it,
http://127.0.0.1:PORT/?token=SECRET: open that whole address (--open does, through
a file only you can read, so the secret is on no command line). The first load
keeps the secret in a cookie (HttpOnly, SameSite=Strict) and drops it from the
address. Every route, the page and every /api/ read, stream and post, answers 401
without it, so other accounts on this machine, which reach 127.0.0.1 too, can
neither read the chat nor send as you. Scripts pass it as
'Authorization: Bearer SECRET' or ?token=SECRET. It is never logged.

The server listens on 127.0.0.1 only (there is no host option), answers only
its own page (every /api/ request from another site's page, reads and streams
included, is refused 403, with the cookie or not), refuses non-JSON posts and
bodies slower than 10 s, and is not a daemon: it runs until Ctrl-C; the next
start has a new secret. Sessions become chat-capable once they start with the
hooks installed ('relay-baton hook install').`,
}

var Selftest = &Command{
	Entry: Entry{Name: "selftest", Usage: "[--agent claude|codex] [--json] [--keep] [--step-timeout DURATION]", Short: "Check the installed claude and codex CLIs against the contracts relay-baton relies on"},
	Long: `Runs the installed claude and codex (resolved as for real runs: RELAY_BATON_CLAUDE /
RELAY_BATON_CODEX, else PATH) against a mock model API on 127.0.0.1, in a temporary HOME and
CODEX_HOME, and checks what relay-baton depends on: stream-json and exec --json output,
hook payloads and environment (with the messaging socket), the Stop hook's delivery,
transcript and rollout shapes (read with relay-baton's own parsers), resume, Codex hook
trust, the codex queue command line and the app-server requests the steer lane sends. One line per contract: ok, changed: what, or
skipped: why. Run it after upgrading a CLI.

It never reads or writes your HOME, sessions or settings and needs no network. Each CLI
run is bounded by --step-timeout (default 2m). --keep leaves the temporary folder for a
look at what the CLIs wrote. --json prints {clis, checks, dir}.

Exit 0 when every contract holds (or was skipped), 1 when one changed, 2 on a usage error.`,
}

var Version = &Command{
	Entry: Entry{Name: "version", Usage: "[--json]", Short: "Print the version and the commit it was built from"},
	Long: `Prints the module version and, for a binary built from a git checkout (go install . or
go build in the clone), the commit, its time and whether the work tree had local changes,
from the build information Go records. --version prints the same line.`,
	Run: runVersion,
}

var Completion = &Command{
	Entry: Entry{Name: "completion", Usage: "bash|zsh|fish|powershell", Short: "Print a shell completion script"},
	Long: `Prints a completion script for bash, zsh, fish or PowerShell, generated from the same
command table that drives dispatch and --help: commands and aliases, each command's flags,
flag values (--color auto|always|never, --kind and --role of replay, --diet, --agent,
--to, --scope) and session ids for --session (from 'relay-baton targets'; for replay,
from the conversation log). The bash script needs no bash-completion package.

Install, with one of these lines (bash, zsh, fish, PowerShell's profile):

` + "\techo 'source <(relay-baton completion bash)' >> ~/.bashrc\n" +
		"\techo 'source <(relay-baton completion zsh)' >> ~/.zshrc\n" +
		"\trelay-baton completion fish > ~/.config/fish/completions/relay-baton.fish\n" +
		"\trelay-baton completion powershell >> $PROFILE\n" + `
or, for this shell only:

` + "\tsource <(relay-baton completion bash)",
	Subcommands: []string{"bash", "zsh", "fish", "powershell"},
	Run:         runCompletion,
}

var Help = &Command{
	Entry: Entry{Name: "help", Usage: "[command]", Short: "Show help for relay-baton or one command"},
	Run:   runHelp,
}

// Complete answers the dynamic completions of the scripts (session ids);
// hidden.
var Complete = &Command{
	Entry: Entry{Name: "__complete", Usage: "sessions|replay-sessions", Short: "Dynamic values for the completion scripts", Hidden: true},
}
