package hookinstall

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// GoTemporaryBinary reports whether bin is a binary `go run` built: one in
// Go's build cache (GOCACHE, where Go caches some `go run` executables) or
// in a go-build work folder of the temporary directory
// ($GOTMPDIR or os.TempDir(), then go-build<N>/b001/exe/<name>). Such a path
// disappears when the run ends or the cache is trimmed, so nothing that
// outlives the command (a hook in a settings file) may name it. It returns
// the folder that matched.
func GoTemporaryBinary(bin string) (string, bool) {
	bin = filepath.Clean(bin)
	for _, c := range goCacheDirs() {
		if within(bin, c) {
			return c, true
		}
	}
	tmps := []string{os.TempDir()}
	if d := os.Getenv("GOTMPDIR"); d != "" {
		tmps = append(tmps, d)
	}
	for _, t := range tmps {
		for _, t := range resolvedToo(t) {
			rel, err := filepath.Rel(t, bin)
			if err != nil || strings.HasPrefix(rel, "..") {
				continue
			}
			parts := strings.Split(filepath.ToSlash(rel), "/")
			// go-build1234/b001/exe/relay-baton
			if len(parts) >= 4 && strings.HasPrefix(parts[0], "go-build") && parts[len(parts)-2] == "exe" {
				return filepath.Join(t, parts[0]), true
			}
		}
	}
	return "", false
}

// goCacheDirs are the places Go's build cache may be: $GOCACHE, the default
// (os.UserCacheDir()/go-build) and what `go env GOCACHE` says when go is on
// PATH (it also sees a GOCACHE set with `go env -w`).
func goCacheDirs() []string {
	var dirs []string
	if d := os.Getenv("GOCACHE"); d != "" && d != "off" {
		dirs = append(dirs, d)
	}
	if d, err := os.UserCacheDir(); err == nil {
		dirs = append(dirs, filepath.Join(d, "go-build"))
	}
	if g, err := exec.LookPath("go"); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if out, err := exec.CommandContext(ctx, g, "env", "GOCACHE").Output(); err == nil {
			if d := strings.TrimSpace(string(out)); d != "" && d != "off" {
				dirs = append(dirs, d)
			}
		}
	}
	var out []string
	for _, d := range dirs {
		if filepath.IsAbs(d) {
			out = append(out, resolvedToo(d)...)
		}
	}
	return out
}

// resolvedToo returns dir and, when different, dir with symlinks resolved
// (the binary's path has them resolved).
func resolvedToo(dir string) []string {
	dir = filepath.Clean(dir)
	if r, err := filepath.EvalSymlinks(dir); err == nil && r != dir {
		return []string{dir, r}
	}
	return []string{dir}
}

// within reports whether p is dir or inside it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
