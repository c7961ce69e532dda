package hookinstall

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/conversation"
)

// userSettings is a settings file as a person keeps it: a number float64
// cannot hold, a lone surrogate, keys in their own order, tabs and a
// compact line, an unknown value, and a wrapper of their own around
// relay-baton.
const userSettings = "{\n\t\"zeta\": 12345678901234567890,\n\t\"alpha\": \"\\ud800 lone\",\n\t\"compact\": {\"b\":1,\"a\":[1.50,2e3]},\n" +
	"\t\"hooks\": {\n\t\t\"Stop\": [\n\t\t\t{\"hooks\": [{\"type\": \"command\", \"command\": \"cd /srv && /usr/local/bin/relay-baton hook stop >> log\"}]}\n\t\t]\n\t},\n" +
	"\t\"future\": {\"x\": null}\n}\n"

func TestMergeHooksLosesNothing(t *testing.T) {
	bin := "/usr/local/bin/relay-baton"
	once, err := MergeHooks([]byte(userSettings), HookOptions{Binary: bin}, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"{\n\t\"zeta\": 12345678901234567890,\n\t\"alpha\": \"\\ud800 lone\",\n\t\"compact\": {\"b\":1,\"a\":[1.50,2e3]},\n",
		"{\"hooks\": [{\"type\": \"command\", \"command\": \"cd /srv && /usr/local/bin/relay-baton hook stop >> log\"}]}",
		"\t\"future\": {\"x\": null}\n}\n",
	} {
		if !strings.Contains(string(once), want) {
			t.Errorf("install lost %q:\n%s", want, once)
		}
	}
	g := hookCommands(t, once)
	if len(g["Stop"]) != 3 || g["Stop"][0] != "cd /srv && /usr/local/bin/relay-baton hook stop >> log" || g["Stop"][1] != bin+" hook stop" {
		t.Errorf("Stop after install: %q", g["Stop"])
	}
	un, err := MergeHooks(once, HookOptions{Binary: bin}, true)
	if err != nil {
		t.Fatal(err)
	}
	if string(un) != userSettings {
		t.Errorf("install then uninstall is not the file it started from:\n%s\nwant\n%s", un, userSettings)
	}
	// Added entries take the file's indentation.
	if !strings.Contains(string(once), "\n\t\t\"SessionStart\": [\n\t\t\t{\n\t\t\t\t\"hooks\": [") {
		t.Errorf("new entries not indented as the file is:\n%s", once)
	}
}

func TestIsOursOnlyExactly(t *testing.T) {
	for cmd, want := range map[string]bool{
		"/usr/local/bin/relay-baton hook stop":                     true,
		"'/opt/relay baton/relay-baton' hook wait --timeout 59m0s": true,
		"/b/relay-baton hook session-start":                        true,
		"cd /srv && /usr/local/bin/relay-baton hook stop >> log":   false,
		"/usr/local/bin/relay-baton hook stop >> log":              false,
		"/usr/local/bin/relay-baton hook stop; rm -rf ~":           false,
		"nice /usr/local/bin/relay-baton hook stop":                false,
		"/b/other hook wait":                                       false,
	} {
		if got := isOurs(cmd); got != want {
			t.Errorf("isOurs(%q) = %v, want %v", cmd, got, want)
		}
	}
}

func TestInstallBacksUpAndKeepsSymlink(t *testing.T) {
	ws := t.TempDir()
	dotfiles := t.TempDir()
	target := filepath.Join(dotfiles, "claude-settings.json")
	os.WriteFile(target, []byte(userSettings), 0o640)
	cfg := t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", cfg)
	link := filepath.Join(cfg, "settings.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := Install(context.Background(), &out, Options{Workspace: ws, Scope: "user", Binary: "/usr/local/bin/relay-baton", WaitTimeout: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced by a plain file: %v %v", fi.Mode(), err)
	}
	b, _ := os.ReadFile(target)
	if !strings.Contains(string(b), "/usr/local/bin/relay-baton hook wait") {
		t.Fatalf("the link's target was not edited:\n%s", b)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640 kept", fi.Mode().Perm())
	}
	backup, err := os.ReadFile(target + ".relay-baton.bak")
	if err != nil || string(backup) != userSettings {
		t.Fatalf("no backup of the file before the edit: %v %q", err, backup)
	}
	if !strings.Contains(out.String(), target+".relay-baton.bak") {
		t.Errorf("the output does not name the backup:\n%s", out.String())
	}
	out.Reset()
	if _, err := Install(context.Background(), &out, Options{Workspace: ws, Scope: "user", Binary: "/usr/local/bin/relay-baton", WaitTimeout: time.Minute, Uninstall: true}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != userSettings {
		t.Errorf("uninstall left:\n%s", b)
	}
	if !strings.Contains(out.String(), "cd /srv && /usr/local/bin/relay-baton hook stop >> log") || !strings.Contains(out.String(), "not relay-baton's own") {
		t.Errorf("uninstall does not say the wrapper entry stays:\n%s", out.String())
	}
}

