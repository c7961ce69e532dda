package codex

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/conversation/sessionid"
	"github.com/relay-baton/relay-baton/filelock"
	"github.com/relay-baton/relay-baton/safeio"
	"github.com/relay-baton/relay-baton/transcript"
)

// Home is Codex's home folder: $CODEX_HOME, else ~/.codex ("" when no
// home is known).
func Home() string {
	if d := os.Getenv("CODEX_HOME"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".codex")
}

// sessionsRoot is $CODEX_HOME/sessions.
func sessionsRoot() string {
	if h := Home(); h != "" {
		return filepath.Join(h, "sessions")
	}
	return ""
}

// FindRollout returns the rollout file of Codex thread id, or "".
func FindRollout(id string) string {
	root := sessionsRoot()
	if root == "" || !sessionid.IsUUID(id) {
		return ""
	}
	for _, pat := range []string{"*/*/*/rollout-*-" + id + ".jsonl", "rollout-*-" + id + ".jsonl"} {
		if m, _ := filepath.Glob(filepath.Join(root, pat)); len(m) > 0 {
			return m[len(m)-1]
		}
	}
	return ""
}

// maxMetaLine caps how much of a rollout's first line (session_meta, which
// carries the whole base instructions) is read.
const maxMetaLine = 4 << 20

// ReadRolloutMeta reads the session_meta line of a rollout.
func ReadRolloutMeta(path string) (transcript.RolloutMeta, bool) {
	f, err := safeio.OpenRegular(path) // a FIFO there does not block
	if err != nil {
		return transcript.RolloutMeta{}, false
	}
	defer f.Close()
	r := bufio.NewReaderSize(io.LimitReader(f, maxMetaLine), 64<<10)
	line, err := r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		var buf bytes.Buffer
		buf.Write(line)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = r.ReadSlice('\n')
			buf.Write(line)
		}
		line = buf.Bytes()
	}
	return transcript.ParseRolloutMeta(line)
}

// InTurn says whether a Codex thread is in a turn, from the end of its
// rollout: a task_started after the last task_complete / turn_aborted. A
// rollout untouched for stale is idle whatever it says (its process died
// mid-turn).
func InTurn(rollout string, now time.Time, stale time.Duration) bool {
	f, err := safeio.OpenRegular(rollout) // a FIFO there does not block
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || now.Sub(fi.ModTime()) > stale {
		return false
	}
	// The turn's boundary lines are small; 256 KB covers the big items
	// (tool outputs) written after a task_started.
	size := fi.Size()
	off := max(size-256<<10, 0)
	buf := make([]byte, size-off)
	if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return false
	}
	in, _ := transcript.RolloutTurnState(buf)
	return in
}

// Loaded reports whether thread id is loaded in a running codex
// process: codex holds an exclusive flock on
// $CODEX_HOME/thread-writer-locks/<id>.lock while it writes the thread
// (measured with 0.169.0). Whether another process holds it is a fact of
// the system (filelock.WriterHeld): Linux reads /proc/locks, other systems (and
// -tags portable) probe with a shared non-blocking lock dropped at once.
func Loaded(id string) bool {
	home := Home()
	if home == "" || !sessionid.IsUUID(id) {
		return false
	}
	p := filepath.Join(home, "thread-writer-locks", id+".lock")
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	return filelock.WriterHeld(p, fi)
}

// Binary is the codex CLI relay-baton runs for the queue lane and the
// hook trust: $RELAY_BATON_CODEX, else codex on PATH ("" when neither).
func Binary() string {
	if p := os.Getenv(agents.CodexBinEnv); p != "" {
		return p
	}
	if p, err := exec.LookPath("codex"); err == nil {
		return p
	}
	return ""
}

// Rollouts are the threads' rollout files under $CODEX_HOME/sessions, by
// thread id: every one of a thread known names, and of the others those
// written within maxAge or loaded in a running codex (Loaded) whose
// session_meta cwd passes in. Folders that cannot be read are passed over.
func Rollouts(now time.Time, maxAge time.Duration, known func(id string) bool, in func(cwd string) bool) map[string]string {
	seen := map[string]string{}
	root := sessionsRoot()
	if root == "" {
		return seen
	}
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && d.IsDir() && p != root {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() || !d.Type().IsRegular() || !transcript.IsRolloutPath(p) {
			return nil
		}
		base := strings.TrimSuffix(filepath.Base(p), ".jsonl")
		if len(base) < 36 {
			return nil
		}
		id := base[len(base)-36:]
		if !sessionid.IsUUID(id) {
			return nil
		}
		if !known(id) {
			if fi, err := d.Info(); err != nil || now.Sub(fi.ModTime()) > maxAge && !Loaded(id) {
				return nil
			}
			m, ok := ReadRolloutMeta(p)
			if !ok || !in(m.Cwd) {
				return nil
			}
		}
		seen[id] = p
		return nil
	})
	return seen
}

// ExecRun reports whether a rollout is a one-shot `codex exec` run (its
// session_meta's originator or source says so).
func ExecRun(m transcript.RolloutMeta) bool {
	return m.Originator == "codex_exec" || m.Source == "exec"
}
