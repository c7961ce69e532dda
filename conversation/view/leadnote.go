package view

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/safeio"
	"github.com/relay-baton/relay-baton/workspace"
)

// leadSeenName is the file, in a workspace's chat folder, naming the lead
// session that send or the room last used (LeadNote).
const leadSeenName = "lead-seen"

// LeadNote records that send or the room now uses session id as the lead
// of ws and says so when the lead has moved since they last used one
// ("lead is now codex <id> ..."): the lead not marked with --set-lead is
// the most recently active running session, so a newly started session
// takes it, and that must not happen without a word. "" when it is the
// same lead as last time, the first one used, or the marked lead.
func LeadNote(ws, id string) string {
	root := filepath.Join(ws, workspace.ChatDir)
	seen := filepath.Join(root, leadSeenName)
	prev := ""
	if b, err := safeio.ReadOwned(seen, 4096); err == nil {
		prev = strings.TrimSpace(string(b))
	}
	if prev == id || conversation.ValidSessionID(id) != nil {
		return ""
	}
	for _, d := range []string{filepath.Join(ws, ".claude"), root} {
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() {
			return "" // no chat folder (or a link): nothing recorded, nothing said
		}
	}
	if err := safeio.WriteFileAtomic(seen, []byte(id+"\n"), 0o600, false); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	if prev == "" || conversation.MarkedLead(ws) == id {
		return ""
	}
	agent := "claude"
	if s, err := conversation.OpenSession(ws, id); err == nil && s.IsCodex() {
		agent = "codex"
	}
	return fmt.Sprintf("lead is now %s %s (the most recently active running session; it was %s): `relay-baton targets` shows them, `relay-baton targets --set-lead ID` keeps one", agent, id, prev[:min(8, len(prev))])
}
