package roomcmd

import (
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/relay-baton/relay-baton/cli"
	"github.com/relay-baton/relay-baton/hookinstall"
	"github.com/relay-baton/relay-baton/reports"
	"github.com/relay-baton/relay-baton/room"
)

// Review is its command's row of the table (usage, help) and its Run.
var Review = &cli.Command{Entry: cli.Entry{Name: "review", Usage: "[--json]", Short: "Review changed files against the plan (read-only)"}, Run: runReview}

func runReview(inv *cli.Invocation) error {
	return Report(inv, "review", false, nil, func(e *room.Engine, _ *Flags) (any, string, error) {
		r, err := e.Review(inv.Ctx)
		return r, r.Text(), err
	})
}

// Status is its command's row of the table (usage, help) and its Run.
var Status = &cli.Command{Entry: cli.Entry{Name: "status", Usage: "[--json]", Short: "Show session status (read-only)"}, Run: runStatus}

func runStatus(inv *cli.Invocation) error {
	return Report(inv, "status", false, nil, func(e *room.Engine, _ *Flags) (any, string, error) {
		s := e.Status(inv.Ctx)
		return s, s.Text(), nil
	})
}

// Budget is its command's row of the table (usage, help) and its Run.
var Budget = &cli.Command{Entry: cli.Entry{Name: "budget", Usage: "[--diet PROFILE] [--json]", Short: "Show context-budget usage (read-only)"}, Run: runBudget}

func runBudget(inv *cli.Invocation) error {
	return Report(inv, "budget", false, nil, func(e *room.Engine, _ *Flags) (any, string, error) {
		b := e.BudgetEvent(inv.Ctx)
		return b, b.Text(), nil
	})
}

// Doctor is its command's row of the table (usage, help) and its Run.
var Doctor = &cli.Command{Entry: cli.Entry{Name: "doctor", Usage: "[--deep] [--json]", Short: "Check git, agent binaries, keys and .ai-session health (read-only)"}, Run: runDoctor}

func runDoctor(inv *cli.Invocation) error {
	var deep bool
	var failed bool
	err := Report(inv, "doctor", true, func(fs *pflag.FlagSet) {
		fs.BoolVar(&deep, "deep", false, "also check agent versions and arguments, .ai-session health and conversation.jsonl")
	}, func(e *room.Engine, _ *Flags) (any, string, error) {
		r := e.Doctor(inv.Ctx, deep)
		r.Checks = append([]reports.Check{{Name: "relay-baton", Status: reports.OK, Detail: cli.ReadBuildVersion().String()}}, r.Checks...)
		bin, _ := os.Executable()
		r.Checks = append(r.Checks, hookinstall.CheckHooks(e.Root, bin)...)
		r.Checks = append(r.Checks, hookinstall.CheckSessions(e.Root)...)
		failed = r.Failed()
		return r, r.RenderWidth(inv.IO.Color, cli.TerminalWidth(inv.IO.Out)), nil
	})
	if err == nil && failed {
		return &cli.ExitError{Code: 1}
	}
	return err
}

// Note is its command's row of the table (usage, help) and its Run.
var Note = &cli.Command{Entry: cli.Entry{Name: "note", Usage: "<text>", Short: "Append a note to the conversation log"}, Run: runNote}

func runNote(inv *cli.Invocation) error {
	var f Flags
	fs := inv.Flags()
	fs.StringVar(&f.Path, "path", ".", "a directory inside the git repository")
	if err := inv.Parse(fs); err != nil {
		return err
	}
	text := strings.TrimSpace(strings.Join(fs.Args(), " "))
	if text == "" {
		return &cli.UsageError{Msg: "note needs text", Hint: `relay-baton note "tried X, it failed"`}
	}
	e, err := OpenEngine(inv, &f, false)
	if err != nil {
		return err
	}
	defer e.Close()
	return e.Note(text)
}
