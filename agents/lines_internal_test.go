package agents

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCommandLogFormat(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".ai-session")
	l, err := openCommandLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	prompt := strings.Repeat("p", 5000)
	l.start([]string{"claude", "-p", "--", prompt, "two words"})
	l.line("stdout", []byte(`{"type":"x"}`), 0)
	l.line("stderr", []byte("warn"), 0)
	l.line("stdout", nil, 99)
	l.exit(4)
	l.Close()
	b, _ := os.ReadFile(filepath.Join(dir, CommandsLogName))
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 5 {
		t.Fatalf("%q", b)
	}
	if !strings.HasPrefix(lines[0], "--- ") || !strings.Contains(lines[0], " START claude -p -- \"ppp") ||
		!strings.Contains(lines[0], "(5000 chars) \"two words\" ---") || len(lines[0]) > 400 {
		t.Errorf("header %q", lines[0])
	}
	want := []string{`[stdout] {"type":"x"}`, "[stderr] warn", "[stdout] (line of 99 bytes skipped)", "--- exit 4 ---"}
	for i, w := range want {
		if lines[i+1] != w {
			t.Errorf("line %d = %q want %q", i+1, lines[i+1], w)
		}
	}
	if !bytes.HasSuffix(b, []byte("\n")) {
		t.Error("no final newline")
	}
}