// A project's .claude/settings.json that links out of the repository is
// not written through.
func TestInstallRefusesProjectLinkOutOfRepo(t *testing.T) {
	ws := t.TempDir()
	outside := filepath.Join(t.TempDir(), "victim.json")
	os.WriteFile(outside, []byte("{}\n"), 0o600)
	os.Mkdir(filepath.Join(ws, ".claude"), 0o755)
	os.Symlink(outside, filepath.Join(ws, ".claude", "settings.json"))
	var out bytes.Buffer
	_, err := Install(context.Background(), &out, Options{Workspace: ws, Scope: "project", Binary: "/usr/local/bin/relay-baton", WaitTimeout: time.Minute})
	if err == nil || !strings.Contains(err.Error(), "outside") {
		t.Fatalf("install through a link out of the repository: %v", err)
	}
	if b, _ := os.ReadFile(outside); string(b) != "{}\n" {
		t.Fatalf("the file outside the repository was written:\n%s", b)
	}
}

// Codex's hooks.json: the same in-place edit, backup and symlink rule, and
// uninstall keeps the user's wrapper and says so.
func TestCodexUninstallKeepsWrapperAndLink(t *testing.T) {
	bin := "/usr/local/bin/relay-baton"
	installed, err := MergeHooks([]byte(userSettings), HookOptions{Binary: bin, Agent: conversation.AgentCodex}, false)
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	t.Setenv("CODEX_HOME", home)
	target := filepath.Join(t.TempDir(), "hooks.json")
	os.WriteFile(target, installed, 0o600)
	os.Symlink(target, filepath.Join(home, "hooks.json"))
	var out bytes.Buffer
	if _, err := Install(context.Background(), &out, Options{Agent: conversation.AgentCodex, Workspace: t.TempDir(), Binary: bin, WaitTimeout: time.Minute, Uninstall: true}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != userSettings {
		t.Errorf("uninstall left:\n%s\nwant\n%s", b, userSettings)
	}
	if fi, err := os.Lstat(filepath.Join(home, "hooks.json")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced")
	}
	if b, err := os.ReadFile(target + ".relay-baton.bak"); err != nil || string(b) != string(installed) {
		t.Errorf("no backup: %v", err)
	}
	if !strings.Contains(out.String(), "Removed relay-baton's hooks") || !strings.Contains(out.String(), "cd /srv && /usr/local/bin/relay-baton hook stop >> log") {
		t.Errorf("message:\n%s", out.String())
	}
}

// A binary not named relay-baton is refused: its hooks would not be told
// from other tools' (added again at each install, never current for
// --check). A link named relay-baton to it is fine (the link's path is
// recorded), and install then --check says current.
func TestInstallWantsTheName(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "rb")
	if err := os.WriteFile(other, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	var out bytes.Buffer
	o := Options{Workspace: ws, Scope: "project", Binary: other, WaitTimeout: time.Minute, Form: FormShell}
	_, err := Install(context.Background(), &out, o)
	var ue *UsageError
	if !errors.As(err, &ue) || !strings.Contains(ue.Msg, "named rb") || !strings.Contains(ue.Hint, "ln -s") {
		t.Fatalf("install from %s: %v", other, err)
	}
	if _, err := os.Stat(filepath.Join(ws, ".claude", "settings.json")); err == nil {
		t.Fatal("settings written by a refused install")
	}
	link := filepath.Join(dir, "relay-baton")
	if err := os.Symlink(other, link); err != nil {
		t.Fatal(err)
	}
	o.Binary = link
	for i := 0; i < 2; i++ {
		if _, err := Install(context.Background(), &out, o); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := os.ReadFile(filepath.Join(ws, ".claude", "settings.json"))
	if n := strings.Count(string(b), link+" hook stop"); n != 1 {
		t.Fatalf("%d Stop hooks after two installs:\n%s", n, b)
	}
	o.Check = true
	if cur, err := Install(context.Background(), &out, o); err != nil || !cur {
		t.Fatalf("--check after install: %v %v\n%s", cur, err, out.String())
	}
}
