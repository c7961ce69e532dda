package conversation

import (
	"os"
	"path/filepath"
	"testing"
)

// targets finds relay-baton's hooks in exec form too ("command" the binary,
// "args": ["hook", "stop"]), however the file is indented.
func TestClaudeHooksInExecForm(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	for _, settings := range []string{
		`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"/usr/local/bin/relay-baton","args":["hook","stop"],"timeout":30}]}]}}`,
		"{\n  \"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"/x/relay-baton\", \"args\": [\n \"hook\",\n \"stop\"\n]}]}]}\n}",
		`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"/usr/local/bin/relay-baton hook stop"}]}]}}`,
	} {
		ws := t.TempDir()
		p := filepath.Join(ws, ".claude", "settings.json")
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(settings), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := ClaudeHooksIn(ws); got != p {
			t.Errorf("%s: claudeHooksIn = %q, want %s", settings, got, p)
		}
	}
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, ".claude"), 0o755)
	os.WriteFile(filepath.Join(ws, ".claude", "settings.json"), []byte(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"/bin/echo","args":["hooks","stopped"]}]}]}}`), 0o644)
	if got := ClaudeHooksIn(ws); got != "" {
		t.Errorf("another program's hook taken for relay-baton's: %q", got)
	}
}
