// Package conversation owns relay-baton's files in a workspace and the
// whole orchestrator lane: chatting with an already-running Claude Code
// or Codex session (codex.go) through a file inbox its hooks deliver.
//
//	Send ─► inbox/<ms>-<id>.json ─┬─ HookStop (turn end) ─────┐
//	                              ├─ HookWait (idle, rewake) ─┼─► delivered/<id>.json ─► the session
//	                              └─ Session.Monitor (wait) ──┘
//	the session's transcript ─► Tail ─► events.Activity ─► Follow (queued … end of turn) ─► FollowView
//	ListTargets ─► Target.State, WriteTargets, WriteTargetsReport, FindTarget (the one targets view)
//	RunHook ─► HookStop, HookWait, HookPromptSubmit, HookSessionStart (bounded)
//	InstallHooks ─► Claude Code's settings or Codex's hooks.json and trust; CheckHooks (doctor)
//
// package main, the room and the server are its clients: they parse flags
// or input, call one of these, and render what comes back. It also holds
// the .ai-session folder of a repository (FindRoot, LogPath) and the one
// whole-file write (WriteFileAtomic).
package conversation

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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
		return "", fmt.Errorf("create %s: %w%s", d, err, writeHint(err))
	}
	ensureIgnored(d)
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
		return fmt.Errorf("%s is %s, not a folder: move it aside; relay-baton recreates the folder", d, kindOf(fi.Mode()))
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
		return "", fmt.Errorf("create %s: %w%s", d, err, writeHint(err))
	}
	fi, err := os.Lstat(d)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is %s, not a folder: relay-baton does not write through it; move it aside", d, kindOf(fi.Mode()))
	}
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
