//go:build unix

package conversation

import (
	"path/filepath"
	"testing"
)

// A running `codex exec` whose hooks registered it (a chat folder) is a
// target; only an exec run no hook registered is left out.
func TestRegisteredCodexExecIsATarget(t *testing.T) {
	home := t.TempDir()
	t.Setenv("CODEX_HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	ws := t.TempDir()
	rollout := fakeCodexHome(t, home, execRollout, execThread, ws, 0)
	release := holdWriterLock(t, home, execThread) // a running codex holds it
	defer release()
	if ts, err := ListTargets(ws); err != nil || len(ts) != 0 {
		t.Fatalf("an unregistered exec run is a target: %+v %v", ts, err)
	}
	s, _ := OpenSession(ws, execThread)
	if err := s.Register(Registration{TranscriptPath: rollout, Cwd: filepath.Clean(ws)}); err != nil {
		t.Fatal(err)
	}
	ts, err := ListTargets(ws)
	if err != nil || len(ts) != 1 || ts[0].SessionID != execThread || !ts[0].ChatCapable || !ts[0].Loaded {
		t.Fatalf("the registered, running exec thread: %+v %v", ts, err)
	}
}
