package main

import (
	"strings"
	"testing"
)

func TestContinueCommandArguments(t *testing.T) {
	dir := roomRepo(t)
	tests := []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"continue", "--path", dir}, 2, "pass --yes"},
		{[]string{"continue", "--path", dir, "--max-steps", "21"}, 2, "from 0 to 20"},
		{[]string{"continue", "--path", dir, "-n", "-1"}, 2, "from 0 to 20"},
		{[]string{"continue", "--path", dir, "5"}, 2, "takes no arguments"},
		{[]string{"continue", "--path", dir, "--yes"}, 2, "relay-baton plan <task>"}, // no plan.md yet
		{[]string{"continue", "--path", dir, "--yes", "--json"}, 2, "relay-baton plan <task>"},
		{[]string{"continue", "--path", t.TempDir(), "--yes"}, 2, "git"},
	}
	for _, tc := range tests {
		code, out, errs := runCLI(t, "", tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.err) || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d and %q", tc.args, code, out, errs, tc.code, tc.err)
		}
	}
	code, out, _ := runCLI(t, "", "continue", "--help")
	if code != 0 || !strings.Contains(out, "PLAN COMPLETE") || !strings.Contains(out, "--max-steps") {
		t.Errorf("--help: %d %q", code, out)
	}
}
