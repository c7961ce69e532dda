package repl

import (
	"strings"
	"testing"
	"time"
)

func TestNotifierSettings(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, c := range []struct {
		env  []string
		mode string // "" = off
	}{
		{nil, "bell"},
		{[]string{"RELAY_BATON_NOTIFY", "off"}, ""},
		{[]string{"TERM_PROGRAM", "iTerm.app"}, "osc9"},
		{[]string{"TERM", "xterm-kitty"}, "osc9"},
		{[]string{"VTE_VERSION", "7600"}, "osc777"},
		{[]string{"VTE_VERSION", "7600", "TMUX", "/tmp/x"}, "bell"},
		{[]string{"RELAY_BATON_NOTIFY", "osc777"}, "osc777"},
	} {
		n, err := newNotifier(nil, env(c.env...))
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if n != nil {
			got = n.mode
		}
		if got != c.mode {
			t.Errorf("%v: mode %q, want %q", c.env, got, c.mode)
		}
	}
	if _, err := newNotifier(nil, env("RELAY_BATON_NOTIFY", "loud")); err == nil || !strings.Contains(err.Error(), "auto, bell, osc9, osc777 or off") {
		t.Errorf("a bad setting: %v", err)
	}
	n, _ := newNotifier(nil, env("RELAY_BATON_NOTIFY_AFTER", "0"))
	if n.due(time.Hour) {
		t.Error("NOTIFY_AFTER=0 notified a focused terminal")
	}
	n.setFocus(false)
	if !n.due(0) {
		t.Error("an unfocused terminal was not notified")
	}
	n, _ = newNotifier(nil, env())
	if n.due(DefaultNotifyAfter-time.Second) || !n.due(DefaultNotifyAfter) {
		t.Error("the default wait is not DefaultNotifyAfter")
	}
	// The text is inert: no sequence of its own ends the OSC early.
	n.mode = "osc9"
	if s := n.sequence("claude \x07\x1b]0;evil\x1b\\ /ask"); strings.Count(s, "\x07") != 1 || strings.Count(s, "\x1b") != 1 {
		t.Errorf("sequence %q", s)
	}
}
