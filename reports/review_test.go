package reports

import "testing"

func TestNamesPath(t *testing.T) {
	for _, tc := range []struct {
		text, path string
		want       bool
	}{
		{"edit greet.py", "greet.py", true},
		{"edit greet.py.", "greet.py", true},
		{"edit (greet.py)", "greet.py", true},
		{"edit test_greet.py", "greet.py", false},
		{"edit greet.pyc", "greet.py", false},
		{"edit src/greet.py", "greet.py", false},
		{"edit greet.py", "src/greet.py", true},
		{"edit app/src/greet.py", "src/greet.py", false},
		{"edit ./src/greet.py", "src/greet.py", true},
		{"edit rc/greet.py", "src/greet.py", false},
		{"edit `.gitignore`", ".gitignore", true},
		{"edit gitignore", ".gitignore", false},
	} {
		if got := namesPath(tc.text, tc.path); got != tc.want {
			t.Errorf("namesPath(%q, %q) = %v", tc.text, tc.path, got)
		}
	}
}
