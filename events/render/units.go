package render

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/events"
)

// Ago renders how long ago t was, coarsely: 45s, 12m, 3h, 2d.
func Ago(d time.Duration) string {
	switch {
	case d < 0:
		d = 0
		fallthrough
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	}
	return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
}

// Money shows a cost in dollars with two significant digits below a cent
// ($0.00014, $0.0012), cents above ($0.25, $12.40): never $0.000 for a
// cost that is not nothing.
func Money(usd float64) string {
	if usd <= 0 {
		return "$0"
	}
	digits := 2
	if usd < 0.1 {
		digits = int(-math.Floor(math.Log10(usd))) + 1
	}
	return fmt.Sprintf("$%.*f", min(digits, 10), usd)
}

// UsageWords is "$0.00042, 30 in / 15 out tokens": a run's usage as the
// room, /costs and replay show it (the cost when one was reported).
// Token counts of nothing are left out ("$0.042" alone), and so is a cost
// of nothing; with neither it is "no usage reported".
func UsageWords(u events.Usage) string {
	var parts []string
	if u.CostUSD > 0 {
		parts = append(parts, Money(u.CostUSD))
	}
	if in := u.InputTokens + u.CachedInputTokens; in+u.OutputTokens > 0 {
		parts = append(parts, fmt.Sprintf("%d in / %d out tokens", in, u.OutputTokens))
	}
	if len(parts) == 0 {
		return "no usage reported"
	}
	return strings.Join(parts, ", ")
}

// ShortID is a session id cut to its first 8 characters, as the room
// shows it.
func ShortID(id string) string { return id[:min(8, len(id))] }
