package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

// Shell completion is generated from the command table: each command's
// flags are read from the flag set its own Run function defines (run in a
// probe that stops at Parse, before anything happens), so dispatch, --help
// and completion cannot drift apart.

func runCompletion(inv *Invocation) error {
	fs := inv.Flags()
	if err := inv.Parse(fs); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return &UsageError{Msg: "completion needs one shell: bash, zsh, fish or powershell", Hint: "relay-baton completion --help"}
	}
	return WriteCompletion(inv.IO.Out, inv.Table, fs.Arg(0))
}

// WriteCompletion writes t's completion script for shell (bash, zsh, fish
// or powershell).
func WriteCompletion(w io.Writer, t *Table, shell string) error {
	specs := completionSpecs(t)
	switch shell {
	case "bash":
		return writeBash(w, t, specs, false)
	case "zsh":
		return writeBash(w, t, specs, true)
	case "fish":
		return writeFish(w, specs)
	case "powershell":
		return writePowerShell(w, t, specs)
	}
	return &UsageError{Msg: fmt.Sprintf("completion: unknown shell %q: choose bash, zsh, fish or powershell", shell), Hint: "relay-baton completion --help"}
}

// compFlag is one flag as completion sees it.
type compFlag struct {
	Long, Short string
	Usage       string
	Value       bool     // takes a value
	List        bool     // a comma-separated list (string slice)
	Values      []string // fixed values
	Dynamic     string   // "sessions", "replay-sessions", "dirs", "files" or ""
}

// compSpec is one command (or "hook install") as completion sees it.
type compSpec struct {
	Key   string   // "replay", "hook install"
	Names []string // name and aliases (the last word of Key)
	Short string
	Flags []compFlag
	Args  []string // completions of the first positional argument
	Sub   bool     // Args are subcommands with specs of their own
}

// flagValues are the values of flag name: fixed (t.Values) or found by
// the script ("sessions", "dirs", "files").
func flagValues(t *Table, name string) ([]string, string) {
	switch name {
	case "session", "set-lead":
		return nil, "sessions"
	case "path", "workspace":
		return nil, "dirs"
	case "file":
		return nil, "files"
	}
	return t.Values[name], ""
}

// probeFlags returns the flag set c's Run defines for args (e.g.
// ["install"] for hook install), or nil when it defines none (or has no
// Run). The probe answers --help into a discarded writer; inv.Parse stops
// it there.
func probeFlags(t *Table, c *Command, args ...string) *pflag.FlagSet {
	if c.Run == nil {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := &flagProbe{}
	io := &IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard, probe: p}
	_ = c.Run(&Invocation{Ctx: ctx, IO: io, Cmd: c, Args: append(args, "--help"), Table: t})
	return p.fs
}

// flagProbe captures the flag set of a probed command.
type flagProbe struct{ fs *pflag.FlagSet }

func specFlags(t *Table, fs *pflag.FlagSet) []compFlag {
	var out []compFlag
	if fs == nil {
		return nil
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		cf := compFlag{Long: f.Name, Short: f.Shorthand, Usage: f.Usage}
		typ := f.Value.Type()
		cf.Value = typ != "bool" && f.NoOptDefVal == ""
		cf.List = strings.HasSuffix(typ, "Slice") || strings.HasSuffix(typ, "Array")
		if cf.Value {
			cf.Values, cf.Dynamic = flagValues(t, f.Name)
		}
		out = append(out, cf)
	})
	out = append(out, compFlag{Long: "help", Short: "h", Usage: "help for this command"})
	return out
}

// completionSpecs builds the completion model from the commands table.
func completionSpecs(t *Table) []compSpec {
	var specs []compSpec
	for _, c := range t.Commands {
		if c.Hidden {
			continue
		}
		s := compSpec{Key: c.Name, Names: c.Names(), Short: c.Short, Flags: specFlags(t, probeFlags(t, c))}
		switch {
		case c.Name == "help":
			s.Args = t.VisibleNames()
		default:
			s.Args, s.Sub = c.Subcommands, c.Dispatch
		}
		specs = append(specs, s)
		if c.Dispatch {
			for _, sub := range c.Subcommands {
				specs = append(specs, compSpec{Key: c.Name + " " + sub, Names: []string{sub}, Flags: specFlags(t, probeFlags(t, c, sub))})
			}
		}
	}
	return specs
}

