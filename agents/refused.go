package agents

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Arguments a repository's config may not pass to an agent, even trusted:
// those that start processes (MCP servers, notify programs, hooks,
// plugins, provider auth commands), widen what the agent may do (tool
// allow-lists, extra or other directories, sandbox, approval and
// permission settings, settings files, profiles that layer any of these),
// send the work elsewhere (other endpoints, cloud or background sessions),
// or take over what relay-baton sets per run (output format, conversation,
// working directory). The lists follow `claude --help` (2.1.328) and
// `codex exec --help` and codex's config keys (0.169.0). A flag is caught
// as --flag, --flag=value and, for short flags, -xVALUE; a codex config
// key in -c KEY=VAL, -cKEY=VAL, --config KEY=VAL and --config=KEY=VAL,
// also with quoted or spaced key parts, and when set through a parent
// table (-c 'mcp_servers={x={command="sh"}}').

// Refusal is one refused argument and why.
type Refusal struct {
	Arg string `json:"arg"`
	Why string `json:"why"`
}

// String is the argument (Go-quoted when it holds anything but printable
// text, so that no control byte of a repository's file reaches a
// terminal) and why.
func (r Refusal) String() string {
	a := r.Arg
	if !utf8.ValidString(a) || strings.IndexFunc(a, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		a = strconv.Quote(a)
	}
	return a + " (" + r.Why + ")"
}

// JoinRefused lists refusals for a message.
func JoinRefused(rs []Refusal) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	return strings.Join(parts, ", ")
}

const (
	whyProcess = "starts a process"
	whyWiden   = "widens the agent's permissions"
	whyOwn     = "relay-baton sets it per run"
	whyElse    = "sends the work elsewhere"
	whyWrite   = "writes outside the run"
)

// claudeRefused are claude's long flags refused, by name.
var claudeRefused = map[string]string{
	"--mcp-config":                         whyProcess + " (MCP servers)",
	"--strict-mcp-config":                  whyProcess + " (MCP servers)",
	"--plugin-dir":                         whyProcess + " (plugins: hooks, MCP servers)",
	"--plugin-url":                         whyProcess + " (plugins: hooks, MCP servers)",
	"--settings":                           whyWiden + " (settings: hooks, permissions)",
	"--setting-sources":                    whyWiden + " (settings)",
	"--agents":                             whyWiden + " (agents with their own tools and permission mode)",
	"--agent":                              whyWiden + " (an agent with its own tools and permission mode)",
	"--allowedtools":                       whyWiden + " (tool allow-list)",
	"--allowed-tools":                      whyWiden + " (tool allow-list)",
	"--tools":                              whyWiden + " (tool set)",
	"--add-dir":                            whyWiden + " (more directories)",
	"--permission-mode":                    whyOwn + " (permission mode per role)",
	"--permission-prompt-tool":             whyWiden + " (permission prompts answered by a tool)",
	"--permission-prompts":                 whyWiden + " (who answers permission prompts)",
	"--dangerously-skip-permissions":       whyWiden,
	"--allow-dangerously-skip-permissions": whyWiden,
	"--chrome":                             whyWiden + " (browser control)",
	"--ide":                                whyWiden + " (IDE connection)",
	"--remote-control":                     whyWiden + " (remote control)",
	"--remote-control-session-name-prefix": whyWiden + " (remote control)",
	"--bg":                                 whyOwn + " (a background session outlives the run)",
	"--background":                         whyOwn + " (a background session outlives the run)",
	"--cloud":                              whyElse + " (cloud session)",
	"--teleport":                           whyElse + " (cloud session)",
	"--environment":                        whyElse + " (cloud session)",
	"--desktop":                            whyElse + " (desktop app)",
	"--from-pr":                            whyOwn + " (conversation)",
	"--continue":                           whyOwn + " (conversation)",
	"--resume":                             whyOwn + " (conversation)",
	"--session-id":                         whyOwn + " (conversation)",
	"--fork-session":                       whyOwn + " (conversation)",
	"--print":                              whyOwn,
	"--output-format":                      whyOwn,
	"--input-format":                       whyOwn,
	"--worktree":                           whyWrite + " (a git worktree)",
	"--tmux":                               whyWrite + " (a git worktree)",
	"--debug-file":                         whyWrite + " (a file anywhere)",
	"--file":                               whyWrite + " (downloads files)",
	"--dangerously-load-development-channels": whyProcess + " (MCP channel servers)",
}

