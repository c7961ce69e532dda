package hookinstall

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/conversation/codex"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/procfacts"
)

// Codex hooks (measured with 0.169.0): $CODEX_HOME/hooks.json or
// <project>/.codex/hooks.json hold {"hooks":{"Stop":[{"hooks":[{"type":
// "command","command":...,"timeout":N}]}]}}, the same shape as Claude
// Code's settings, so MergeHooks writes them. Codex runs a hook only once
// it is trusted: config.toml must hold
//
//	[hooks.state."<hooks.json path>:<event>:<group>:<handler>"]
//	trusted_hash = "sha256:..."
//
// with the hash Codex computes for that hook. relay-baton does not compute
// the hash itself: it asks `codex app-server` (JSON-RPC over stdio) for
// hooks/list, which reports each hook's key, currentHash and trustStatus,
// and records the trust of its own hooks, and only those, with
// config/batchWrite, so Codex's own config writer edits config.toml.

// CodexHooksPath returns the hooks.json of a scope: user
// ($CODEX_HOME/hooks.json, the default) or project
// (<workspace>/.codex/hooks.json, read by Codex only in a trusted project).
func CodexHooksPath(scope, workspace string) (string, error) {
	switch scope {
	case "user", "":
		h := codex.Home()
		if h == "" {
			return "", errors.New("cannot find Codex's home: set CODEX_HOME")
		}
		return filepath.Join(h, "hooks.json"), nil
	case "project":
		return filepath.Join(workspace, ".codex", "hooks.json"), nil
	}
	return "", fmt.Errorf("for --agent codex the scope must be user or project, not %q", scope)
}

// codexHooks are the entries registered for Codex: the same commands as for
// Claude Code, which read Codex's payload too. Codex has no asyncRewake:
// the idle lane is `codex queue` (DeliverQueue).
func codexHooks(o HookOptions) []HookEntry {
	return []HookEntry{
		{Event: "Stop", Command: HookCommand(o.Binary, "stop"), Timeout: 30},
		{Event: "SessionStart", Command: HookCommand(o.Binary, "session-start"), Timeout: 30},
		{Event: "UserPromptSubmit", Command: HookCommand(o.Binary, "prompt-submit"), Timeout: 30},
	}
}

// CodexHookStatus is one hook as `codex app-server` reports it.
type CodexHookStatus struct {
	Key         string `json:"key"` // <path>:<event>:<group>:<handler>
	EventName   string `json:"eventName"`
	Command     string `json:"command"`
	SourcePath  string `json:"sourcePath"`
	CurrentHash string `json:"currentHash"`
	TrustStatus string `json:"trustStatus"` // trusted, untrusted, modified, managed
	Enabled     bool   `json:"enabled"`
}

// Ours reports whether the hook is one relay-baton registers.
func (h CodexHookStatus) Ours() bool { return isOurs(h.Command) }

// CodexAppServer is one `codex app-server` process spoken to over stdio.
type CodexAppServer struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	nextID int
	stderr *strings.Builder
}

// StartCodexAppServer starts `bin app-server` and initializes it. The
// process ends when ctx ends or Close is called. env, when given, is its
// whole environment (relay-baton selftest points CODEX_HOME at a temporary
// folder); else it inherits relay-baton's.
func StartCodexAppServer(ctx context.Context, bin string, env ...string) (*CodexAppServer, error) {
	cmd := exec.CommandContext(ctx, bin, "app-server")
	if len(env) > 0 {
		cmd.Env = env
	}
	procfacts.OwnGroup(cmd)
	cmd.WaitDelay = 2 * time.Second
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	cmd.Stderr = &limitedWriter{w: &stderr, n: 16 << 10}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s app-server: %w", bin, err)
	}
	a := &CodexAppServer{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20), nextID: 1, stderr: &stderr}
	if _, err := a.Call("initialize", map[string]any{"clientInfo": map[string]any{"name": "relay-baton", "version": "1"}}); err != nil {
		a.Close()
		return nil, err
	}
	if err := a.notify("initialized"); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

func (a *CodexAppServer) notify(method string) error {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method})
	_, err := a.in.Write(append(b, '\n'))
	return err
}

// Call sends one request and returns its result (server notifications and
// requests in between are skipped).
func (a *CodexAppServer) Call(method string, params any) (json.RawMessage, error) {
	id := a.nextID
	a.nextID++
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	if _, err := a.in.Write(append(b, '\n')); err != nil {
		return nil, fmt.Errorf("codex app-server %s: %w%s", method, err, a.stderrHint())
	}
	for {
		line, err := a.out.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("codex app-server %s: no answer (%w)%s", method, err, a.stderrHint())
		}
		var resp struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(line, &resp) != nil || resp.ID == nil || *resp.ID != id || resp.Method != "" {
			continue
		}
		if resp.Error != nil {
			return nil, fmt.Errorf("codex app-server %s: %s", method, resp.Error.Message)
		}
		return resp.Result, nil
	}
}

