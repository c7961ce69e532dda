package testkit

import (
	"os/exec"
	"testing"
)

// Git runs git in dir with a throwaway identity (user t, t@t) and returns
// its combined output; a failure fails the test with that output.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir, "-c", "user.email=t@t", "-c", "user.name=t"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}
