package room

// The documents the room writes in the session folder.
const (
	PlanFile    = "plan.md"
	HandoffFile = "handoff.md"
	ReviewFile  = "review.md"
)
