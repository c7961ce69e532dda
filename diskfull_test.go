package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/workspace"
)

// tmpfsAt mounts a 64 KiB tmpfs on dir (unmounted at the end of the test),
// or skips when this process may not mount (CI runs as root, so it runs
// there).
func tmpfsAt(t *testing.T, dir string) {
	t.Helper()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs here (%v: %s)", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
}

// On a full disk `note` records nothing: it says so and exits 1, and
// never prints "noted.".
func TestNoteDiskFull(t *testing.T) {
	root := roomRepo(t)
	sd := filepath.Join(root, ".ai-session")
	if err := os.Mkdir(sd, 0o700); err != nil {
		t.Fatal(err)
	}
	tmpfsAt(t, sd)
	if code, out, errs := runCLI(t, "", "note", "--path", root, "first"); code != 0 || !strings.Contains(out, "noted.") {
		t.Fatalf("note on a disk with room: %d %q %q", code, out, errs)
	}
	fill(t, sd)
	var code int
	var out, errs, text string
	for i := 0; i < 100; i++ { // the log's last block may have room for a few notes
		text = "N" + strconv.Itoa(i) + strings.Repeat("n", 3000)
		if code, out, errs = runCLI(t, "", "note", "--path", root, text); code != 0 {
			break
		}
	}
	if code != 1 || strings.Contains(out, "noted.") {
		t.Fatalf("note on a full disk: exit %d, stdout %q; want exit 1 and no \"noted.\"", code, out)
	}
	for _, want := range []string{"note not recorded", "no space left on device", "free some space"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr %q lacks %q", errs, want)
		}
	}
	// The event is not in the log (a line torn by the full disk is
	// skipped by every reader).
	var notes []string
	if _, err := events.ReadFile(workspace.LogPath(root), func(e events.Event) error { notes = append(notes, e.Text); return nil }); err != nil {
		t.Fatal(err)
	}
	for _, n := range notes {
		if strings.HasPrefix(n, text[:8]) {
			t.Fatalf("the note said not recorded (%.8s) is in the log", text)
		}
	}
	if len(notes) == 0 || notes[0] != "first" {
		t.Fatalf("the notes before the full disk are gone: %.80q", notes)
	}
}

// A Stop hook that cannot claim a waiting message (a full disk) says so
// on stderr and exits 1 (Claude Code shows it as the hook's error), and
// the message stays queued: once there is room, the next Stop delivers it.
func TestHookStopDiskFull(t *testing.T) {
	ws := t.TempDir()
	tmpfsAt(t, ws)
	s, err := conversation.OpenSession(ws, chatSID)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ensure(); err != nil {
		t.Fatal(err)
	}
	m, err := s.Enqueue("x", "this must not be lost")
	if err != nil {
		t.Fatal(err)
	}
	fill(t, ws)
	code, out, errOut := relayBaton(t, context.Background(), nil, payload(ws, ""), "hook", "stop")
	if code != 1 || out != "" {
		t.Fatalf("hook stop on a full disk: exit %d, stdout %q, stderr %q; want exit 1 and nothing on stdout", code, out, errOut)
	}
	for _, want := range []string{"hook stop: a chat message is waiting but could not be claimed", "no space left on device", "stays queued", "free some space"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q lacks %q", errOut, want)
		}
	}
	if strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("stderr is not one line: %q", errOut)
	}
	if st, err := s.State(m.ID); err != nil || !st.Queued {
		t.Fatalf("the message is no longer queued: %+v %v", st, err)
	}
	if err := os.Remove(filepath.Join(ws, "filler")); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = relayBaton(t, context.Background(), nil, payload(ws, ""), "hook", "stop")
	if code != 0 || !strings.Contains(out, `"decision":"block"`) || !strings.Contains(out, "this must not be lost") {
		t.Fatalf("hook stop with room again: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
