// Package codex is what relay-baton knows of Codex CLI threads from
// outside them: Codex's home folder (Home), a thread's rollout file
// ($CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl:
// FindRollout, its session_meta line ReadRolloutMeta, whether it is in a
// turn InTurn), whether a running codex holds the thread loaded (Loaded,
// its writer lock) and whether only an app-server daemon does, with no TUI
// left to show it (TUIGone), the codex CLI relay-baton runs (Binary), and
// the steer of a message into a running turn through the app-server
// daemon's control socket (ControlSocket, Steer). Package conversation
// builds its Codex lanes (queue, steer) and targets on it; it knows no
// chat folder.
package codex
