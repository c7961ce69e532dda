package claudecode

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
	return filepath.Join(root, projectSlug(cwd))
}

// FindTranscript is where Claude Code writes the transcript of session
// id started in cwd: projects/<slug of cwd>/<id>.jsonl under its config
// folder, else any projects/*/<id>.jsonl; "" when none exists yet.
func FindTranscript(id, cwd string) string {
	if d := ProjectDir(cwd); d != "" && cwd != "" {
		p := filepath.Join(d, id+".jsonl")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	if root := ProjectsRoot(); root != "" {
		if m, _ := filepath.Glob(filepath.Join(root, "*", id+".jsonl")); len(m) > 0 {
			return m[0]
		}
	}
	return ""
}
