package hookinstall

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ExecFormSince is the first Claude Code that runs a command hook with
// "args" in exec form, without a shell (Claude Code's changelog, 2.1.139).
var ExecFormSince = [3]int{2, 1, 139}

// ClaudeExecForm decides the form of Claude Code's hooks by the installed
// claude ($RELAY_BATON_CLAUDE, else claude on PATH, in env; nil is this
// process's environment): exec form when `claude --version` names
// ExecFormSince or later, shell form otherwise (no claude, or a version
// it cannot read: every Claude Code runs shell-form hooks). why says which
// and why, for the person installing.
func ClaudeExecForm(ctx context.Context, env []string) (execForm bool, why string) {
	if env == nil {
		env = os.Environ()
	}
	bin, err := findClaude(env)
	if err != nil {
		return false, "shell (sh -c), since " + err.Error() + "; with Claude Code 2.1.139 or later, run hook install again for exec form (no shell), or pass --form exec"
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--version")
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		return false, fmt.Sprintf("shell (sh -c), since `%s --version` failed (%v)", bin, err)
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	v, ok := parseVersion(line)
	since := fmt.Sprintf("%d.%d.%d", ExecFormSince[0], ExecFormSince[1], ExecFormSince[2])
	switch {
	case !ok:
		return false, fmt.Sprintf("shell (sh -c), since the version %q of %s cannot be read", line, bin)
	case !versionAtLeast(v, ExecFormSince):
		return false, fmt.Sprintf("shell (sh -c), since %s is Claude Code %d.%d.%d and exec form needs %s or later", bin, v[0], v[1], v[2], since)
	}
	return true, fmt.Sprintf("exec (no shell), since %s is Claude Code %d.%d.%d (%s or later)", bin, v[0], v[1], v[2], since)
}

// findClaude is $RELAY_BATON_CLAUDE, else claude on env's PATH.
func findClaude(env []string) (string, error) {
	get := func(k string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], k+"="); ok {
				return v
			}
		}
		return ""
	}
	if b := get("RELAY_BATON_CLAUDE"); b != "" {
		if fi, err := os.Stat(b); err != nil || fi.IsDir() {
			return "", fmt.Errorf("RELAY_BATON_CLAUDE=%s is not a file", b)
		}
		return b, nil
	}
	for _, d := range filepath.SplitList(get("PATH")) {
		if d == "" || !filepath.IsAbs(d) {
			continue // never the current folder: a repository's own "claude"
		}
		p := filepath.Join(d, "claude")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("no claude on PATH")
}

// parseVersion reads "2.1.332 (Claude Code)": the first word's three
// numbers.
func parseVersion(s string) ([3]int, bool) {
	var v [3]int
	w, _, _ := strings.Cut(s, " ")
	parts := strings.Split(w, ".")
	if len(parts) != 3 {
		return v, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return v, false
		}
		v[i] = n
	}
	return v, true
}

func versionAtLeast(v, min [3]int) bool {
	for i := range v {
		if v[i] != min[i] {
			return v[i] > min[i]
		}
	}
	return true
}
