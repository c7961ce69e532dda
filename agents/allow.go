package agents

import (
	"fmt"
	"strings"
)

// A repository's .relay-baton.json, even trusted, may pass an agent only
// the arguments listed here (an allow-list: the CLIs add flags every
// release, and a deny-list always lags): the model, its effort or
// reasoning level and a fallback model, each with a value that is a plain
// word (no path, URL, option or setting can hide in it). Its other fields
// are the run's timeout and allowEnv. Anything else is refused by name at
// `relay-baton trust` time and again when the file is loaded. More
// arguments belong in the user's own config (UserConfigName, in TrustDir),
// which a repository cannot write.

// AllowedFlag is one argument a repository's config may pass to an agent.
type AllowedFlag struct {
	Agent string `json:"agent"`
	Flag  string `json:"flag"`            // the long flag (for a codex config key: --config)
	Short string `json:"short,omitempty"` // its short form ("" none)
	Key   string `json:"key,omitempty"`   // a codex config key set with -c KEY=VALUE ("" for a plain flag)
	Value string `json:"value"`           // what its value is: MODEL, LEVEL, MODELS
}

// AllowedFlags are the arguments a repository's config may pass, per
// agent (selftest checks that each flag is still in the CLI's --help).
var AllowedFlags = []AllowedFlag{
	{Agent: Claude, Flag: "--model", Value: "MODEL"},
	{Agent: Claude, Flag: "--effort", Value: "LEVEL"},
	{Agent: Claude, Flag: "--fallback-model", Value: "MODELS"},
	{Agent: Codex, Flag: "--model", Short: "-m", Value: "MODEL"},
	{Agent: Codex, Flag: "--config", Short: "-c", Key: "model", Value: "MODEL"},
	{Agent: Codex, Flag: "--config", Short: "-c", Key: "model_reasoning_effort", Value: "LEVEL"},
}

// String is the flag as a person writes it: --model MODEL,
// -c model_reasoning_effort=LEVEL.
func (f AllowedFlag) String() string {
	if f.Key != "" {
		return f.Short + " " + f.Key + "=" + f.Value
	}
	if f.Short != "" {
		return f.Flag + " (" + f.Short + ") " + f.Value
	}
	return f.Flag + " " + f.Value
}

// AllowedSummary lists what a repository's config may set, for messages.
func AllowedSummary() string {
	var parts []string
	for _, agent := range []string{Claude, Codex} {
		var fl []string
		for _, f := range AllowedFlags {
			if f.Agent == agent {
				fl = append(fl, f.String())
			}
		}
		parts = append(parts, agent+".args: "+strings.Join(fl, ", "))
	}
	return strings.Join(parts, "; ") + `; "timeout"; "allowEnv"`
}

// maxValue caps an allowed flag's value (a model name, a level).
const maxValue = 100

// plainValue reports whether v can be an allowed flag's value: a word of
// letters, digits and . _ - [ ] (and commas between models, for MODELS),
// starting with a letter or digit. No slash, colon, space, quote, @ or =:
// a path, URL, option or setting cannot be written with it.
func plainValue(kind, v string) bool {
	if v == "" || len(v) > maxValue {
		return false
	}
	for i, r := range v {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case i > 0 && (r == '.' || r == '_' || r == '-' || r == '[' || r == ']'):
		case i > 0 && r == ',' && kind == "MODELS":
		default:
			return false
		}
	}
	return !strings.Contains(v, "..")
}

