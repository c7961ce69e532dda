package selftest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The recorder stores each payload in a new file per event, blocks the
// first Stop of a turn only (stop_hook_active false) and never stores the
// messaging token.
func TestRecordHook(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(HookBlockEnv, "CHAT")
	t.Setenv("CLAUDE_CODE_MESSAGING_TOKEN", "secret-token-value")
	t.Setenv("CLAUDE_CODE_MESSAGING_SOCKET", "")
	t.Setenv("CLAUDE_CODE_SESSION_ID", "s1")
	var out bytes.Buffer
	if err := RecordHook(dir, strings.NewReader(`{"hook_event_name":"Stop","stop_hook_active":false,"session_id":"s1"}`), &out); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(out.String()); got != `{"decision":"block","reason":"CHAT"}` {
		t.Fatalf("first Stop: stdout %q, want the block decision", got)
	}
	out.Reset()
	if err := RecordHook(dir, strings.NewReader(`{"hook_event_name":"Stop","stop_hook_active":true}`), &out); err != nil {
		t.Fatal(err)
	}
	if out.Len() != 0 {
		t.Fatalf("Stop with stop_hook_active: stdout %q, want nothing", out.String())
	}
	if err := RecordHook(dir, strings.NewReader("not json \x1b[31m"), &out); err != nil {
		t.Fatal(err)
	}
	stops := readRecords(dir, "Stop")
	if len(stops) != 2 || !stops[0].Blocked || stops[1].Blocked || stops[0].Env["CLAUDE_CODE_SESSION_ID"] != "s1" || !stops[0].Token {
		t.Fatalf("records %+v", stops)
	}
	if len(readRecords(dir, "unknown")) != 1 {
		t.Fatal("a payload that is not JSON was not recorded as unknown")
	}
	names, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, n := range names {
		b, _ := os.ReadFile(n)
		if bytes.Contains(b, []byte("secret-token-value")) {
			t.Fatalf("%s holds the messaging token", n)
		}
	}
	// A planted link in the folder is never written through.
	target := filepath.Join(t.TempDir(), "victim")
	if err := os.Symlink(target, filepath.Join(dir, "Notification-001.json")); err != nil {
		t.Fatal(err)
	}
	if err := RecordHook(dir, strings.NewReader(`{"hook_event_name":"Notification"}`), &out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Fatalf("written through a symlink: %v", err)
	}
}
