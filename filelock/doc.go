// Package filelock holds the file-system operations that processes
// coordinate through: an exclusive lock on an open file (flock(2),
// LockFileEx), taken at once (Try) or waited for (Wait) and released
// (Unlock); whether another process holds one (Held, WriterHeld: Codex's
// lock on a rollout); and a rename that fails rather than replace an
// existing file (RenameNoReplace: renameat2, renamex_np, MoveFileEx, or a
// hard link under a folder lock elsewhere). The session-chat protocol
// claims messages with them; safeio's LockFile is built on them.
package filelock
