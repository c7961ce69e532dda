package main

var chatCommand = &command{Name: "chat", Aliases: []string{"room"}, Short: "Open the Agent Room: a turn-based REPL with Claude and Codex", Run: notYet}
var planCommand = &command{Name: "plan", Usage: "<task>", Short: "Have the planner write plan.md (preview first)", Run: notYet}
var executeCommand = &command{Name: "execute", Short: "Run the executor against plan.md (preview first)", Run: notYet}
var handoffCommand = &command{Name: "handoff", Usage: "--to claude|codex", Short: "Build handoff.md and launch the next agent (preview first)", Run: notYet}
var reviewCommand = &command{Name: "review", Short: "Review changed files against the plan (read-only)", Run: notYet}
var statusCommand = &command{Name: "status", Short: "Show session status (read-only)", Run: notYet}
var budgetCommand = &command{Name: "budget", Short: "Show context-budget usage (read-only)", Run: notYet}
var doctorCommand = &command{Name: "doctor", Usage: "[--deep]", Short: "Check git, agent binaries, keys and .ai-session health (read-only)", Run: notYet}
var noteCommand = &command{Name: "note", Usage: "<text>", Short: "Append a note to the conversation log", Run: notYet}
