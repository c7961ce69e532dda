// Package conversation is the orchestrator lane: chatting with an
// already-running Claude Code or Codex session (codex.go) through a file
// inbox its hooks deliver.
//
//	Send ─► inbox/<ms>-<id>.json ─┬─ HookStop (turn end) ─────┐
//	                              ├─ HookWait (idle, rewake) ─┼─► delivered/<id>.json ─► the session
//	                              └─ Session.Monitor (wait) ──┘
//	the session's transcript ─► Tail ─► events.Activity ─► Follow (queued … end of turn) ─► view.Follow
//	ListTargets ─► Target.State, Target.Status ─► view.Targets, view.FindTarget, view.TargetsReport (package view)
//	hook.Run (package hook: payload, mode, time bound) ─► HookStop, HookWait, HookPromptSubmit, HookSessionStart, HookNotify
//
// package main, the room and the server are its clients: they parse flags
// or input, call one of these, and render what comes back. Where its
// folders live is workspace's; putting the hooks into an agent's
// configuration is hookinstall's; process facts are procfacts'. What is
// known of the agents' sessions from outside them is claudecode's (Claude
// Code's registry, socket and transcript folders) and codex's (a thread's
// rollout, writer lock, TUI and steer); the chat folder's logs are
// chatlog's.
package conversation
