package main

var replayCommand = &command{
	Name:  "replay",
	Usage: "[--json] [--session ID] [--kind k1,k2] [--role r1,r2] [--since DURATION|TIMESTAMP] [--limit N] [--follow] [--file PATH]",
	Short: "Show the recorded conversation timeline (read-only)",
	Run:   notYet,
}
