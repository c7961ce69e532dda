package conversation

import (
	"os"
	"path/filepath"
)

// ProjectsRoot is Claude Code's projects folder: $CLAUDE_CONFIG_DIR/projects,
// else ~/.claude/projects ("" when no home is known).
func ProjectsRoot() string {
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return filepath.Join(d, "projects")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".claude", "projects")
}

// ProjectSlug is Claude Code's folder name for a cwd: every character
// outside [A-Za-z0-9] replaced by '-', one for one. Claude Code truncates
// slugs over 200 characters and adds a hash: never rely on it alone.
func ProjectSlug(cwd string) string {
	b := []byte(cwd)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}

// ProjectsWhere says where transcripts were looked for, for a message:
// "under <root>", or why there is no such folder (HOME unset).
func ProjectsWhere() string {
	if root := ProjectsRoot(); root != "" {
		return "under " + root
	}
	return "not under ~/.claude/projects: HOME is not set (set HOME, or CLAUDE_CONFIG_DIR to Claude Code's folder)"
}

// ProjectDir is projects/<slug> of cwd, or "".
func ProjectDir(cwd string) string {
	root := ProjectsRoot()
	if root == "" {
		return ""
	}
	return filepath.Join(root, ProjectSlug(cwd))
}

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
		if d := ProjectDir(cwd); d != "" {
			if p := filepath.Join(d, s.ID+".jsonl"); exists(p) {
				return p
			}
		}
	}
	if root := ProjectsRoot(); root != "" {
		if m, _ := filepath.Glob(filepath.Join(root, "*", s.ID+".jsonl")); len(m) > 0 {
			return m[0]
		}
	}
	if p := FindRollout(s.ID); p != "" {
		return p // a Codex thread
	}
	if ok && r.TranscriptPath != "" {
		return r.TranscriptPath // registered but not written yet
	}
	return ""
}
