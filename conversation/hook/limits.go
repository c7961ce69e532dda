package hook

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/events/render"
)

// DefaultWaitTimeout is the hook timeout registered for the asyncRewake
// waiter: Claude Code kills a hook at its timeout and re-arms it only at the
// next Stop, so an idle session is reachable for this long after each turn.
// Note: `claude -p --input-format stream-json` waits for a running waiter
// before it exits once its stdin closes (measured with 2.1.328): such
// sessions should be installed with a shorter --wait-timeout, or killed.
const DefaultWaitTimeout = 24 * time.Hour

// WaiterMargin is how long before its hook timeout the waiter gives up on
// its own (exit 0, nothing claimed), so it is never killed mid-claim.
func WaiterMargin(hookTimeout time.Duration) time.Duration {
	return min(time.Minute, hookTimeout/10)
}

// hookEvents are the hook_event_name values each hook subcommand serves.
var hookEvents = map[string][]string{
	"stop":          {"Stop"},
	"wait":          {"Stop", "SessionStart"},
	"prompt-submit": {"UserPromptSubmit"},
	"session-start": {"SessionStart"},
	"notify":        {"Notification"},
}

// CheckEvent reports whether a payload's hook_event_name is one the hook
// subcommand sub serves: `hook stop` given a UserPromptSubmit payload (a
// hook registered under the wrong event, or a hand-made payload) must not
// claim a message. A payload without hook_event_name is refused too:
// Claude Code and Codex always send it.
func CheckEvent(sub, event string) error {
	want, ok := hookEvents[sub]
	if !ok {
		return fmt.Errorf("unknown hook %q", sub)
	}
	if slices.Contains(want, event) {
		return nil
	}
	got := fmt.Sprintf("event %q", render.Cut(event, 40))
	if event == "" {
		got = "no hook_event_name"
	}
	return fmt.Errorf("hook %s: payload has %s, not %s: ignored, nothing claimed (is the hook registered under another event? `relay-baton hook install` rewrites the entries)", sub, got, strings.Join(want, " or "))
}

// Budget is how long the Stop, UserPromptSubmit and SessionStart hooks
// may work: well under the 30 s timeout they are registered with, so that
// Claude Code never has to kill one (a claim cut short is recovered by the
// next lane). RELAY_BATON_HOOK_BUDGET overrides it (tests).
func Budget() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("RELAY_BATON_HOOK_BUDGET")); err == nil && d > 0 {
		return d
	}
	return 10 * time.Second
}

// RunBounded runs fn in a goroutine and waits for it: for at most limit
// (0: no limit) and, once ctx ends (a signal), for at most grace more. It
// reports whether fn finished; when it did not, the caller returns and the
// process exits with fn cut short.
func RunBounded(ctx context.Context, limit, grace time.Duration, fn func()) bool {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	var expire <-chan time.Time
	if limit > 0 {
		t := time.NewTimer(limit)
		defer t.Stop()
		expire = t.C
	}
	select {
	case <-done:
		return true
	case <-expire:
		return false
	case <-ctx.Done():
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}
