package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/procfacts"
	"github.com/relay-baton/relay-baton/workspace"
)

// TestBadInputs: each bad input gets a clear error that says what went
// wrong and what to do next; none panics or passes silently. Cases run
// through the CLI where a user would meet them, else through the library
// entry point the CLI and the room share.
//
// A full disk is a real 64 KiB tmpfs when this process may mount one
// (root), and a read-only .ai-session is `chattr +i` (root; permission
// bits do not stop root), a read-only bind mount, or mode 0500 for other
// users. Where none is possible the row is skipped, saying why; the events
// package also injects the full-disk error (TestAppendDiskFull), so it is
// covered everywhere.
func TestBadInputs(t *testing.T) {
	cli := func(args ...string) func(t *testing.T) string {
		return func(t *testing.T) string {
			code, _, errOut := runCLI(t, "", args...)
			if code == 0 {
				t.Fatalf("%v: exit 0, want a failure", args)
			}
			return errOut
		}
	}
	ws, s := chatWorkspace(t)
	cases := []struct {
		name string
		run  func(t *testing.T) string
		want []string // what went wrong, then what to do
	}{
		{"traversal session id", cli("send", "--workspace", ws, "--session", "../../etc", "hi"),
			[]string{`"../../etc"`, "must be a UUID", "Try: relay-baton targets"}},
		{"non-UUID session id", cli("tail", "--workspace", ws, "--session", "abc", "--no-follow"),
			[]string{`"abc"`, "must be a UUID", "Try: relay-baton targets"}},
		{"symlinked session folder", func(t *testing.T) string {
			ws2 := t.TempDir()
			os.MkdirAll(filepath.Join(ws2, workspace.ChatDir), 0o700)
			if err := os.Symlink(t.TempDir(), filepath.Join(ws2, workspace.ChatDir, chatSID)); err != nil {
				t.Fatal(err)
			}
			return cli("send", "--workspace", ws2, "--session", chatSID, "hi")(t)
		}, []string{"refusing a symlinked session-chat folder", "remove the link"}},
		{"symlinked inbox", func(t *testing.T) string {
			_, s2 := chatWorkspace(t)
			os.Remove(s2.InboxDir())
			if err := os.Symlink(t.TempDir(), s2.InboxDir()); err != nil {
				t.Fatal(err)
			}
			return cli("send", "--workspace", s2.Workspace, "--session", chatSID, "hi")(t)
		}, []string{"inbox", "refusing a symlinked", "remove the link"}},
		{"oversized message", cli("send", "--workspace", ws, "--session", chatSID, strings.Repeat("a", conversation.MaxMessageBytes+1)),
			[]string{"over 64 KB", "send a shorter message, or write the text to a file"}},
		{"invalid UTF-8", cli("send", "--workspace", ws, "--session", chatSID, "caf\xe9 au lait"),
			[]string{"not valid UTF-8", "re-encode the text as UTF-8"}},
		{"non-JSON inbox file", func(t *testing.T) string {
			name := "0000000000001-junk0001.json"
			if err := os.WriteFile(filepath.Join(s.InboxDir(), name), []byte("not json {"), 0o600); err != nil {
				t.Fatal(err)
			}
			res, err := s.Claim(conversation.LaneHook)
			if err != nil || res.OK || len(res.Rejected) != 1 {
				t.Fatalf("claim: %+v %v; want the file rejected and nothing claimed", res, err)
			}
			if _, err := os.Stat(filepath.Join(s.RejectedDir(), res.Rejected[0].Name)); err != nil {
				t.Fatalf("not moved to rejected/: %v", err)
			}
			// The hook stays silent (it must not break Claude Code's turn):
			// the record is the session's errors.log.
			b, _ := os.ReadFile(filepath.Join(s.Dir(), "errors.log"))
			return string(b)
		}, []string{"inbox file " + "0000000000001-junk0001.json", "moved to " + filepath.Join(s.Dir(), "rejected"), "not a JSON message"}},
		{"no transcript for the session", cli("tail", "--workspace", ws, "--session", chatSID, "--no-follow"),
			[]string{"no transcript found for session " + chatSID, "relay-baton targets"}},
		{"missing transcript", func(t *testing.T) string {
			register(t, s, filepath.Join(t.TempDir(), "gone.jsonl"))
			return cli("tail", "--workspace", ws, "--session", chatSID, "--no-follow", "--from-start")(t)
		}, []string{"gone.jsonl does not exist", "relay-baton targets"}},
		{"unreadable transcript (a directory)", func(t *testing.T) string {
			d := filepath.Join(t.TempDir(), "t.jsonl")
			os.Mkdir(d, 0o700)
			register(t, s, d)
			return cli("tail", "--workspace", ws, "--session", chatSID, "--no-follow", "--from-start")(t)
		}, []string{"t.jsonl is not a regular file", "relay-baton targets"}},
		{"unreadable transcript (mode 000)", func(t *testing.T) string {
			if os.Geteuid() == 0 {
				t.Skip("as root, mode 000 does not stop reads (the directory row covers root)")
			}
			p := filepath.Join(t.TempDir(), "t.jsonl")
			os.WriteFile(p, []byte("{}\n"), 0o000)
			register(t, s, p)
			return cli("tail", "--workspace", ws, "--session", chatSID, "--no-follow", "--from-start")(t)
		}, []string{"cannot read transcript", "permission denied", "fix the file's mode"}},
		{"full disk on append (tmpfs)", func(t *testing.T) string {
			root := smallTmpfs(t)
			d, err := workspace.EnsureSessionDir(root)
			if err != nil {
				t.Fatal(err)
			}
			l, err := events.OpenLog(workspace.LogPath(root))
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			fill(t, d)
			var last error
			for i := 0; i < 100 && last == nil; i++ { // a block may have room for a few lines
				last = l.Append(events.New("s", events.RoleUser, events.KindMessage, strings.Repeat("x", 3000)))
			}
			if last == nil {
				t.Fatal("100 appends succeeded on a full file system")
			}
			return last.Error()
		}, []string{"append to", "no space left on device", "the disk is full: free some space"}},
		{"full disk on enqueue (tmpfs)", func(t *testing.T) string {
			root := smallTmpfs(t)
			s3, err := conversation.OpenSession(root, chatSID)
			if err != nil {
				t.Fatal(err)
			}
			if err := s3.Ensure(); err != nil {
				t.Fatal(err)
			}
			fill(t, root)
			_, err = s3.Enqueue("x", strings.Repeat("y", 8000))
			if err == nil {
				t.Fatal("enqueue succeeded on a full file system")
			}
			return err.Error()
		}, []string{"enqueue into", "no space left on device", "the disk is full", "nothing was queued"}},
		{"read-only .ai-session", func(t *testing.T) string {
			root := t.TempDir()
			d, err := workspace.EnsureSessionDir(root)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(workspace.LogPath(root), nil, 0o600); err != nil {
				t.Fatal(err)
			}
			how := readOnly(t, d, workspace.LogPath(root))
			t.Logf("read-only by %s", how)
			_, err = events.OpenLog(workspace.LogPath(root))
			if err == nil {
				t.Fatal("opened a log in a read-only .ai-session for appending")
			}
			return err.Error()
		}, []string{"open conversation log", workspace.LogName, "not writable", "lsattr"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msg := c.run(t)
			t.Logf("%s", msg)
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q\n does not say %q", msg, w)
				}
			}
			if strings.Contains(msg, "panic") || strings.Contains(msg, "goroutine ") {
				t.Errorf("a panic: %s", msg)
			}
		})
	}
}

