// Package clitest runs the completion scripts package cli writes in a real
// shell, for the tests of cli and of the commands built on it.
package clitest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// BashComplete sources script (a bash completion script for relay-baton)
// in a plain bash (no rc files, no bash-completion package) and returns
// what its completion function offers for each line of words, the last
// word being the one completed. A missing bash fails the test.
func BashComplete(t testing.TB, script string, lines ...[]string) [][]string {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatal("bash is needed for the completion test")
	}
	var drv strings.Builder
	drv.WriteString("source " + shq(script) + " || exit 9\n")
	drv.WriteString("complete -p relay-baton >/dev/null || exit 8\n")
	for _, words := range lines {
		drv.WriteString("COMP_WORDS=(")
		for _, w := range words {
			drv.WriteString(shq(w) + " ")
		}
		drv.WriteString(")\nCOMP_CWORD=$((${#COMP_WORDS[@]}-1)); COMPREPLY=(); _relay_baton\nprintf '%s ' \"${COMPREPLY[@]}\"; echo\n")
	}
	cmd := exec.Command("bash", "--norc", "--noprofile", "-c", drv.String())
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(got) != len(lines) {
		t.Fatalf("bash printed %d lines for %d completions:\n%s", len(got), len(lines), out)
	}
	res := make([][]string, len(got))
	for i, l := range got {
		res[i] = strings.Fields(l)
	}
	return res
}

// shq quotes s for a POSIX shell.
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