// globalFlags are the flags accepted before the command.
var globalFlags = []compFlag{
	{Long: "color", Value: true, Values: []string{"auto", "always", "never"}, Usage: "colour output"},
	{Long: "help", Short: "h", Usage: "help for relay-baton"},
	{Long: "version", Short: "v", Usage: "print the version"},
}

// flagNames are the long names of fl, with their dashes.
func flagNames(fl []compFlag) []string {
	var out []string
	for _, f := range fl {
		out = append(out, "--"+f.Long)
	}
	return out
}

func flagWords(fl []compFlag) string {
	var w []string
	for _, f := range fl {
		w = append(w, "--"+f.Long)
		if f.Short != "" {
			w = append(w, "-"+f.Short)
		}
	}
	return strings.Join(w, " ")
}

func valuedWords(fl []compFlag) string {
	var w []string
	for _, f := range fl {
		if f.Value {
			w = append(w, "--"+f.Long)
			if f.Short != "" {
				w = append(w, "-"+f.Short)
			}
		}
	}
	return strings.Join(w, " ")
}

// shq quotes s for a POSIX shell, always.
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// writeBash writes the bash script (zsh: the same functions, run by zsh's
// bashcompinit, which emulates complete and compgen).
func writeBash(w io.Writer, t *Table, specs []compSpec, zsh bool) error {
	var b strings.Builder
	if zsh {
		b.WriteString("#compdef relay-baton\n# zsh completion for relay-baton, generated by `relay-baton completion zsh` from its command table.\n")
		b.WriteString("# It runs the bash completion functions below through zsh's bashcompinit.\n")
		b.WriteString("autoload -U +X bashcompinit && bashcompinit\n\n")
	} else {
		b.WriteString("# bash completion for relay-baton, generated by `relay-baton completion bash` from its command table.\n")
		b.WriteString("# Plain bash (4+) is enough: no bash-completion package is needed. Install:\n#   source <(relay-baton completion bash)\n\n")
	}
	fmt.Fprintf(&b, "_relay_baton_commands=%s\n\n", shq(strings.Join(t.VisibleNames(), " ")))

	// key: the command (by any of its names), or "hook <sub>".
	b.WriteString("# _relay_baton_key CMD [SUB]: the completion key of a command word.\n_relay_baton_key() {\n  case \"$1\" in\n")
	for _, s := range specs {
		if strings.Contains(s.Key, " ") {
			continue
		}
		fmt.Fprintf(&b, "    %s) REPLY=%s ;;\n", strings.Join(s.Names, "|"), s.Key)
	}
	b.WriteString("    *) REPLY= ;;\n  esac\n}\n\n")

	b.WriteString("# _relay_baton_spec KEY: sets _rb_flags (all), _rb_valued (taking a value), _rb_args, _rb_sub.\n_relay_baton_spec() {\n  _rb_flags=; _rb_valued=; _rb_args=; _rb_sub=\n  case \"$1\" in\n")
	for _, s := range specs {
		fmt.Fprintf(&b, "    %s)\n      _rb_flags=%s\n      _rb_valued=%s\n", shq(s.Key), shq(flagWords(s.Flags)), shq(valuedWords(s.Flags)))
		if len(s.Args) > 0 {
			fmt.Fprintf(&b, "      _rb_args=%s\n", shq(strings.Join(s.Args, " ")))
		}
		if s.Sub {
			b.WriteString("      _rb_sub=1\n")
		}
		b.WriteString("      ;;\n")
	}
	fmt.Fprintf(&b, "    '')\n      _rb_flags=%s\n      _rb_valued=%s\n      ;;\n", shq(flagWords(globalFlags)), shq(valuedWords(globalFlags)))
	b.WriteString("  esac\n}\n\n")

	b.WriteString("# _relay_baton_values KEY FLAG: sets _rb_vals (fixed values), _rb_dyn (how to find them) and _rb_list.\n_relay_baton_values() {\n  _rb_vals=; _rb_dyn=; _rb_list=\n  case \"$1 $2\" in\n")
	for _, s := range append(specs, compSpec{Key: "", Flags: globalFlags}) {
		for _, f := range s.Flags {
			if !f.Value || (len(f.Values) == 0 && f.Dynamic == "") {
				continue
			}
			dyn := f.Dynamic
			if dyn == "sessions" && s.Key == "replay" {
				dyn = "replay-sessions"
			}
			pat := shq(s.Key + " --" + f.Long)
			if f.Short != "" {
				pat += "|" + shq(s.Key+" -"+f.Short)
			}
			fmt.Fprintf(&b, "    %s) _rb_vals=%s; _rb_dyn=%s", pat, shq(strings.Join(f.Values, " ")), shq(dyn))
			if f.List {
				b.WriteString("; _rb_list=1")
			}
			b.WriteString(" ;;\n")
		}
	}
	// --color is accepted by every command.
	fmt.Fprintf(&b, "    *' --color') _rb_vals='auto always never' ;;\n")
	b.WriteString("  esac\n}\n\n")

	b.WriteString(bashMain)
	b.WriteString("\ncomplete -F _relay_baton relay-baton\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// bashMain is the completion function proper; the tables above feed it.
const bashMain = `_relay_baton() {
  # zsh (bashcompinit): index arrays from 0, split words as bash does.
  [[ -n ${ZSH_VERSION-} ]] && setopt localoptions ksharrays shwordsplit
  local cur prev key="" sub="" i w flagword="" prefix=""
  cur=${COMP_WORDS[COMP_CWORD]}
  prev=
  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD-1]}
  COMPREPLY=()
  # --flag=value: split on '=' by bash (COMP_WORDBREAKS), or one word.
  if [[ $cur == "=" && $prev == -* ]]; then
    flagword=$prev; cur=
  elif [[ $prev == "=" ]] && ((COMP_CWORD > 1)); then
    flagword=${COMP_WORDS[COMP_CWORD-2]}
  elif [[ $cur == --*=* ]]; then
    flagword=${cur%%=*}; prefix="$flagword="; cur=${cur#*=}
  fi
  # The command (and hook's subcommand): the first words that are not
  # flags or flag values.
  local REPLY skip=0 ckey=""
  _relay_baton_spec ""
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    if ((skip)); then skip=0; continue; fi
    case $w in
      =) continue ;;
      --*=*) continue ;;
      -*)
        [[ " $_rb_valued " == *" $w "* && ${COMP_WORDS[i+1]} != "=" ]] && skip=1
        [[ ${COMP_WORDS[i+1]} == "=" ]] && skip=1 && ((i++))
        continue ;;
    esac
    if [[ -z $ckey ]]; then
      _relay_baton_key "$w"; ckey=$REPLY
      [[ -z $ckey ]] && return 0
      key=$ckey
      _relay_baton_spec "$key"
    elif [[ -n $_rb_sub && -z $sub ]]; then
      sub=$w; key="$ckey $sub"
      _relay_baton_spec "$key"
    fi
  done
  # A flag's value.
  if [[ -z $flagword && $prev == -* && " $_rb_valued " == *" $prev "* ]]; then
    flagword=$prev
  fi
  if [[ -n $flagword ]]; then
    _relay_baton_values "$key" "$flagword"
    local vals=$_rb_vals lead=""
    case $_rb_dyn in
      sessions) vals=$("${COMP_WORDS[0]}" __complete sessions 2>/dev/null) ;;
      replay-sessions) vals=$("${COMP_WORDS[0]}" __complete replay-sessions 2>/dev/null) ;;
      dirs) type compopt >/dev/null 2>&1 && compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -d -- "$cur")); return 0 ;;
      files) type compopt >/dev/null 2>&1 && compopt -o filenames 2>/dev/null
             COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;
    esac
    if [[ -n $_rb_list && $cur == *,* ]]; then
      lead=${cur%,*},; cur=${cur##*,}
    fi
    COMPREPLY=($(compgen -W "$vals" -P "$prefix$lead" -- "$cur"))
    return 0
  fi
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$_rb_flags" -- "$cur"))
  elif [[ -z $key ]]; then
    COMPREPLY=($(compgen -W "$_relay_baton_commands" -- "$cur"))
  elif [[ -n $_rb_args && ( -z $_rb_sub || -z $sub ) ]]; then
    COMPREPLY=($(compgen -W "$_rb_args" -- "$cur"))
  fi
  return 0
}
`

// writeFish writes a fish script of complete commands.
func writeFish(w io.Writer, specs []compSpec) error {
	var b strings.Builder
	b.WriteString("# fish completion for relay-baton, generated by `relay-baton completion fish` from its command table.\n")
	b.WriteString("# Install: relay-baton completion fish > ~/.config/fish/completions/relay-baton.fish\n\n")
	b.WriteString("complete -c relay-baton -f\n")
	for _, f := range globalFlags {
		b.WriteString(fishFlag("__fish_use_subcommand", f, "", ""))
	}
	var top []string
	for _, s := range specs {
		if !strings.Contains(s.Key, " ") {
			top = append(top, s.Names...)
		}
	}
	for _, s := range specs {
		if strings.Contains(s.Key, " ") {
			continue
		}
		for _, n := range s.Names {
			fmt.Fprintf(&b, "complete -c relay-baton -n __fish_use_subcommand -a %s -d %s\n", shq(n), shq(s.Short))
		}
	}
	for _, s := range specs {
		cond := "__fish_seen_subcommand_from " + strings.Join(s.Names, " ")
		if parent, sub, ok := strings.Cut(s.Key, " "); ok {
			cond = "__fish_seen_subcommand_from " + parent + "; and __fish_seen_subcommand_from " + sub
		} else if s.Sub {
			cond += "; and not __fish_seen_subcommand_from " + strings.Join(s.Args, " ")
		}
		dyn := "sessions"
		if s.Key == "replay" {
			dyn = "replay-sessions"
		}
		for _, f := range s.Flags {
			b.WriteString(fishFlag(cond, f, dyn, s.Key))
		}
		if len(s.Args) > 0 {
			argCond := cond
			if s.Sub {
				argCond = "__fish_seen_subcommand_from " + strings.Join(s.Names, " ") + "; and not __fish_seen_subcommand_from " + strings.Join(s.Args, " ")
			}
			fmt.Fprintf(&b, "complete -c relay-baton -n %s -a %s\n", shq(argCond), shq(strings.Join(s.Args, " ")))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func fishFlag(cond string, f compFlag, sessions, key string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "complete -c relay-baton -n %s -l %s", shq(cond), f.Long)
	if f.Short != "" {
		fmt.Fprintf(&b, " -s %s", f.Short)
	}
	if f.Value {
		switch {
		case len(f.Values) > 0:
			fmt.Fprintf(&b, " -x -a %s", shq(strings.Join(f.Values, " ")))
		case f.Dynamic == "sessions":
			fmt.Fprintf(&b, " -x -a %s", shq("(relay-baton __complete "+sessions+" 2>/dev/null)"))
		case f.Dynamic == "dirs":
			b.WriteString(" -x -a '(__fish_complete_directories)'")
		case f.Dynamic == "files":
			b.WriteString(" -r -F")
		default:
			b.WriteString(" -x")
		}
	}
	if f.Usage != "" {
		fmt.Fprintf(&b, " -d %s", shq(firstSentence(f.Usage)))
	}
	b.WriteString("\n")
	return b.String()
}

func firstSentence(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 70 {
		s = s[:67] + "..."
	}
	return s
}