// tomlWord is a codex -c value: a bare word or one quoted string (its
// quotes removed); ok false for anything else (arrays, tables, escapes).
func tomlWord(v string) (string, bool) {
	v = strings.TrimSpace(v)
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		v = v[1 : len(v)-1]
	}
	return v, v != "" && !strings.ContainsAny(v, `"'\`)
}

// NotAllowedArgs returns the arguments of a repository config's args for
// agent that are not on the allow-list (AllowedFlags), or whose value is
// not a plain word, in order; nil when every one is allowed. Each allowed
// flag may appear once.
func NotAllowedArgs(agent string, argv []string) []Refusal {
	var out []Refusal
	seen := map[string]bool{}
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		f, value, consumed, ok := matchAllowed(agent, a, argv[i+1:])
		if !ok && agent == Codex && (a == "-c" || a == "--config") && i+1 < len(argv) {
			consumed = 1 // another config key: refused with its value
		}
		words := argv[i : i+1+consumed]
		shown := strings.Join(words, " ")
		i += consumed
		switch {
		case !ok:
			out = append(out, Refusal{shown, notAllowedWhy(agent, words)})
		case !plainValue(f.Value, value):
			out = append(out, Refusal{shown, fmt.Sprintf("%s must be a plain %s name (letters, digits, . _ - [ ])", f.Flag+keySuffix(f), strings.ToLower(f.Value))})
		case seen[f.String()]:
			out = append(out, Refusal{shown, "given twice"})
		default:
			seen[f.String()] = true
		}
	}
	return out
}

func keySuffix(f AllowedFlag) string {
	if f.Key != "" {
		return " " + f.Key
	}
	return ""
}

// notAllowedWhy says why a is refused: what the deny-list knew of it
// (RefusedArgs), or only that it is not on the allow-list.
func notAllowedWhy(agent string, words []string) string {
	if rs := RefusedArgs(agent, words); len(rs) > 0 {
		return "not allowed: " + rs[0].Why
	}
	if bad := ForbiddenArgs(words); len(bad) > 0 {
		return "not allowed: disables the agent's permission checks or sandbox"
	}
	return "not allowed"
}

// matchAllowed matches a (and, for a flag whose value is the next word,
// rest[0]) against agent's allowed flags: which flag, its value, and how
// many words of rest it took.
func matchAllowed(agent, a string, rest []string) (f AllowedFlag, value string, consumed int, ok bool) {
	next := func() (string, int, bool) {
		if len(rest) == 0 {
			return "", 0, false
		}
		return rest[0], 1, true
	}
	for _, cand := range AllowedFlags {
		if cand.Agent != agent {
			continue
		}
		var v string
		var n int
		var has bool
		switch {
		case a == cand.Flag || cand.Short != "" && a == cand.Short:
			v, n, has = next()
		case strings.HasPrefix(a, cand.Flag+"="):
			v, has = a[len(cand.Flag)+1:], true
		case cand.Short != "" && strings.HasPrefix(a, cand.Short) && len(a) > len(cand.Short):
			v, has = strings.TrimPrefix(a[len(cand.Short):], "="), true
		default:
			continue
		}
		if !has {
			return cand, "", 0, true // the value is missing: not a plain word
		}
		if cand.Key == "" {
			return cand, v, n, true
		}
		k, val, isKV := strings.Cut(v, "=")
		parts := splitTOMLKey(k)
		if !isKV || len(parts) != 1 || parts[0] != cand.Key {
			continue // another -c key: maybe the next allowed one
		}
		word, okw := tomlWord(val)
		if !okw {
			return cand, "\x00", n, true
		}
		return cand, word, n, true
	}
	return AllowedFlag{}, "", 0, false
}

// HelpArgs are the arguments that print the help listing agent's allowed
// flags (claude --help; codex exec --help, as relay-baton runs codex exec).
func HelpArgs(agent string) []string {
	if agent == Codex {
		return []string{"exec", "--help"}
	}
	return []string{"--help"}
}

// MissingAllowedFlags returns the allowed flags of agent (AllowedFlags:
// each long and short form) that help, the CLI's --help text, does not
// list as a flag, in order; nil when it lists them all. A codex config
// key is not in the help: its flag (-c, --config) is checked.
func MissingAllowedFlags(agent string, help []byte) []string {
	listed := map[string]bool{}
	for _, line := range strings.Split(string(help), "\n") {
		// A flag is listed at the start of its line: "  -m, --model <MODEL>".
		for _, w := range strings.Fields(line) {
			w = strings.TrimRight(w, ",")
			if !strings.HasPrefix(w, "-") {
				break
			}
			name, _, _ := strings.Cut(w, "=")
			listed[name] = true
		}
	}
	var missing []string
	seen := map[string]bool{}
	for _, f := range AllowedFlags {
		if f.Agent != agent {
			continue
		}
		for _, name := range []string{f.Flag, f.Short} {
			if name != "" && !listed[name] && !seen[name] {
				seen[name] = true
				missing = append(missing, name)
			}
		}
	}
	return missing
}
