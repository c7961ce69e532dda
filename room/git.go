package room

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// excludeSession keeps relay-baton's own folder out of every git view: plan.md
// and conversation.jsonl change on every turn and are not progress.
const excludeSession = ":(exclude).ai-session"

// excludeChat does the same for the session-chat protocol's files (inbox,
// delivered, log.jsonl, locks), which change whenever a message moves.
const excludeChat = ":(exclude).claude/session-chat"

// git runs git in root with argv (no shell) and returns stdout.
func git(ctx context.Context, root string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", root}, args...)...)
	// relay-baton only reads: no index refresh under index.lock, so a
	// cancelled query (the context panel's, when a line is entered) never
	// leaves a stale lock nor contends with an agent's git.
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil { // the cause, not "signal: killed"
			err = ctxErr
		}
		return out.String(), fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// head returns HEAD's commit id, or "" in a repository without commits.
func head(ctx context.Context, root string) string {
	s, err := git(ctx, root, "rev-parse", "--verify", "-q", "HEAD")
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

// changes lists the working tree's changes against HEAD (excluding
// .ai-session), with line counts for tracked files.
func changes(ctx context.Context, root string) ([]Change, error) {
	st, err := git(ctx, root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", ".", excludeSession, excludeChat)
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
	if head(ctx, root) != "" {
		ns, err := git(ctx, root, "diff", "HEAD", "--numstat", "-z", "--no-renames", "--", ".", excludeSession, excludeChat)
		if err == nil {
			counts := map[string][2]int{}
			for _, rec := range strings.Split(ns, "\x00") {
				parts := strings.SplitN(rec, "\t", 3)
				if len(parts) != 3 {
					continue
				}
				a, _ := strconv.Atoi(parts[0])
				d, _ := strconv.Atoi(parts[1])
				counts[parts[2]] = [2]int{a, d}
			}
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

func countLines(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 8<<20))
	return bytes.Count(b, []byte("\n"))
}

// maxNewFileDiff caps how much of one untracked file diffText includes.
const maxNewFileDiff = 256 << 10

// diffText is the working tree's diff against HEAD (excluding
// .ai-session), followed by untracked text files as new-file diffs.
func diffText(ctx context.Context, root string) string {
	var s string
	if head(ctx, root) == "" {
		s, _ = git(ctx, root, "diff", "--cached", "--", ".", excludeSession, excludeChat)
	} else {
		s, _ = git(ctx, root, "diff", "HEAD", "--", ".", excludeSession, excludeChat)
	}
	var b strings.Builder
	b.WriteString(s)
	un, _ := git(ctx, root, "ls-files", "--others", "--exclude-standard", "-z", "--", ".", excludeSession, excludeChat)
	for i, p := range strings.Split(un, "\x00") {
		if p == "" || i > 2000 {
			continue
		}
		f, err := os.Open(filepath.Join(root, p))
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

// progressKey hashes the repository state an executor step can change:
// HEAD, the porcelain status, the diff against HEAD, and the content of
// untracked files. Two equal keys mean a step made no progress.
func progressKey(ctx context.Context, root string) (string, error) {
	h := sha256.New()
	fmt.Fprintln(h, head(ctx, root))
	st, err := git(ctx, root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", ".", excludeSession, excludeChat)
	if err != nil {
		return "", err
	}
	io.WriteString(h, st)
	io.WriteString(h, diffText(ctx, root))
	un, _ := git(ctx, root, "ls-files", "--others", "--exclude-standard", "-z", "--", ".", excludeSession, excludeChat)
	for i, p := range strings.Split(un, "\x00") {
		if p == "" || i > 2000 {
			continue
		}
		if f, err := os.Open(filepath.Join(root, p)); err == nil {
			fmt.Fprintf(h, "\x00%s\x00", p)
			io.Copy(h, io.LimitReader(f, 16<<20))
			f.Close()
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// repoMap lists tracked and untracked files, one a line.
func repoMap(ctx context.Context, root string) string {
	s, _ := git(ctx, root, "ls-files", "--cached", "--others", "--exclude-standard", "--", ".", excludeSession, excludeChat)
	return s
}
