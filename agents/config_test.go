package agents_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents"
)

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	c, err := agents.LoadConfig(dir)
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
	c, err = agents.LoadConfig(dir)
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
	}
	for _, b := range bad {
		write(b.body)
		_, err := agents.LoadConfig(dir)
		if err == nil || !strings.Contains(err.Error(), b.want) || !strings.Contains(err.Error(), agents.ConfigName) {
			t.Errorf("%s: err %v, want it to mention %q and the file", b.body, err, b.want)
		}
	}
	write(strings.Repeat(" ", 2<<20))
	if _, err := agents.LoadConfig(dir); err == nil || !strings.Contains(err.Error(), "over") {
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
