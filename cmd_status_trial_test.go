package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/relay-baton/relay-baton/events"
)

// A one-shot status names the room session of the log's newest event, the
// same on every call, and none when the log has none: it never makes one up.
func TestOneShotStatusNamesTheLogsSession(t *testing.T) {
	dir := roomRepo(t)
	sessionOf := func() string {
		t.Helper()
		code, out, errs := runCLI(t, "", "status", "--path", dir, "--json")
		var st struct {
			SessionID *string `json:"sessionId"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.SessionID == nil {
			t.Fatalf("status --json: %d %q %q", code, out, errs)
		}
		return *st.SessionID
	}
	if got := sessionOf(); got != "" {
		t.Errorf("no log yet: sessionId %q, want none", got)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".ai-session"), 0o700); err != nil {
		t.Fatal(err)
	}
	lg, err := events.OpenLog(filepath.Join(dir, ".ai-session", "conversation.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	const older, room = "11111111-2222-4333-8444-555555555555", "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"
	for _, sid := range []string{older, room} {
		if err := lg.Append(events.New(sid, events.RoleUser, events.KindMessage, "hello")); err != nil {
			t.Fatal(err)
		}
	}
	lg.Close()
	for i := range 2 {
		if got := sessionOf(); got != room {
			t.Errorf("call %d: sessionId %q, want the log's newest %s", i+1, got, room)
		}
	}
}
