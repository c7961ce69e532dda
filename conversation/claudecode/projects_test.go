package claudecode

import "testing"

func TestProjectSlug(t *testing.T) {
	for in, want := range map[string]string{"/tmp/proj": "-tmp-proj", "/a/.b": "-a--b", "/x y/z_1": "-x-y-z-1"} {
		if got := projectSlug(in); got != want {
			t.Errorf("projectSlug(%q) = %q, want %q", in, got, want)
		}
	}
}
