// Package gitrepo is relay-baton's one way to ask git about a work tree: a
// runner (no shell, a timeout, no prompts, no optional locks, git's first
// stderr line in the error), the facts the room shows and prompts quote
// (HEAD, changed paths with line counts, the diff with untracked files,
// the file map, a progress key), and snapshot stores for the work of each
// agent run. relay-baton's own folders are left out of every view.
package gitrepo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/relay-baton/relay-baton/safeio"
)

// excludeSession keeps relay-baton's own folder out of every git view: plan.md
// and conversation.jsonl change on every turn and are not progress.
const excludeSession = ":(exclude).ai-session"

// excludeChat does the same for the session-chat protocol's files (inbox,
// delivered, log.jsonl, locks), which change whenever a message moves.
const excludeChat = ":(exclude).claude/session-chat"

// Head returns HEAD's commit id, or "" in a repository without commits.
func Head(ctx context.Context, root string) string {
	s, err := Run(ctx, root, "rev-parse", "--verify", "-q", "HEAD")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(s)
}

// Change is one changed path in the working tree.
type Change struct {
	Status  string `json:"status"` // porcelain XY, e.g. " M", "D ", "??"
	Path    string `json:"path"`
	Added   int    `json:"added"`
	Deleted int    `json:"deleted"`
}

// IsDeleted reports whether the path was removed.
func (c Change) IsDeleted() bool { return strings.Contains(c.Status, "D") }

// Changes lists the working tree's changes against HEAD (excluding
// .ai-session), with line counts for tracked files.
func Changes(ctx context.Context, root string) ([]Change, error) {
	st, err := Run(ctx, root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", ".", excludeSession, excludeChat)
	if err != nil {
		return nil, err
	}
	var list []Change
	fields := strings.Split(st, "\x00")
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if len(f) < 4 {
			continue
		}
		c := Change{Status: f[:2], Path: f[3:]}
		if c.Status[0] == 'R' || c.Status[0] == 'C' {
			i++ // the source path follows a rename
		}
		list = append(list, c)
	}
	if Head(ctx, root) != "" {
		ns, err := Run(ctx, root, "diff", "HEAD", "--numstat", "-z", "--no-renames", "--", ".", excludeSession, excludeChat)
		if err == nil {
			counts := map[string][2]int{}
			EachNumstat(ns, func(path string, added, deleted int, _ bool) {
				counts[path] = [2]int{added, deleted}
			})
			for i := range list {
				if n, ok := counts[list[i].Path]; ok {
					list[i].Added, list[i].Deleted = n[0], n[1]
				}
			}
		}
	}
	for i := range list {
		if list[i].Status == "??" {
			list[i].Added = countLines(filepath.Join(root, list[i].Path))
		}
	}
	return list, nil
}

// EachNumstat calls each for every path of the output of
// `git diff --numstat -z --no-renames`: its added and deleted line counts,
// or binary (git's "-" counts, the counts then 0).
func EachNumstat(out string, each func(path string, added, deleted int, binary bool)) {
	for _, rec := range strings.Split(out, "\x00") {
		parts := strings.SplitN(rec, "\t", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "-" {
			each(parts[2], 0, 0, true)
			continue
		}
		a, _ := strconv.Atoi(parts[0])
		d, _ := strconv.Atoi(parts[1])
		each(parts[2], a, d, false)
	}
}

// openUntracked opens an untracked file of the working tree for reading
// through the one helper: a symlink is not followed (its target may lie
// outside the repository, and a key must not end up in a prompt), a FIFO
// does not block, only a regular file is read.
func openUntracked(path string) (*os.File, error) { return safeio.OpenOwned(path) }

// untrackedKind names what an untracked path that is not a regular file
// is ("a symbolic link", ...), for the diff.
func untrackedKind(path string) string {
	fi, err := os.Lstat(path)
	if err != nil {
		return "gone"
	}
	return safeio.FileKind(fi.Mode())
}

func countLines(path string) int {
	f, err := openUntracked(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 8<<20))
	return bytes.Count(b, []byte("\n"))
}