func (a *CodexAppServer) stderrHint() string {
	s := strings.TrimSpace(a.stderr.String())
	if s == "" {
		return ""
	}
	return " (codex said: " + render.Cut(s, 300) + ")"
}

// Close ends the app server.
func (a *CodexAppServer) Close() {
	a.in.Close()
	done := make(chan struct{})
	go func() { a.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		procfacts.KillGroup(a.cmd)
		<-done
	}
}

// ListHooks asks for the hooks Codex loads for cwd.
func (a *CodexAppServer) ListHooks(cwd string) ([]CodexHookStatus, error) {
	res, err := a.Call("hooks/list", map[string]any{"cwds": []string{cwd}})
	if err != nil {
		return nil, err
	}
	var r struct {
		Data []struct {
			Hooks  []CodexHookStatus `json:"hooks"`
			Errors []struct {
				Message string `json:"message"`
				Path    string `json:"path"`
			} `json:"errors"`
		} `json:"data"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, fmt.Errorf("codex app-server hooks/list: unexpected answer: %w", err)
	}
	var out []CodexHookStatus
	var errs []string
	for _, d := range r.Data {
		out = append(out, d.Hooks...)
		for _, e := range d.Errors {
			errs = append(errs, e.Path+": "+e.Message)
		}
	}
	if len(out) == 0 && len(errs) > 0 {
		return nil, fmt.Errorf("codex could not load its hooks: %s", strings.Join(errs, "; "))
	}
	return out, nil
}

// Trust records trusted_hash for hooks (config/batchWrite into the user's
// config.toml, by Codex's own writer).
func (a *CodexAppServer) Trust(hooks []CodexHookStatus) error {
	state := map[string]any{}
	for _, h := range hooks {
		if !strings.HasPrefix(h.CurrentHash, "sha256:") || h.Key == "" {
			return fmt.Errorf("codex reported no usable hash for hook %s", h.Key)
		}
		state[h.Key] = map[string]any{"trusted_hash": h.CurrentHash}
	}
	if len(state) == 0 {
		return nil
	}
	_, err := a.Call("config/batchWrite", map[string]any{"edits": []any{
		map[string]any{"keyPath": "hooks.state", "mergeStrategy": "upsert", "value": state},
	}})
	return err
}

// OurCodexHooks filters hooks to relay-baton's entries read from path.
func OurCodexHooks(hooks []CodexHookStatus, path string) []CodexHookStatus {
	var out []CodexHookStatus
	for _, h := range hooks {
		if h.Ours() && filepath.Clean(h.SourcePath) == filepath.Clean(path) {
			out = append(out, h)
		}
	}
	return out
}

// CodexTrustReport is what TrustCodexHooks found and did.
type CodexTrustReport struct {
	Hooks   []CodexHookStatus // relay-baton's hooks in the file, as Codex reports them (after trusting)
	Trusted []string          // keys this call trusted
}

// TrustCodexHooks asks Codex (bin app-server) which of relay-baton's hooks
// in path it loads for workspace and, unless checkOnly, records the trust
// of those that are not trusted yet. Other hooks are never trusted.
func TrustCodexHooks(ctx context.Context, bin, path, workspace string, checkOnly bool) (CodexTrustReport, error) {
	var rep CodexTrustReport
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	a, err := StartCodexAppServer(ctx, bin)
	if err != nil {
		return rep, err
	}
	defer a.Close()
	hooks, err := a.ListHooks(workspace)
	if err != nil {
		return rep, err
	}
	ours := OurCodexHooks(hooks, path)
	var todo []CodexHookStatus
	for _, h := range ours {
		if h.TrustStatus != "trusted" && h.TrustStatus != "managed" {
			todo = append(todo, h)
		}
	}
	if checkOnly || len(todo) == 0 {
		rep.Hooks = ours
		return rep, nil
	}
	if err := a.Trust(todo); err != nil {
		return rep, err
	}
	for _, h := range todo {
		rep.Trusted = append(rep.Trusted, h.Key)
	}
	// Read back what Codex now says.
	if hooks, err = a.ListHooks(workspace); err != nil {
		return rep, err
	}
	rep.Hooks = OurCodexHooks(hooks, path)
	return rep, nil
}