func register(t *testing.T, s *conversation.Session, transcript string) {
	t.Helper()
	if err := s.Register(conversation.Registration{SessionID: s.ID, TranscriptPath: transcript, Cwd: s.Workspace}); err != nil {
		t.Fatal(err)
	}
	s.RecordProcess(procfacts.ThisProcess()) // the session runs (as this test)
}

// smallTmpfs mounts a 64 KiB tmpfs (unmounted at the end of the test), or
// skips when this process may not mount.
func smallTmpfs(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs here (%v: %s); the events package injects the error instead", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// fill writes into dir until the file system is full.
func fill(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for range 1 << 12 {
		if _, err := f.Write(buf); err != nil {
			return
		}
	}
	t.Fatal("the small file system never filled")
}

// readOnly makes dir and file unwritable and says how: chattr +i as root,
// else a read-only bind mount, else mode bits (which do stop other users).
func readOnly(t *testing.T, dir, file string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		os.Chmod(file, 0o400)
		os.Chmod(dir, 0o500)
		t.Cleanup(func() { os.Chmod(dir, 0o700) })
		return "mode 0500/0400"
	}
	if err := exec.Command("chattr", "+i", file, dir).Run(); err == nil {
		t.Cleanup(func() { exec.Command("chattr", "-i", file, dir).Run() })
		return "chattr +i"
	}
	if err := exec.Command("mount", "--bind", "-o", "ro", dir, dir).Run(); err == nil {
		t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
		return "a read-only bind mount"
	}
	t.Skip("as root without chattr or mount, nothing here makes a folder read-only")
	return ""
}
