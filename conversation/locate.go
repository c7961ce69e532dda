package conversation

import (
	"os"
	"path/filepath"

	"github.com/relay-baton/relay-baton/conversation/claudecode"
	"github.com/relay-baton/relay-baton/conversation/codex"
)

// LocateTranscript finds a session's transcript: the path registered by the
// SessionStart hook, then projects/<slug>/<id>.jsonl for the registered cwd
// and the workspace, then a scan of projects/*/<id>.jsonl. "" when none.
func LocateTranscript(s *Session) string {
	exists := func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && fi.Mode().IsRegular()
	}
	r, ok := s.Registration()
	if ok && r.TranscriptPath != "" && exists(r.TranscriptPath) {
		return r.TranscriptPath
	}
	for _, cwd := range []string{r.Cwd, s.Workspace} {
		if cwd == "" {
			continue
		}
		if d := claudecode.ProjectDir(cwd); d != "" {
			if p := filepath.Join(d, s.ID+".jsonl"); exists(p) {
				return p
			}
		}
	}
	if root := claudecode.ProjectsRoot(); root != "" {
		if m, _ := filepath.Glob(filepath.Join(root, "*", s.ID+".jsonl")); len(m) > 0 {
			return m[0]
		}
	}
	if p := codex.FindRollout(s.ID); p != "" {
		return p // a Codex thread
	}
	if ok && r.TranscriptPath != "" {
		return r.TranscriptPath // registered but not written yet
	}
	return ""
}
