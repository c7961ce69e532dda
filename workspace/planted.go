package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/conversation/sessionid"
	"github.com/relay-baton/relay-baton/gitrepo"
)

// A repository can commit files into relay-baton's own folders
// (.claude/session-chat, .ai-session): a session folder with a
// process.json, a lead mark, a .gitignore of "!*". None of that was
// registered on this machine, so none of it is trusted: a session folder or
// lead mark that git tracks is ignored (ListTargets leaves it out) and
// named in a warning, and the folders' .gitignore is repaired.

// trackedOwnPaths returns the files under .claude/session-chat and
// .ai-session that git tracks in workspace (slash-separated, relative),
// or nil when workspace is not a git work tree or git is not available.
func trackedOwnPaths(ws string) []string {
	out, err := gitrepo.Cmd{Root: ws, Timeout: 10 * time.Second}.Run(context.Background(), "ls-files", "-z", "--", ChatDir, SessionDirName)
	if err != nil || out == "" {
		return nil
	}
	return strings.Split(strings.TrimRight(out, "\x00"), "\x00")
}

// Planted is what a repository committed into relay-baton's folders.
type Planted struct {
	Sessions map[string]bool // session ids whose chat folder holds a tracked file
	Lead     bool            // the lead mark is tracked
	Paths    []string        // the tracked paths to name, one per session folder or file
}

// FindPlanted is what git tracks in relay-baton's folders of ws (nothing
// when ws is not a git work tree or git is not available).
func FindPlanted(ws string) Planted {
	p := Planted{Sessions: map[string]bool{}}
	seen := map[string]bool{}
	for _, f := range trackedOwnPaths(ws) {
		name := f
		if rest, ok := strings.CutPrefix(f, ChatDir+"/"); ok {
			first, _, deeper := strings.Cut(rest, "/")
			switch {
			case deeper && sessionid.IsUUID(first):
				p.Sessions[first] = true
				name = ChatDir + "/" + first + "/"
			case !deeper && first == "lead":
				p.Lead = true
			}
		}
		if !seen[name] {
			seen[name] = true
			p.Paths = append(p.Paths, name)
		}
	}
	return p
}

// PlantedWarnings checks relay-baton's folders in workspace: it repairs
// their .gitignore files (EnsureIgnored) and returns one warning line per
// path git tracks there (ignored: a clone planted it) and per .gitignore it
// could not repair. Commands print them before they list or pick targets.
func PlantedWarnings(ws string) []string {
	var out []string
	for _, d := range []string{filepath.Join(ws, ChatDir), filepath.Join(ws, SessionDirName)} {
		if fi, err := os.Lstat(d); err == nil && fi.IsDir() { // a real folder: never written through a link
			if w := EnsureIgnored(d); w != "" {
				out = append(out, w)
			}
		}
	}
	for _, f := range FindPlanted(ws).Paths {
		out = append(out, fmt.Sprintf("ignoring %s: it is tracked by git (committed to the repository, not registered by relay-baton on this machine); remove it from the repository with: git rm -r --cached %s", f, f))
	}
	return out
}
