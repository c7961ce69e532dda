package repl

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/relay-baton/relay-baton/events/render"
)

// The room tells the person when a run or a chat reply ends and they may
// be looking elsewhere: the terminal is not focused (the room asks for
// focus reports, CSI ?1004h, and termInput reads them), or the wait was
// long. How it tells them is RELAY_BATON_NOTIFY:
//
//	auto    (default) OSC 9 on terminals known to show it as a desktop
//	        notification (iTerm2, WezTerm, ghostty, kitty), OSC 777 on VTE
//	        terminals (GNOME Terminal, Tilix), else the bell
//	bell    the bell only (BEL)
//	osc9    OSC 9 ; text BEL
//	osc777  OSC 777 ; notify ; title ; text BEL
//	off     nothing
//
// and RELAY_BATON_NOTIFY_AFTER (seconds, default 20) is how long a wait
// must be to notify while the terminal is focused (0: only when unfocused).
// The text is the room's own (agent, command, how it ended), made inert.

// DefaultNotifyAfter is the wait after which the room notifies even when
// the terminal is focused.
const DefaultNotifyAfter = 20 * time.Second

// notifier writes the notification sequences; nil notifies nothing.
type notifier struct {
	w     io.Writer
	mode  string // bell, osc9, osc777
	after time.Duration
	// focus: 0 unknown (no report yet), 1 focused, 2 not focused.
	focus atomic.Int32
}

// newNotifier reads the settings from getenv; nil when notifications are
// off or the output is not a terminal.
func newNotifier(w io.Writer, getenv func(string) string) (*notifier, error) {
	mode := strings.ToLower(strings.TrimSpace(getenv("RELAY_BATON_NOTIFY")))
	switch mode {
	case "off", "none", "0":
		return nil, nil
	case "", "auto":
		mode = autoNotify(getenv)
	case "bell", "osc9", "osc777":
	default:
		return nil, fmt.Errorf("RELAY_BATON_NOTIFY=%q: use auto, bell, osc9, osc777 or off", mode)
	}
	n := &notifier{w: w, mode: mode, after: DefaultNotifyAfter}
	if v := strings.TrimSpace(getenv("RELAY_BATON_NOTIFY_AFTER")); v != "" {
		secs, err := strconv.ParseFloat(v, 64)
		if err != nil || secs < 0 {
			return n, fmt.Errorf("RELAY_BATON_NOTIFY_AFTER=%q: a number of seconds (0: only when the terminal is not focused)", v)
		}
		n.after = time.Duration(secs * float64(time.Second))
	}
	return n, nil
}

// autoNotify picks the richest way the terminal is known to support.
func autoNotify(getenv func(string) string) string {
	if getenv("TMUX") != "" || strings.HasPrefix(getenv("TERM"), "screen") {
		return "bell" // a multiplexer: its bell reaches the outer terminal
	}
	switch getenv("TERM_PROGRAM") {
	case "iTerm.app", "WezTerm", "ghostty":
		return "osc9"
	}
	if strings.Contains(getenv("TERM"), "kitty") {
		return "osc9"
	}
	if getenv("VTE_VERSION") != "" {
		return "osc777"
	}
	return "bell"
}

// setFocus records a focus report (CSI I: focused, CSI O: not).
func (n *notifier) setFocus(focused bool) {
	if n == nil {
		return
	}
	if focused {
		n.focus.Store(1)
	} else {
		n.focus.Store(2)
	}
}

// due reports whether an end after a wait of took notifies.
func (n *notifier) due(took time.Duration) bool {
	if n == nil {
		return false
	}
	return n.focus.Load() == 2 || (n.after > 0 && took >= n.after)
}

// sequence is what notify writes for text.
func (n *notifier) sequence(text string) string {
	text = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == ';' {
			return ' '
		}
		return r
	}, render.InertLine(render.Cut(text, 200)))
	switch n.mode {
	case "osc9":
		return "\x1b]9;" + text + "\x07"
	case "osc777":
		return "\x1b]777;notify;relay-baton;" + text + "\x07"
	}
	return "\x07"
}

// Notify tells the person that something they waited took for ended.
func (n *notifier) Notify(took time.Duration, text string) {
	if !n.due(took) {
		return
	}
	io.WriteString(n.w, n.sequence(text))
}
