// Package selftestcmd holds `relay-baton selftest`: its row of the
// command table, its flags and its Run (the checks themselves are package
// selftest's).
package selftestcmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/cli"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/selftest"
)

// Selftest is its command's row of the table (usage, help) and its Run.
var Selftest = &cli.Command{
	Entry: cli.Entry{Name: "selftest", Usage: "[--agent claude|codex] [--json] [--keep] [--step-timeout DURATION]", Short: "Check the installed claude and codex CLIs against the contracts relay-baton relies on"},
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
	Run: runSelftest,
}

func runSelftest(inv *cli.Invocation) error {
	fs := inv.Flags()
	// The CLIs' hooks in a selftest run are `relay-baton selftest
	// --hook-recorder`: they record into the folder the run names in
	// HookDirEnv, and do nothing without it (never a selftest of their own).
	recorder := fs.Bool(selftest.HookFlag, false, "")
	_ = fs.MarkHidden(selftest.HookFlag)
	js := fs.Bool("json", false, "print the report as JSON: {clis, checks, dir}")
	agent := fs.String("agent", "", "check only this CLI: claude or codex (default both)")
	step := fs.Duration("step-timeout", selftest.DefaultStep, "hang guard of each CLI run")
	keep := fs.Bool("keep", false, "keep the temporary folder (HOME, CODEX_HOME, transcripts, hook payloads) and print its path")
	if err := inv.Parse(fs); err != nil {
		return err
	}
	if *recorder {
		dir := os.Getenv(selftest.HookDirEnv)
		if dir == "" || !filepath.IsAbs(dir) {
			return nil
		}
		if fs.Arg(0) == selftest.ExecFormArg { // started by an exec-form hook
			dir = filepath.Join(dir, selftest.ExecFormArg)
		}
		return selftest.RecordHook(dir, inv.IO.In, inv.IO.Out)
	}
	if fs.NArg() > 0 {
		return &cli.UsageError{Msg: fmt.Sprintf("selftest takes no arguments (got %q)", fs.Arg(0)), Hint: "relay-baton selftest --help"}
	}
	o := selftest.Options{Step: *step, Keep: *keep}
	switch *agent {
	case "":
	case "claude", "codex":
		o.Agents = []string{*agent}
	default:
		return &cli.UsageError{Msg: fmt.Sprintf("--agent %q: want claude or codex", *agent), Hint: "relay-baton selftest --agent claude"}
	}
	if *step <= 0 {
		return &cli.UsageError{Msg: "--step-timeout must be positive", Hint: "relay-baton selftest --step-timeout 2m"}
	}
	if !*js {
		fmt.Fprintln(inv.IO.Err, "relay-baton selftest: running the installed CLIs against a mock API on 127.0.0.1, in a temporary HOME (about a minute)")
		o.OnCheck = func(c selftest.Check) { fmt.Fprintln(inv.IO.Out, checkLine(c)) }
	}
	started := time.Now()
	rep, err := selftest.Run(inv.Ctx, o)
	if err != nil {
		return err
	}
	if *js {
		if err := inv.PrintJSON(rep); err != nil {
			return err
		}
	} else {
		printSelftestSummary(inv, rep, time.Since(started))
	}
	if rep.Checked() == 0 {
		// Skipped everything: nothing was shown to hold.
		fmt.Fprintf(inv.IO.Err, "selftest checked nothing: no agent CLI could be run. Install them (npm install -g %s %s), or set %s / %s to their paths, then run relay-baton selftest again\n",
			selftest.Tested["claude"], selftest.Tested["codex"], agents.ClaudeBinEnv, agents.CodexBinEnv)
		return &cli.ExitError{Code: 1}
	}
	if rep.Broken() > 0 {
		if *js {
			return &cli.ExitError{Code: 1}
		}
		return cli.ErrSilent
	}
	return nil
}

// checkLine is one contract: agent, contract, then ok / changed: what /
// skipped: why. Details come from the CLIs (versions, paths, messages):
// made inert before they reach the terminal.
func checkLine(c selftest.Check) string {
	st := string(c.Status)
	if c.Detail != "" {
		if c.Status == selftest.OK {
			st += "  (" + c.Detail + ")"
		} else {
			st += ": " + c.Detail
		}
	}
	return render.InertLine(fmt.Sprintf("%-6s  %-27s  %s", c.Agent, c.Contract, st))
}

func printSelftestSummary(inv *cli.Invocation, rep selftest.Report, took time.Duration) {
	n := map[selftest.Status]int{}
	for _, c := range rep.Checks {
		n[c.Status]++
	}
	var clis []string
	for _, c := range rep.CLIs {
		if c.Version != "" {
			clis = append(clis, c.Agent+" "+c.Version)
		}
	}
	fmt.Fprintln(inv.IO.Out, render.InertLine(fmt.Sprintf("selftest: %d ok, %d changed, %d skipped in %.0fs (%s)",
		n[selftest.OK], n[selftest.Changed], n[selftest.Skipped], took.Seconds(), strings.Join(clis, ", "))))
	if rep.Dir != "" {
		fmt.Fprintln(inv.IO.Out, render.InertLine("kept: "+rep.Dir))
	}
	if n[selftest.Changed] > 0 {
		fmt.Fprintf(inv.IO.Err, "A changed contract means relay-baton may not work with this CLI version. Install the tested ones (npm install -g %s %s),\nor look at what the CLI wrote with: relay-baton selftest --keep\n",
			selftest.Tested["claude"], selftest.Tested["codex"])
	}
}
