package events

// The keys of Event.Refs: each names what the event's file is (a path
// relative to the session folder, or to the workspace for the chat lane's
// files).
const (
	RefPlan       = "plan"       // the plan the event wrote or followed
	RefBackup     = "backup"     // the previous version of a file the event replaced
	RefPrompt     = "prompt"     // a prompt too long to keep inline
	RefReview     = "review"     // the review the event wrote
	RefHandoff    = "handoff"    // the handoff document the event wrote
	RefInbox      = "inbox"      // a chat message waiting in a session's inbox
	RefDelivered  = "delivered"  // a chat message a lane claimed
	RefOutbox     = "outbox"     // a chat reply a session wrote
	RefTranscript = "transcript" // the transcript a chat reply was read from
)

// The documents the room writes in the session folder, which RefPlan,
// RefHandoff and RefReview name.
const (
	PlanFile    = "plan.md"
	HandoffFile = "handoff.md"
	ReviewFile  = "review.md"
)
