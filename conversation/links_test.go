package conversation

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/conversation/chatlog"
	"github.com/relay-baton/relay-baton/procfacts"
	"github.com/relay-baton/relay-baton/workspace"
)

// A repository whose .claude, or .claude/session-chat, is a symlink (to
// anywhere) gets no chat folder, message, log or registration written
// through it.
func TestLinkedChatFoldersNotFollowedForWrites(t *testing.T) {
	for _, linked := range []string{".claude", workspace.ChatDir} {
		t.Run(linked, func(t *testing.T) {
			ws := t.TempDir()
			elsewhere := t.TempDir()
			if linked == workspace.ChatDir {
				os.Mkdir(filepath.Join(ws, ".claude"), 0o755)
			}
			if err := os.Symlink(elsewhere, filepath.Join(ws, linked)); err != nil {
				t.Fatal(err)
			}
			s, err := OpenSession(ws, testSID)
			if err != nil {
				t.Fatal(err)
			}
			err = s.Ensure()
			if !errors.Is(err, errLinkedFolder) || !strings.Contains(err.Error(), filepath.Join(ws, linked)) {
				t.Fatalf("Ensure through a linked %s: %v, want errLinkedFolder naming it", linked, err)
			}
			if _, err := s.Enqueue("x", "secret"); err == nil {
				t.Fatal("Enqueue through the link succeeded")
			}
			s.AppendLog(chatlog.Entry{Role: "user", Text: "secret"})
			s.RecordError(errors.New("secret"))
			s.Register(Registration{Cwd: ws})
			s.RecordProcess(procfacts.ThisProcess())
			var found []string
			filepath.Walk(elsewhere, func(p string, fi os.FileInfo, err error) error {
				if p != elsewhere {
					found = append(found, p)
				}
				return nil
			})
			if len(found) > 0 {
				t.Fatalf("written through the link: %v", found)
			}
		})
	}
}
