// Package conversation owns relay-baton's files in a workspace: the
// .ai-session folder of a git repository, and the session-chat file
// protocol (inbox, delivered, outbox, log) through which the room talks to
// an already-running Claude Code or Codex session (codex.go), plus the tail
// of that session's transcript or rollout.
package conversation

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// SessionDirName is the folder, at the repository root, that holds
// relay-baton's artifacts (plan.md, conversation.jsonl, commands.log, ...).
const SessionDirName = ".ai-session"

// LogName is the conversation log's file name inside the session folder.
const LogName = "conversation.jsonl"

// ErrNotGitRepo is returned by FindRoot outside a git repository.
var ErrNotGitRepo = errors.New("not inside a git repository")

// FindRoot returns the root of the git work tree containing start (a
// directory holding .git, as a folder or a file). It does not run git.
func FindRoot(start string) (string, error) {
	dir, err := filepath.Abs(start)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(dir); err != nil {
		return "", err
	} else if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", dir)
	}
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("%s: %w (run `git init` there, or pass --path to a repository)", dir, ErrNotGitRepo)
		}
		d = parent
	}
}

// SessionDir returns root/.ai-session.
func SessionDir(root string) string { return filepath.Join(root, SessionDirName) }

// LogPath returns root/.ai-session/conversation.jsonl.
func LogPath(root string) string { return filepath.Join(root, SessionDirName, LogName) }

// EnsureSessionDir creates root/.ai-session (0700) if needed and returns it.
func EnsureSessionDir(root string) (string, error) {
	d := SessionDir(root)
	if err := os.MkdirAll(d, 0o700); err != nil {
		return "", fmt.Errorf("create %s: %w%s", d, err, writeHint(err))
	}
	ensureIgnored(d)
	return d, nil
}

// HookWorkspace is the workspace of a hook whose payload says cwd, when
// CLAUDE_PROJECT_DIR is not set: the nearest folder up from cwd that holds
// this session's chat folder, else ResolveWorkspace(cwd) (the nearest
// folder with .claude/session-chat, else the git root, else cwd). Every hook
// resolves it the same way, so a session that cd'd into a sub-folder does
// not get a second chat folder there.
func HookWorkspace(cwd, sessionID string) string {
	dir := filepath.Clean(cwd)
	if ValidSessionID(sessionID) == nil {
		for d := dir; ; {
			if fi, err := os.Lstat(filepath.Join(d, ChatDir, sessionID)); err == nil && fi.IsDir() {
				return d
			}
			parent := filepath.Dir(d)
			if parent == d {
				break
			}
			d = parent
		}
	}
	if ws, err := ResolveWorkspace(dir); err == nil {
		return ws
	}
	return dir
}
