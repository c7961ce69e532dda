package conversation

import (
	"os"
	"path/filepath"
)

// projectsRoot is Claude Code's projects folder: $CLAUDE_CONFIG_DIR/projects,
// else ~/.claude/projects ("" when no home is known).
func projectsRoot() string {
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return filepath.Join(d, "projects")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".claude", "projects")
}

// projectSlug is Claude Code's folder name for a cwd: every character
// outside [A-Za-z0-9] replaced by '-', one for one. Claude Code truncates
// slugs over 200 characters and adds a hash: never rely on it alone.
func projectSlug(cwd string) string {
	b := []byte(cwd)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}

// projectsWhere says where transcripts were looked for, for a message:
// "under <root>", or why there is no such folder (HOME unset).
func projectsWhere() string {
	if root := projectsRoot(); root != "" {
		return "under " + root
	}
	return "not under ~/.claude/projects: HOME is not set (set HOME, or CLAUDE_CONFIG_DIR to Claude Code's folder)"
}

// ProjectDir is projects/<slug> of cwd, or "".
func ProjectDir(cwd string) string {
	root := projectsRoot()
	if root == "" {
		return ""
	}
	return filepath.Join(root, projectSlug(cwd))
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
	if root := projectsRoot(); root != "" {
		if m, _ := filepath.Glob(filepath.Join(root, "*", s.ID+".jsonl")); len(m) > 0 {
			return m[0]
		}
	}
	if p := findRollout(s.ID); p != "" {
		return p // a Codex thread
	}
	if ok && r.TranscriptPath != "" {
		return r.TranscriptPath // registered but not written yet
	}
	return ""
}
