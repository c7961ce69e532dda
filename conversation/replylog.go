package conversation

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/relay-baton/relay-baton/conversation/chatlog"
)

// logReplyOnce appends text, the reply to message id, to log.jsonl unless
// it is there already: whoever sees the reply first (the Stop hook storing
// it in outbox/, a follower at the turn's end: send --follow, the room,
// serve) claims its mark, outbox/<id>.logged, created exclusively, and
// writes it; the others find the mark and write nothing. An empty reply is
// not logged (and claims nothing: a later reader may have its text).
func logReplyOnce(s *Session, id, text, source string) {
	if validMessageID(id) != nil || strings.TrimSpace(text) == "" || checkDir(s.OutboxDir()) != nil {
		return
	}
	f, err := os.OpenFile(filepath.Join(s.OutboxDir(), id+".logged"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return // logged by another reader (or the folder cannot take the mark)
	}
	f.Close()
	if err := s.AppendLog(chatlog.Entry{Role: "agent", Text: text, ID: id, Source: source}); err != nil {
		s.RecordError(err)
	}
}
