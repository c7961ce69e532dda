package main

var sendCommand = &command{Name: "send", Usage: "[--session ID | --lead] [--from NAME] TEXT|-", Short: "Queue a chat message for a running Claude Code session", Run: notYet}
var targetsCommand = &command{Name: "targets", Usage: "[--json]", Short: "List Claude Code sessions in this workspace that can be chatted with", Run: notYet}
var tailCommand = &command{Name: "tail", Usage: "--session ID [--from-start] [--no-follow] [--json]", Short: "Stream a session's transcript as activity", Run: notYet}
var waitCommand = &command{Name: "wait", Usage: "--session ID [--once]", Short: "Block until a chat message arrives, claim it and print it (Monitor lane)", Run: notYet}
var hookCommand = &command{Name: "hook", Usage: "stop|wait|session-start|install", Short: "Claude Code hooks that deliver chat messages", Run: notYet}
