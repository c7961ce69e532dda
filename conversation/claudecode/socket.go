package claudecode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/relay-baton/relay-baton/conversation/peer"
	"github.com/relay-baton/relay-baton/safeio"
)

// PostTimeout bounds one post when the caller gives none: the dial, and
// the write of both lines.
const PostTimeout = 2 * time.Second

// Post posts text to the messaging socket at path as one user message: the
// auth line (when there is a token), then
// {"type":"user","message":{"role":"user","content":text}}, written at
// once, within timeout (dial and write) and while ctx lasts (its end
// closes the connection; the error then wraps ctx.Err()). It never blocks longer and never
// opens anything but a socket: the path is checked and the listening end
// must be a process of this user, pid itself when known (not 0;
// peer.Dial); otherwise nothing is written.
func Post(ctx context.Context, path, token string, pid int, text string, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = PostTimeout
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if token != "" {
		_ = enc.Encode(struct {
			Type  string `json:"type"`
			Token string `json:"token"`
		}{"auth", token})
	}
	type msg struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	if err := enc.Encode(struct {
		Type    string `json:"type"`
		Message msg    `json:"message"`
	}{"user", msg{"user", text}}); err != nil {
		return err
	}
	c, err := peer.Dial(ctx, path, pid, timeout)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := c.Write(buf.Bytes()); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w: write to %s: %w", peer.ErrRefused, path, ctx.Err())
		}
		return fmt.Errorf("%w: write to %s: %w", peer.ErrRefused, path, opErr(err))
	}
	if uc, ok := c.(*net.UnixConn); ok {
		_ = uc.CloseWrite() // the end of the message
	}
	return nil
}

// EnqueuedInTranscript reports whether the transcript at path shows, after
// off, Claude Code taking message id into its queue (a queue-operation
// enqueue line): a message posted to the socket of a session busy in a
// long tool call shows only that until the tool returns, and must not be
// delivered again meanwhile.
func EnqueuedInTranscript(path string, off int64, id string) bool {
	if path == "" {
		return false
	}
	f, err := safeio.OpenRegular(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() < off {
		off = 0 // replaced or truncated: all of it
	}
	if _, err := f.Seek(off, 0); err != nil {
		return false
	}
	needle := []byte("chat message " + id + " ")
	br := bufio.NewReaderSize(f, 64<<10)
	head := true // at the start of a line
	for {
		frag, err := br.ReadSlice('\n')
		if head && bytes.Contains(frag, []byte(`"queue-operation"`)) && bytes.Contains(frag, []byte(`"enqueue"`)) && bytes.Contains(frag, needle) {
			return true
		}
		switch {
		case err == nil:
			head = true
		case errors.Is(err, bufio.ErrBufferFull):
			head = false // a line longer than the buffer: only its start is looked at
		default:
			return false
		}
	}
}

// opErr is the innermost error of a net error, without the addresses
// (which repeat the path).
func opErr(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err
	}
	return err
}
