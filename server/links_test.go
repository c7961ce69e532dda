package server

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The timeline and the live stream do not read a conversation.jsonl that
// a repository links to a file outside it.
func TestTimelineRefusesLinkedLog(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.jsonl")
	os.WriteFile(outside, []byte(`{"schemaVersion":1,"id":"evt_1","ts":"2026-05-29T10:00:00.000Z","sessionId":"s1","role":"user","kind":"message","text":"SECRET OUTSIDE"}`+"\n"), 0o600)
	fr := &fakeRoom{dir: filepath.Join(t.TempDir(), ".ai-session"), ctx: map[string]any{}}
	os.Mkdir(fr.dir, 0o700)
	os.Symlink(outside, fr.LogPath())
	base := serveLoopback(t, fr)
	for _, path := range []string{"/api/timeline", "/api/room/stream"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || strings.Contains(string(b), "SECRET") || !strings.Contains(string(b), "symlink") {
			t.Fatalf("GET %s through a linked log: %d %s", path, resp.StatusCode, b)
		}
	}
}
