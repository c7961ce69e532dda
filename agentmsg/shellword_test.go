package agentmsg

import "testing"

// TestUnwrapShellAsTyped: codex's commands are shown as the model wrote
// them, whatever quoting codex chose (this one is measured with codex
// 0.169.0: double quotes with backslashes once the script holds a single
// quote, then a single-quoted tail).
func TestUnwrapShellAsTyped(t *testing.T) {
	typed := "printf '\\n\\ndef shout(s):\\n    return s.upper()\\n' >> greet.py && echo \"it's $HOME\" `date`"
	for _, tc := range []struct{ in, want string }{
		{`/bin/bash -lc "printf '\\n\\ndef shout(s):\\n    return s.upper()\\n' >> greet.py && echo \"it's "'$HOME" ` + "`date`'", typed},
		{`/bin/bash -lc 'echo hi > x'`, "echo hi > x"},
		{`/bin/bash -lc 'echo '"'"'hi'"'"' > x'`, "echo 'hi' > x"},
		{`/bin/bash -lc ls`, "ls"},
		{`/bin/bash -lc "a \$b \\c"`, `a $b \c`},
		{`/bin/bash -lc 'unterminated`, `'unterminated`},
		{`/bin/bash -lc 'a' 'b'`, `'a' 'b'`},
		{`python3 -c 'x'`, `python3 -c 'x'`},
	} {
		if got := UnwrapShell(tc.in); got != tc.want {
			t.Errorf("UnwrapShell(%s)\n = %s\nwant %s", tc.in, got, tc.want)
		}
	}
}
