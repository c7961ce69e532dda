package room

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParse: any typed line parses to free text, a known command, or an
// UnknownCommandError, never a panic; a command's name is one it knows.
func FuzzParse(f *testing.F) {
	for _, c := range Commands {
		f.Add("/" + c.Name)
		f.Add("/" + strings.ToUpper(c.Name) + "  some args\there ")
		for _, a := range c.Aliases {
			f.Add("/" + a + " x")
		}
	}
	for _, s := range []string{"", "   ", "hello there", "/", "//", "/ plan", "/plan\nsecond line", "/run --max-steps=3", "/nope", "/é", "\x00/plan", "/plan\xff", " /continue 5 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		l, err := Parse(line)
		if err != nil {
			var u *UnknownCommandError
			if !errors.As(err, &u) {
				t.Fatalf("Parse(%q): unexpected error type %T: %v", line, err, err)
			}
			if err.Error() == "" {
				t.Fatalf("Parse(%q): empty error", line)
			}
			return
		}
		trimmed := strings.TrimSpace(line)
		switch {
		case l.Cmd == nil:
			if l.Text != trimmed {
				t.Fatalf("Parse(%q): text %q, want %q", line, l.Text, trimmed)
			}
			if strings.HasPrefix(trimmed, "/") {
				t.Fatalf("Parse(%q): a slash line came back as free text", line)
			}
		default:
			if Lookup(l.Name) != l.Cmd {
				t.Fatalf("Parse(%q): name %q does not look up to its command", line, l.Name)
			}
			if l.Args != strings.TrimSpace(l.Args) {
				t.Fatalf("Parse(%q): args not trimmed: %q", line, l.Args)
			}
		}
	})
}
