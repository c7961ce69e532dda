package hook

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/workspace"
)

// FuzzHookPayload: whatever Claude Code (or anything else) writes on a
// hook's stdin, decoding never panics, and a payload that opens a session
// names a folder inside the workspace's .claude/session-chat: no session
// id or cwd escapes it.
func FuzzHookPayload(f *testing.F) {
	const sid = "6f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b"
	f.Add([]byte(fmt.Sprintf(`{"session_id":%q,"transcript_path":"/root/.claude/projects/-x/%s.jsonl","cwd":"/tmp/ws","prompt_id":"p1","permission_mode":"default","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"Done.","background_tasks":[]}`, sid, sid)), "")
	f.Add([]byte(fmt.Sprintf(`{"session_id":%q,"cwd":"/tmp/ws","hook_event_name":"Stop","stop_hook_active":true}`, sid)), "/srv/project")
	f.Add([]byte(fmt.Sprintf(`{"session_id":%q,"transcript_path":"/x.jsonl","cwd":"/tmp/ws","hook_event_name":"SessionStart","source":"startup"}`, sid)), "")
	f.Add([]byte(`{"session_id":"../../etc","cwd":"/tmp/ws"}`), "")
	f.Add([]byte(`{"session_id":"6f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b/../../x","cwd":"relative"}`), "")
	f.Add([]byte(`not json`), "")
	f.Add([]byte(`[]`), "/ws")
	f.Add([]byte(`{"stop_hook_active":"yes"}`), "/ws")
	f.Fuzz(func(t *testing.T, payload []byte, projectDir string) {
		p, ws, ok := decodePayload(payload, projectDir)
		if !ok {
			return
		}
		if !filepath.IsAbs(ws) {
			t.Fatalf("workspace %q is not absolute", ws)
		}
		if projectDir != "" && ws != projectDir {
			t.Fatalf("CLAUDE_PROJECT_DIR %q ignored for %q", projectDir, ws)
		}
		s, err := conversation.OpenSession(ws, p.SessionID)
		if err != nil {
			return
		}
		base := filepath.Join(filepath.Clean(ws), workspace.ChatDir) + string(filepath.Separator)
		if !strings.HasPrefix(s.Dir(), base) || strings.Contains(s.Dir()[len(base):], string(filepath.Separator)) {
			t.Fatalf("session %q in %q opens %q, outside %q", p.SessionID, ws, s.Dir(), base)
		}
	})
}