// claudeShort are claude's refused short flags; claudeShortValue its short
// flags that take a value (the rest of the word is that value).
var (
	claudeShort      = map[byte]string{'c': "--continue", 'r': "--resume", 'p': "--print", 'w': "--worktree"}
	claudeShortValue = map[byte]bool{'d': true, 'n': true, 'r': true}
)

// codexRefused are codex exec's long flags refused, by name.
var codexRefused = map[string]string{
	"--profile": whyWiden + " (a profile layers any setting)",
	"--sandbox": whyOwn + " (sandbox per role)",
	"--dangerously-bypass-approvals-and-sandbox": whyWiden,
	"--dangerously-bypass-hook-trust":            whyProcess + " (untrusted hooks)",
	"--full-auto":                                whyWiden,
	"--yolo":                                     whyWiden,
	"--approve-for-me":                           whyWiden + " (approvals)",
	"--add-dir":                                  whyWiden + " (more writable directories)",
	"--cd":                                       whyOwn + " (working root)",
	"--trust":                                    whyWiden + " (trusts the project, MCP commands outside the sandbox)",
	"--ignore-rules":                             whyWiden + " (exec policy rules)",
	"--worktree":                                 whyWrite + " (a git worktree)",
	"--output-last-message":                      whyWrite + " (a file anywhere)",
	"--json":                                     whyOwn,
	"--oss":                                      whyElse + " (another provider)",
	"--local-provider":                           whyElse + " (another provider)",
	"--cyber-access-program":                     whyWiden,
	"--enable":                                   whyWiden + " (features)",
	"--disable":                                  whyWiden + " (features)",
}

// codexShort maps codex exec's short flags (all but -h and -V take a
// value) to their long names; "" is allowed.
var codexShort = map[byte]string{'c': "--config", 'p': "--profile", 's': "--sandbox", 'C': "--cd", 'o': "--output-last-message", 'i': "", 'm': ""}

// codexKeys are codex config keys (-c) refused, by their first part;
// codexSubKeys by a later part (model_providers.<name>.auth).
var codexKeys = map[string]string{
	"mcp_servers":                        whyProcess + " (MCP server)",
	"notify":                             whyProcess + " (notify program)",
	"hooks":                              whyProcess + " (hooks)",
	"plugins":                            whyProcess + " (plugins)",
	"marketplaces":                       whyProcess + " (plugins)",
	"js_repl_node_path":                  whyProcess + " (a program path)",
	"zsh_path":                           whyProcess + " (a program path)",
	"model_providers":                    whyProcess + " or " + whyElse + " (a provider's auth command and endpoint)",
	"openai_base_url":                    whyElse,
	"chatgpt_base_url":                   whyElse,
	"experimental_thread_store_endpoint": whyElse,
	"otel":                               whyElse + " (telemetry exporter)",
	"profile":                            whyWiden + " (a profile layers any setting)",
	"profiles":                           whyWiden + " (a profile layers any setting)",
	"sandbox_mode":                       whyOwn + " (sandbox per role)",
	"sandbox_workspace_write":            whyWiden + " (sandbox: writable roots, network)",
	"sandbox_permissions":                whyWiden + " (sandbox)",
	"sandbox_policy":                     whyWiden + " (sandbox)",
	"approval_policy":                    whyWiden + " (approvals)",
	"approvals_reviewer":                 whyWiden + " (approvals)",
	"auto_review":                        whyWiden + " (approvals)",
	"permissions":                        whyWiden + " (permission profiles)",
	"default_permissions":                whyWiden + " (permission profiles)",
	"shell_environment_policy":           whyWiden + " (the environment of commands)",
	"allow_login_shell":                  whyWiden + " (login shell startup files)",
	"projects":                           whyWiden + " (project trust)",
	"windows":                            whyWiden + " (sandbox)",
	"computer_use":                       whyWiden + " (computer use)",
	"browser_use":                        whyWiden + " (browser use)",
	"features":                           whyWiden + " (features)",
	"tools":                              whyWiden + " (tools)",
	"agents":                             whyWiden + " (sub-agents)",
	"log_dir":                            whyWrite,
	"sqlite_home":                        whyWrite,
	"history":                            whyWrite,
	"experimental_use_unified_exec_tool": whyWiden + " (tools)",
}

