// Package worktrack is the room's account of what the executor's runs
// change and the way back, terminal-free: the run in a git worktree of
// its own (package runs) from its reservation on a preview to its /apply
// or /undo, the snapshots of a run in place, and the commands that act on
// them (/diff, /apply, /undo, /runs). The engine (package room) drives a
// Tracker through a few calls around each agent run (RunDir, Ready,
// Enter, HoldPending, Before, After) and hands it what it needs of the
// engine as Deps: the repository, the clock, a writer, the event log and
// the confirmation of a change to the user's files.
package worktrack
