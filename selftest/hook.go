package selftest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// HookFlag is the hidden flag of `relay-baton selftest` that makes it the
// hook recorder (RecordHook) of the CLIs it runs. The folder comes from
// HookDirEnv, set in the run's environment (hooks inherit the environment
// of the process that started the CLI); without it the recorder does
// nothing.
const HookFlag = "hook-recorder"

// ExecFormArg, after HookFlag, marks the recorder started by an exec-form
// hook: it records into the folder of that name inside HookDirEnv's.
const ExecFormArg = "exec-form"

// HookDirEnv names the folder the hook recorder writes into.
const HookDirEnv = "RELAY_BATON_SELFTEST_HOOK_DIR"

// HookBlockEnv, set with HookDirEnv, makes the recorder answer the first
// Stop of a turn (stop_hook_active false) with {"decision":"block",
// "reason": its value}: the way relay-baton's Stop hook delivers a chat
// message.
const HookBlockEnv = "RELAY_BATON_SELFTEST_BLOCK"

// hookEnvKeys are the variables of a hook's environment relay-baton reads.
// The messaging token is a secret: only whether it is set is recorded.
var hookEnvKeys = []string{
	"CLAUDE_PROJECT_DIR", "CLAUDE_CODE_SESSION_ID", "CLAUDE_PID", "CLAUDE_CODE_ENTRYPOINT",
	"CLAUDE_CODE_SESSION_ATTENDED", "CLAUDECODE", "CLAUDE_CODE_MESSAGING_SOCKET",
}

// record is what the recorder writes for one hook run.
type record struct {
	Event   string            `json:"event"`
	Payload json.RawMessage   `json:"payload"`
	Env     map[string]string `json:"env"`
	Token   bool              `json:"token"`  // CLAUDE_CODE_MESSAGING_TOKEN was set
	Socket  string            `json:"socket"` // "accepts" | "refused: ..." | "" (no socket variable)
	Blocked bool              `json:"blocked"`
}

// maxHookPayload caps what the recorder reads (last_assistant_message can
// be long; the mock's answers are short).
const maxHookPayload = 8 << 20

// RecordHook is the hook recorder: it reads a hook payload from in, writes
// it with the hook's environment to a new file in dir (named after the
// event, numbered in arrival order) and, for a Stop hook with HookBlockEnv
// set and stop_hook_active false, prints the block decision on out. It
// never fails the CLI's session: a payload it cannot store is recorded as
// an error file.
func RecordHook(dir string, in io.Reader, out io.Writer) error {
	b, err := io.ReadAll(io.LimitReader(in, maxHookPayload))
	if err != nil {
		return err
	}
	var p struct {
		Event  string `json:"hook_event_name"`
		Active bool   `json:"stop_hook_active"`
	}
	if json.Unmarshal(b, &p) != nil || p.Event == "" {
		p.Event = "unknown"
	}
	r := record{Event: p.Event, Payload: json.RawMessage(b), Env: map[string]string{}}
	if !json.Valid(b) {
		r.Payload, _ = json.Marshal(string(b))
	}
	for _, k := range hookEnvKeys {
		if v, ok := os.LookupEnv(k); ok {
			r.Env[k] = v
		}
	}
	r.Token = os.Getenv("CLAUDE_CODE_MESSAGING_TOKEN") != ""
	if sock := os.Getenv("CLAUDE_CODE_MESSAGING_SOCKET"); sock != "" {
		r.Socket = dialSocket(sock)
	}
	reason := os.Getenv(HookBlockEnv)
	if p.Event == "Stop" && reason != "" && !p.Active {
		r.Blocked = true
	}
	line, _ := json.Marshal(r)
	if err := writeNew(dir, safeName(p.Event), line); err != nil {
		return err
	}
	if r.Blocked {
		d, _ := json.Marshal(map[string]string{"decision": "block", "reason": reason})
		_, err := fmt.Fprintf(out, "%s\n", d)
		return err
	}
	return nil
}

// dialSocket says whether the session's messaging socket takes a
// connection (it is closed again at once, nothing is posted).
func dialSocket(path string) string {
	c, err := net.DialTimeout("unix", path, 5*time.Second)
	if err != nil {
		return "refused: " + err.Error()
	}
	c.Close()
	return "accepts"
}

// safeName keeps an event name usable as a file name.
func safeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 || b.Len() > 64 {
		return "unknown"
	}
	return b.String()
}

// writeNew writes b to dir/<event>-<n>.json with the first free n, never
// over an existing file (O_EXCL).
func writeNew(dir, event string, b []byte) error {
	for n := 1; n < 1000; n++ {
		f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("%s-%03d.json", event, n)), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return err
		}
		_, err = f.Write(b)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	return fmt.Errorf("selftest hook recorder: too many records in %s", dir)
}

// readRecords returns the records of event in dir, in arrival order.
func readRecords(dir, event string) []record {
	names, _ := filepath.Glob(filepath.Join(dir, event+"-*.json"))
	sort.Strings(names)
	var out []record
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			continue
		}
		var r record
		if json.Unmarshal(b, &r) == nil {
			out = append(out, r)
		}
	}
	return out
}

// payload decodes a record's payload into v.
func (r record) payload(v any) error {
	return json.Unmarshal(r.Payload, v)
}