// RefusedArgs returns the arguments of a repository config's extra
// arguments for agent that it may not pass (see above), in order; nil when
// there are none. A "--" (everything after it would be the prompt) is
// refused too.
func RefusedArgs(agent string, argv []string) []Refusal {
	var out []Refusal
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		if a == "--" {
			out = append(out, Refusal{a, whyOwn + " (the prompt follows it)"})
			continue
		}
		switch agent {
		case Claude:
			out = append(out, claudeRefusal(a)...)
		case Codex:
			rs, consumed := codexRefusal(a, argv[i+1:])
			out = append(out, rs...)
			i += consumed
		}
	}
	return out
}

func claudeRefusal(a string) []Refusal {
	if strings.HasPrefix(a, "--") {
		name, _, _ := strings.Cut(a, "=")
		if why, ok := claudeRefused[strings.ToLower(name)]; ok {
			return []Refusal{{a, why}}
		}
		return nil
	}
	if len(a) < 2 || a[0] != '-' {
		return nil
	}
	// Short flags, possibly grouped (-pc): a refused letter anywhere
	// before a letter that takes the rest of the word as its value.
	for j := 1; j < len(a); j++ {
		if long, ok := claudeShort[a[j]]; ok {
			return []Refusal{{a, claudeRefused[long] + " (" + long + ")"}}
		}
		if claudeShortValue[a[j]] {
			break
		}
	}
	return nil
}

// codexRefusal checks one argument; rest follows it (a -c KEY=VAL takes
// the next one). consumed is how many of rest it used.
func codexRefusal(a string, rest []string) (rs []Refusal, consumed int) {
	var name, value string
	var hasValue bool
	switch {
	case strings.HasPrefix(a, "--"):
		name, value, hasValue = strings.Cut(a, "=")
		name = strings.ToLower(name)
	case len(a) >= 2 && a[0] == '-':
		j := 1
		for j < len(a) && (a[j] == 'h' || a[j] == 'V') {
			j++
		}
		if j == len(a) {
			return nil, 0
		}
		long, known := codexShort[a[j]]
		if !known {
			return nil, 0
		}
		if long == "" {
			return nil, 0 // -m MODEL, -i FILE: allowed (their value is the next word or the rest)
		}
		name = long
		if j+1 < len(a) {
			value, hasValue = strings.TrimPrefix(a[j+1:], "="), true
		}
	default:
		return nil, 0
	}
	if name == "--config" {
		if !hasValue && len(rest) > 0 {
			value, hasValue, consumed = rest[0], true, 1
		}
		shown := a
		if consumed == 1 {
			shown = a + " " + value
		}
		if why, key := codexKeyRefusal(value); why != "" {
			return []Refusal{{shown, key + ": " + why}}, consumed
		}
		return nil, consumed
	}
	if why, ok := codexRefused[name]; ok {
		return []Refusal{{a, why}}, 0
	}
	return nil, 0
}

// codexKeyRefusal checks the KEY of a -c KEY=VALUE override: why it is
// refused ("" when it is not) and the key as normalized.
func codexKeyRefusal(kv string) (why, key string) {
	k, _, _ := strings.Cut(kv, "=")
	parts := splitTOMLKey(k)
	key = strings.Join(parts, ".")
	if len(parts) == 0 {
		return "", key
	}
	if why, ok := codexKeys[parts[0]]; ok {
		return why, key
	}
	return "", key
}

// splitTOMLKey splits a dotted TOML key into its parts, unquoted,
// trimmed and lower-cased ("mcp_servers" . "x" -> mcp_servers, x).
func splitTOMLKey(k string) []string {
	var parts []string
	var cur strings.Builder
	var quote byte
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else if c == '\\' && quote == '"' && i+1 < len(k) {
				i++
				cur.WriteByte(k[i])
			} else {
				cur.WriteByte(c)
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '.':
			parts = append(parts, strings.ToLower(strings.TrimSpace(cur.String())))
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	parts = append(parts, strings.ToLower(strings.TrimSpace(cur.String())))
	return parts
}
