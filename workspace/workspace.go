// Package workspace says where relay-baton's things live in a repository
// and keeps them there: the repository root (FindRoot), the workspace a
// command or a hook works in (Resolve, For), the .ai-session folder and its
// conversation log (SessionDir, LogPath, EnsureSessionDir, and the log's
// sessions: LogSessions), the chat folder .claude/session-chat (ChatDir), Claude Code's settings files
// (SettingsPath), the .gitignore that keeps relay-baton's state out of
// commits (EnsureIgnored), the writes relay-baton makes in its own folders
// (OpenAppend, WriteFile: no symlink followed, created 0600) and the room's
// input history (History). The safe-file primitives under them are events'.
package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/relay-baton/relay-baton/safeio"
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

// ErrSessionDirLink is wrapped by EnsureSessionDir's error for a
// .ai-session that is a symlink out of the repository.
var ErrSessionDirLink = errors.New("is a symlink out of the repository")

// EnsureSessionDir creates root/.ai-session (0700) if needed and returns it.
// A .ai-session that is a symlink leading out of the repository is refused
// (a repository can commit one, pointing at a folder of the user's); one
// that stays inside the repository is allowed.
func EnsureSessionDir(root string) (string, error) {
	d := SessionDir(root)
	if err := CheckSessionDir(root); err != nil {
		return "", err
	}
	if err := os.MkdirAll(d, 0o700); err != nil {
		return "", fmt.Errorf("create %s: %w%s", d, err, WriteHint(err))
	}
	EnsureIgnored(d)
	return d, nil
}

// CheckSessionDir refuses a root/.ai-session that is a symlink out of the
// repository or not a directory; a missing one is fine.
func CheckSessionDir(root string) error {
	d := SessionDir(root)
	fi, err := os.Lstat(d)
	if err != nil || fi.IsDir() {
		return nil
	}
	if fi.Mode()&fs.ModeSymlink == 0 {
		return fmt.Errorf("%s is %s, not a folder: move it aside; relay-baton recreates the folder", d, safeio.FileKind(fi.Mode()))
	}
	target, err := filepath.EvalSymlinks(d)
	rroot, rerr := filepath.EvalSymlinks(root)
	if err == nil && rerr == nil {
		if rel, err := filepath.Rel(rroot, target); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			if fi, err := os.Stat(target); err == nil && fi.IsDir() {
				return nil
			}
		}
	}
	dest, _ := os.Readlink(d)
	return fmt.Errorf("%s %w (it points to %q): relay-baton does not write through it; remove the link (rm %s) and relay-baton recreates the folder", d, ErrSessionDirLink, dest, d)
}

// EnsureSubdir creates dir/name (0700), refusing a symlink or a non-folder
// there, and returns it.
func EnsureSubdir(dir, name string) (string, error) {
	d := filepath.Join(dir, name)
	if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("create %s: %w%s", d, err, WriteHint(err))
	}
	fi, err := os.Lstat(d)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is %s, not a folder: relay-baton does not write through it; move it aside", d, safeio.FileKind(fi.Mode()))
	}
	return d, nil
}

// ChatDir is the chat folder of a workspace, relative to it.
const ChatDir = ".claude/session-chat"

// Resolve finds the workspace for start: the nearest directory up from
// start holding .claude/session-chat, else the git root, else start.
func Resolve(start string) (string, error) {
	dir, err := filepath.Abs(start)
	if err != nil {
		return "", err
	}
	for d := dir; ; {
		if fi, err := os.Stat(filepath.Join(d, ChatDir)); err == nil && fi.IsDir() {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if root, err := FindRoot(dir); err == nil {
		return root, nil
	}
	return dir, nil
}

// For is the workspace a command works in: dir when given (its
// --workspace), else Resolve of the current folder.
func For(dir string) (string, error) {
	if dir != "" {
		return filepath.Abs(dir)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return Resolve(wd)
}

// SettingsPath returns Claude Code's settings file of a scope: project
// (<workspace>/.claude/settings.json), local (settings.local.json) or user
// ($CLAUDE_CONFIG_DIR or ~/.claude, settings.json).
func SettingsPath(scope, workspace string) (string, error) {
	switch scope {
	case "project", "":
		return filepath.Join(workspace, ".claude", "settings.json"), nil
	case "local":
		return filepath.Join(workspace, ".claude", "settings.local.json"), nil
	case "user":
		if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
			return filepath.Join(d, "settings.json"), nil
		}
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(home, ".claude", "settings.json"), nil
	}
	return "", fmt.Errorf("scope must be project, local or user, not %q", scope)
}

// WriteHint says what to do about a failed write: nothing for errors it
// does not recognise.
func WriteHint(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return " (the disk is full: free some space and send again; nothing was queued)"
	case errors.Is(err, syscall.EROFS), errors.Is(err, fs.ErrPermission):
		return " (the folder is not writable: check its mode and owner, `lsattr` for the immutable flag, and whether the file system is mounted read-only)"
	}
	return ""
}
