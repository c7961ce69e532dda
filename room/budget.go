package room

import (
	"context"
	"os"
	"path/filepath"

	"github.com/relay-baton/relay-baton/diet"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/gitrepo"
)

func fileSize(path string) int {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return int(fi.Size())
}

// Budget measures the raw sizes of what a handoff would carry against the
// diet profile's budgets.
func (e *Engine) Budget(ctx context.Context) diet.Report {
	return budgetOf(e.Diet, e.SessionDir, len(gitrepo.Diff(ctx, e.Root)), len(gitrepo.Map(ctx, e.Root)))
}

// budgetOf is Budget for a diff and a repo map of the given sizes (the
// context panel's come from its cached git facts).
func budgetOf(profile, sessionDir string, diff, repoMapChars int) diet.Report {
	d := diet.Profiles[profile]
	parts := []diet.Part{
		{Name: events.PlanFile, Chars: fileSize(filepath.Join(sessionDir, events.PlanFile)), Budget: d.Plan},
		{Name: "diff", Chars: diff, Budget: d.Diff},
		{Name: "repo map", Chars: repoMapChars, Budget: d.RepoMap},
		// Only the log's tail goes into a handoff: the whole file is not context.
		{Name: "commands.log tail", Chars: min(fileSize(filepath.Join(sessionDir, "commands.log")), d.LogTail), Budget: d.LogTail},
	}
	r := diet.Report{Diet: profile, Handoff: d.Handoff, Ceiling: diet.Ceiling}
	for i := range parts {
		parts[i].Ratio = float64(parts[i].Chars) / float64(parts[i].Budget)
		r.Total += parts[i].Chars
		if parts[i].Ratio > 1 {
			r.OverParts = append(r.OverParts, parts[i].Name)
		}
	}
	r.Parts = parts
	r.Ratio = float64(r.Total) / float64(d.Handoff)
	r.Tokens = r.Total / 4
	return r
}
