package agents_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/events"
)

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	c, err := agents.ReadConfig(dir)
	if err != nil || c.Path != "" || c.Timeout != 0 || c.Args(agents.Claude) != nil {
		t.Fatalf("missing file: %+v %v", c, err)
	}
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, agents.ConfigName), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"claude":{"args":["--model","opus"]},"codex":{"args":["-c","model=\"o3\""]},"timeout":"45m"}`)
	c, err = agents.ReadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Args(agents.Claude), []string{"--model", "opus"}) || !reflect.DeepEqual(c.Args(agents.Codex), []string{"-c", `model="o3"`}) ||
		c.Timeout != 45*time.Minute || c.Path != filepath.Join(dir, agents.ConfigName) {
		t.Fatalf("config %+v", c)
	}
	bad := []struct{ body, want string }{
		{`{"claude":{"args":["--full-auto"]}}`, "--full-auto"},
		{`{"codex":{"args":["--dangerously-bypass-approvals-and-sandbox"]}}`, "--dangerously-bypass-approvals-and-sandbox"},
		{`{"claude":{"args":["--permission-mode=bypassPermissions"]}}`, "bypassPermissions"},
		{`{"claude":{"args":["--dangerously-skip-permissions"]}}`, "--dangerously-skip-permissions"},
		{`{"codex":{"args":["-c","sandbox_mode=\"danger-full-access\""]}}`, "danger-full-access"},
		{`{"claude":{"args":["--permission-mode","acceptEdits"]}}`, "sets --permission-mode"},
		{`{"codex":{"args":["--sandbox","workspace-write"]}}`, "sets --sandbox"},
		{`{"timeout":"soon"}`, `timeout "soon"`},
		{`{"timeout":"-5m"}`, "positive duration"},
		{`{"claud":{}}`, "unknown field"},
		{`{"claude":{"args":"--model x"}}`, "cannot unmarshal"},
		{`{"claude":`, "unexpected EOF"},
		{`{} {}`, "trailing data"},
		{`{"allowEnv":["A B"]}`, "not a variable name"},
		{`{"codex":{"args":["-c","mcp_servers.x.command=\"sh\""]}}`, "refused"},
	}
	for _, b := range bad {
		write(b.body)
		_, err := agents.ReadConfig(dir)
		if err == nil || !strings.Contains(err.Error(), b.want) || !strings.Contains(err.Error(), agents.ConfigName) {
			t.Errorf("%s: err %v, want it to mention %q and the file", b.body, err, b.want)
		}
	}
	write(strings.Repeat(" ", 2<<20))
	if _, err := agents.ReadConfig(dir); err == nil || !strings.Contains(err.Error(), "over") {
		t.Errorf("huge file: %v", err)
	}
}

func TestForbiddenArgs(t *testing.T) {
	got := agents.ForbiddenArgs([]string{"--model", "x", "--full-auto", "--permission-mode", "bypassPermissions", "--dangerously-skip-permissions=true", "--yolo", "--full-autonomy"})
	want := []string{"--full-auto", "bypassPermissions", "--dangerously-skip-permissions=true", "--yolo"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q want %q", got, want)
	}
	if agents.ForbiddenArgs([]string{"-p", "--verbose", "--sandbox", "workspace-write"}) != nil {
		t.Fatal("clean args flagged")
	}
}

// loadWithin is LoadConfig that fails the test instead of hanging.
func loadWithin(t *testing.T, dir string) (agents.Config, error) {
	t.Helper()
	type res struct {
		c   agents.Config
		err error
	}
	done := make(chan res, 1)
	go func() { c, err := agents.LoadConfig(dir); done <- res{c, err} }()
	select {
	case r := <-done:
		return r.c, r.err
	case <-time.After(time.Minute): // a hang guard
		t.Fatalf("LoadConfig(%s) blocked", dir)
	}
	return agents.Config{}, nil
}

// A repository can plant a FIFO (or a link to one) as .relay-baton.json:
// every command reads it, and none may hang on it. A link to a regular
// file is a repository's choice and is followed.
func TestLoadConfigFIFOAndLinks(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, agents.ConfigName)
	makeFIFO(t, p)
	_, err := loadWithin(t, dir)
	if err == nil || !strings.Contains(err.Error(), "a named pipe (FIFO), not a regular file: move it aside") || !strings.Contains(err.Error(), agents.ConfigName) {
		t.Fatalf("FIFO: err = %v", err)
	}
	if !errors.Is(err, events.ErrNotRegular) {
		t.Fatalf("FIFO: %v does not wrap ErrNotRegular", err)
	}
	// Every agent run reads it first: Prepare says why and does not hang.
	prepared := make(chan error, 1)
	go func() {
		_, err := agents.Prepare(agents.Request{Agent: agents.Claude, Role: agents.RoleAsk, Prompt: "p", Dir: dir})
		prepared <- err
	}()
	select {
	case err := <-prepared:
		if !errors.Is(err, events.ErrNotRegular) {
			t.Fatalf("Prepare with a FIFO config: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Prepare blocked on a FIFO .relay-baton.json")
	}

	// A link to a FIFO elsewhere: the same.
	other := t.TempDir()
	fifo := filepath.Join(other, "fifo")
	makeFIFO(t, fifo)
	os.Remove(p)
	if err := os.Symlink(fifo, p); err != nil {
		t.Fatal(err)
	}
	if _, err := loadWithin(t, dir); !errors.Is(err, events.ErrNotRegular) {
		t.Fatalf("link to a FIFO: err = %v", err)
	}

	// A folder there is no config either.
	os.Remove(p)
	if err := os.Mkdir(p, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := loadWithin(t, dir); !errors.Is(err, events.ErrNotRegular) || !strings.Contains(err.Error(), "a directory") {
		t.Fatalf("folder: err = %v", err)
	}

	// A link to a regular config is followed.
	os.Remove(p)
	real := filepath.Join(other, "shared.json")
	os.WriteFile(real, []byte(`{"timeout":"7m"}`), 0o600)
	if err := os.Symlink(real, p); err != nil {
		t.Fatal(err)
	}
	if _, err := agents.TrustConfig(dir); err != nil {
		t.Fatal(err)
	}
	if c, err := loadWithin(t, dir); err != nil || c.Timeout != 7*time.Minute {
		t.Fatalf("link to a config: %+v %v", c, err)
	}
	// A dangling link is a missing file.
	os.Remove(real)
	if c, err := loadWithin(t, dir); err != nil || c.Path != "" {
		t.Fatalf("dangling link: %+v %v", c, err)
	}
}
