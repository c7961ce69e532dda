package reports

import (
	"fmt"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/events/render"
)

// LastRun is what /status shows about the latest agent run.
type LastRun struct {
	Command   string        `json:"command"`
	Agent     string        `json:"agent"`
	ExitCode  int           `json:"exitCode"`
	Duration  time.Duration `json:"durationNs"`
	Cancelled bool          `json:"cancelled,omitempty"`
	At        time.Time     `json:"at"`
	Summary   string        `json:"summary,omitempty"`
	CostUSD   float64       `json:"costUsd,omitempty"`
	// Reason is why a failed run failed (the CLI's error, a login to
	// make, a timeout), as the agent_run event records it.
	Reason string `json:"reason,omitempty"`
	// FromLog: the run is the log's last one, not this room's (a one-shot
	// status after a one-shot plan).
	FromLog bool `json:"fromLog,omitempty"`
}

// SessionStatus is what /status shows.
type SessionStatus struct {
	Root         string   `json:"root"`
	SessionID    string   `json:"sessionId"`
	Active       string   `json:"activeAgent"`
	Plan         bool     `json:"plan"`
	PlanAgeSec   int64    `json:"planAgeSeconds,omitempty"`
	ChangedFiles []string `json:"changedFiles"`
	Head         string   `json:"head,omitempty"`
	LastRun      *LastRun `json:"lastRun,omitempty"`
	Diet         string   `json:"diet"`
	// PlanError says why plan.md cannot be read when it exists but is
	// not a plan (a FIFO, a folder, a link, too big).
	PlanError string `json:"planError,omitempty"`
	// PendingRun is the executor run waiting in its worktree, not
	// applied.
	PendingRun *PendingRun `json:"pendingRun,omitempty"`
}

// PendingRun is an executor run whose change is not applied.
type PendingRun struct {
	ID       string `json:"id"`
	Worktree string `json:"worktree"`
	Files    int    `json:"files"`
	Added    int    `json:"added"`
	Deleted  int    `json:"deleted"`
}

// PlanWord is the plan's state in a word or a few: "none", "ready (2m0s
// old)", "unusable: ...".
func (s SessionStatus) PlanWord() string {
	if s.PlanError != "" {
		return "unusable: " + s.PlanError
	}
	if !s.Plan {
		return "none"
	}
	return "ready (" + (time.Duration(s.PlanAgeSec) * time.Second).String() + " old)"
}

// Text renders the report; repository text (paths, file names, the plan
// error) is shown inert.
func (s SessionStatus) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "agent:   %s (planner claude, executor codex)\n", render.InertLine(s.Active))
	fmt.Fprintf(&b, "project: %s\n", render.InertLine(s.Root))
	fmt.Fprintf(&b, "plan:    %s\n", render.InertLine(s.PlanWord()))
	fmt.Fprintf(&b, "changed: %s", render.Count(len(s.ChangedFiles), "file"))
	for i, c := range s.ChangedFiles {
		if i == 10 {
			fmt.Fprintf(&b, "\n  … and %d more", len(s.ChangedFiles)-10)
			break
		}
		fmt.Fprintf(&b, "\n  %s", render.InertLine(c))
	}
	b.WriteString("\n")
	if p := s.PendingRun; p != nil {
		fmt.Fprintf(&b, "pending run: %s changed (+%d -%d), not applied; worktree %s (/apply or relay-baton apply brings it in, /undo or relay-baton undo discards it)\n",
			render.Count(p.Files, "file"), p.Added, p.Deleted, render.InertLine(p.Worktree))
	}
	if s.LastRun == nil {
		b.WriteString("last run: none recorded\n")
	} else {
		l := s.LastRun
		state := fmt.Sprintf("exit %d", l.ExitCode)
		if l.Cancelled {
			state = "cancelled"
		}
		from := ""
		if l.FromLog {
			from = " (from the log)"
		}
		fmt.Fprintf(&b, "last run: %s /%s, %s in %s at %s%s", render.InertLine(l.Agent), render.InertLine(l.Command), state, l.Duration.Round(time.Millisecond), l.At.UTC().Format("15:04:05Z"), from)
		if l.Reason != "" {
			b.WriteString(": " + render.InertLine(l.Reason))
		}
		b.WriteString("\n")
	}
	return b.String()
}