// maxNewFileDiff caps how much of one untracked file Diff includes.
const maxNewFileDiff = 256 << 10

// Diff is the working tree's diff against HEAD (excluding
// .ai-session), followed by untracked text files as new-file diffs.
func Diff(ctx context.Context, root string) string {
	var s string
	if Head(ctx, root) == "" {
		s, _ = Run(ctx, root, "diff", "--cached", "--", ".", excludeSession, excludeChat)
	} else {
		s, _ = Run(ctx, root, "diff", "HEAD", "--", ".", excludeSession, excludeChat)
	}
	var b strings.Builder
	b.WriteString(s)
	un, _ := Run(ctx, root, "ls-files", "--others", "--exclude-standard", "-z", "--", ".", excludeSession, excludeChat)
	for i, p := range strings.Split(un, "\x00") {
		if p == "" || i > 2000 {
			continue
		}
		f, err := openUntracked(filepath.Join(root, p))
		if errors.Is(err, safeio.ErrNotRegular) {
			fmt.Fprintf(&b, "diff --git a/%s b/%s\nnew file (%s, not read)\n", p, p, untrackedKind(filepath.Join(root, p)))
			continue
		}
		if err != nil {
			continue
		}
		data, _ := io.ReadAll(io.LimitReader(f, maxNewFileDiff))
		f.Close()
		if bytes.IndexByte(data, 0) >= 0 {
			fmt.Fprintf(&b, "diff --git a/%s b/%s\nnew file (binary)\n", p, p)
			continue
		}
		fmt.Fprintf(&b, "diff --git a/%s b/%s\nnew file\n--- /dev/null\n+++ b/%s\n", p, p, p)
		for _, l := range strings.SplitAfter(string(data), "\n") {
			if l != "" {
				b.WriteString("+" + l)
			}
		}
		if !strings.HasSuffix(b.String(), "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// ProgressKey hashes the repository state an executor step can change:
// HEAD, the porcelain status, the diff against HEAD, and the content of
// untracked files. Two equal keys mean a step made no progress.
func ProgressKey(ctx context.Context, root string) (string, error) {
	h := sha256.New()
	fmt.Fprintln(h, Head(ctx, root))
	st, err := Run(ctx, root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", ".", excludeSession, excludeChat)
	if err != nil {
		return "", err
	}
	io.WriteString(h, st)
	io.WriteString(h, Diff(ctx, root))
	un, _ := Run(ctx, root, "ls-files", "--others", "--exclude-standard", "-z", "--", ".", excludeSession, excludeChat)
	for i, p := range strings.Split(un, "\x00") {
		if p == "" || i > 2000 {
			continue
		}
		full := filepath.Join(root, p)
		if f, err := openUntracked(full); err == nil {
			fmt.Fprintf(h, "\x00%s\x00", p)
			io.Copy(h, io.LimitReader(f, 16<<20))
			f.Close()
		} else if errors.Is(err, safeio.ErrNotRegular) {
			target, _ := os.Readlink(full) // a link moved elsewhere is progress
			fmt.Fprintf(h, "\x00%s\x00%s\x00%s", p, untrackedKind(full), target)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Map lists tracked and untracked files, one a line.
func Map(ctx context.Context, root string) string {
	s, _ := Run(ctx, root, "ls-files", "--cached", "--others", "--exclude-standard", "--", ".", excludeSession, excludeChat)
	return s
}

// ChangedCount is len(Changes(ctx, root)) without the line counts: one
// git status.
func ChangedCount(ctx context.Context, root string) (int, error) {
	st, err := Run(ctx, root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", ".", excludeSession, excludeChat)
	if err != nil {
		return 0, err
	}
	n := 0
	fields := strings.Split(st, "\x00")
	for i := 0; i < len(fields); i++ {
		if f := fields[i]; len(f) >= 4 {
			n++
			if f[0] == 'R' || f[0] == 'C' {
				i++ // the source path follows a rename
			}
		}
	}
	return n, nil
}
