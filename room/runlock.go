package room

import "github.com/relay-baton/relay-baton/room/runlock"

// One agent run at a time per repository is package runlock's (the
// engine's e.lock): a run's preview is refused while another screen's run
// holds the repository, and each run holds it while it runs.

// RunLockFile and RunHolderFile are the lock and its holder's record,
// inside .ai-session.
const (
	RunLockFile   = runlock.LockFile
	RunHolderFile = runlock.HolderFile
)

// RunHolder is the agent run that holds a repository's run lock.
type RunHolder = runlock.Holder

// RunHeldError is an agent run refused because another one holds the
// repository.
type RunHeldError = runlock.HeldError

// RunHeldBy reads whether an agent run holds the repository at root: nil
// when none does.
func RunHeldBy(root string) *RunHolder { return runlock.HeldBy(root) }

// SetScreen names the screen this engine serves, for the run lock's
// record another screen shows ("relay-baton serve's page").
func (e *Engine) SetScreen(name string) { e.lock.SetScreen(name) }
