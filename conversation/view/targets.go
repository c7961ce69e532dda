// Package view renders the orchestrator lane for a terminal: the targets
// table (`relay-baton targets`, the room's /targets) and its report, and
// the progress of `relay-baton send --follow`. What it shows comes from
// conversation (Target, Update); every string of content crosses
// render.Inert.
package view

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/conversation/claudecode"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/procfacts"
	"github.com/relay-baton/relay-baton/workspace"
)

// TableOptions tunes Targets.
type TableOptions struct {
	Now        time.Time
	Current    string // marked ">" (the room's target)
	Transcript bool   // a TRANSCRIPT column
}

// Targets writes the one targets table (`relay-baton targets`, the
// room's /targets): a mark (">" current, "*" lead), the session, whether it
// can chat, its Status, its queue (and the oldest message's age), its last
// activity, and with o.Transcript its transcript path. Paths come from a
// hook payload: they are sanitized.
func Targets(w io.Writer, ts []conversation.Target, o TableOptions) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "   SESSION\tCHAT\tSTATE\tQUEUE\tLAST ACTIVITY\tAGENT"
	if o.Transcript {
		head += "\tTRANSCRIPT"
	}
	fmt.Fprintln(tw, head)
	for _, t := range ts {
		mark := []byte("  ")
		if t.SessionID == o.Current {
			mark[0] = '>'
		}
		if t.Lead {
			mark[1] = '*'
		}
		chat, queue := "no", "-"
		if t.ChatCapable {
			chat, queue = "yes", fmt.Sprint(t.Depth)
			if t.State == procfacts.Ended {
				chat = "no" // nothing reaches it until it is resumed
			}
			if t.Depth > 0 && !t.Oldest.IsZero() {
				queue += fmt.Sprintf(" (oldest %s)", o.Now.Sub(t.Oldest).Round(time.Second))
			}
		}
		last := "-"
		if !t.LastActivity.IsZero() {
			last = o.Now.Sub(t.LastActivity).Round(time.Second).String() + " ago"
		}
		agent := t.Agent
		if agent == "" {
			agent = "claude"
		}
		row := []string{string(mark) + " " + t.SessionID, chat, t.Status(), queue, last, agent}
		if o.Transcript {
			tr := render.InertLine(t.TranscriptPath)
			if tr == "" {
				tr = "-"
			}
			row = append(row, tr)
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

// TargetsReport is `relay-baton targets` as text: the table with the
// transcripts and the lead's footnote, or, when ts is empty, how to get a
// session to chat with in ws (and, unless all was asked for, how many
// sessions --all would add).
func TargetsReport(w io.Writer, ws string, ts []conversation.Target, all bool, now time.Time) error {
	note := claudecode.RegistryNote()
	if note != "" {
		fmt.Fprintln(w, render.InertLine(note))
	}
	if len(ts) == 0 {
		if note == "" && os.Getenv(claudecode.NoRegistryEnv) != "1" {
			// Claude Code's registry was read: no session runs here.
			fmt.Fprintf(w, "No running Claude Code session found for %s.\nStart Claude Code there: relay-baton finds it in Claude Code's own list of sessions (`claude agents`) and reaches it through its messaging socket, no hooks needed ('relay-baton hook install' adds the Stop-hook and rewake lanes; for Codex: 'relay-baton hook install --agent codex', then start codex).\n", render.InertLine(ws))
		} else if path := conversation.ClaudeHooksIn(ws); path != "" {
			// Installed: what is missing is a session that read them.
			fmt.Fprintf(w, "No running Claude Code session found for %s.\nThe chat hooks are installed (%s): start Claude Code there, or restart (resume) a session started before the install (Claude Code reads hooks when a session starts).\n", render.InertLine(ws), render.InertLine(path))
		} else {
			fmt.Fprintf(w, "No running Claude Code session found for %s.\nRun 'relay-baton hook install', then start a session there (for Codex: 'relay-baton hook install --agent codex', then start codex).\n", render.InertLine(ws))
		}
		if others, err := conversation.ListAllTargets(ws); err == nil && len(others) > 0 && !all {
			fmt.Fprintf(w, "%d earlier session(s) ended or are of unknown state: 'relay-baton targets --all' lists them.\n", len(others))
		}
		return nil
	}
	if err := Targets(w, ts, TableOptions{Now: now, Transcript: true}); err != nil {
		return err
	}
	if slices.ContainsFunc(ts, func(t conversation.Target) bool { return t.Lead }) {
		fmt.Fprintln(w, "* lead (the default target of 'relay-baton send')")
	}
	return nil
}

// FindTarget returns the sessions of ts that want names: the one whose id
// is want, else those whose id starts with want (at least 4 characters,
// case-folded). "" or "lead" names the lead.
func FindTarget(ts []conversation.Target, want string) []conversation.Target {
	var found []conversation.Target
	for _, t := range ts {
		switch {
		case want == "" || want == "lead":
			if t.Lead {
				return []conversation.Target{t}
			}
		case t.SessionID == want:
			return []conversation.Target{t}
		case len(want) >= 4 && strings.HasPrefix(t.SessionID, strings.ToLower(want)):
			found = append(found, t)
		}
	}
	return found
}

// MarkLead is SetLead for `targets --set-lead`; running is false when id
// is not a running session of ws. Marking one that has not started yet is
// allowed (it becomes the lead when it runs with the hooks installed), but
// the caller should say so: a typo should not pass silently.
func MarkLead(ws, id string) (running bool, err error) {
	if err := conversation.SetLead(ws, id); err != nil {
		return false, err
	}
	if id == "" {
		return true, nil
	}
	known, err := conversation.ListTargets(ws)
	return err != nil || slices.ContainsFunc(known, func(t conversation.Target) bool { return t.SessionID == id }), nil
}

// TargetIDs are the session ids of ws's running targets, for completion;
// none when the workspace cannot be found.
func TargetIDs(dir string) []string {
	ws, err := workspace.For(dir)
	if err != nil {
		return nil
	}
	ts, _ := conversation.ListTargets(ws)
	ids := make([]string, len(ts))
	for i, t := range ts {
		ids[i] = t.SessionID
	}
	return ids
}
