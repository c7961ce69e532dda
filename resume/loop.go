package resume

// The /continue loop as its log records it: the halves of a step, why a
// loop stopped, and its step bounds. The loop (room) writes these; the
// reader here reads them back to offer an unfinished loop again.

import (
	"fmt"
	"strconv"
	"strings"
)

// Loop bounds.
const (
	DefaultMaxSteps = 3
	MaxMaxSteps     = 20
)

// ParseMaxSteps reads /continue's arguments: "", "N", "-n N",
// "--max-steps N" or "--max-steps=N". 0 means the default; the bound is 20.
func ParseMaxSteps(args string) (int, error) {
	f := strings.Fields(args)
	var v string
	switch {
	case len(f) == 0:
		return DefaultMaxSteps, nil
	case len(f) == 1 && strings.HasPrefix(f[0], "--max-steps="):
		v = strings.TrimPrefix(f[0], "--max-steps=")
	case len(f) == 1 && !strings.HasPrefix(f[0], "-"):
		v = f[0]
	case len(f) == 2 && (f[0] == "--max-steps" || f[0] == "-n"):
		v = f[1]
	default:
		return 0, fmt.Errorf("usage: /continue [--max-steps N | -n N | N], not %q", args)
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("--max-steps must be a whole number from 0 to %d, not %q", MaxMaxSteps, v)
	}
	return CheckMaxSteps(n)
}

// CheckMaxSteps bounds a --max-steps value: 0 means the default, the
// bound is MaxMaxSteps.
func CheckMaxSteps(n int) (int, error) {
	if n < 0 || n > MaxMaxSteps {
		return 0, fmt.Errorf("--max-steps must be from 0 to %d (0 = default %d), not %d", MaxMaxSteps, DefaultMaxSteps, n)
	}
	if n == 0 {
		n = DefaultMaxSteps
	}
	return n, nil
}

// StopReason says why a /continue loop ended.
type StopReason string

// The stop reasons.
const (
	StopMaxSteps   StopReason = "max steps"
	StopComplete   StopReason = "plan complete"
	StopNoProgress StopReason = "no progress"
	StopBudget     StopReason = "budget"
	StopFailure    StopReason = "agent failure"
	StopCancelled  StopReason = "cancelled"
	StopDeclined   StopReason = "declined"
)

// The halves of a loop step, as logged (meta.half).
const (
	HalfExecute = "execute" // the executor works on the plan's next step
	HalfPlan    = "plan"    // the planner updates plan.md from the step's outcome
)
