package agents_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents"
)

// probeEnv makes the test binary act as a fake agent CLI instead of running
// tests: RELAY_BATON_PROBE=<mode>. Modes:
//
//	env     print the names of every environment variable, one per line,
//	        as "ENV <name>", then a stream-json result line
//	exit3   print a stream-json init line, "fatal: probe failure" on stderr, exit 3
//	tree    start `sh -c 'sleep 59.1234 & sleep 59.1234'` in the group and wait
//	        (cancellation must take the whole tree down)
//	orphan  leave a grandchild holding stdout, then exit 0
const probeEnv = "RELAY_BATON_PROBE"

func TestMain(m *testing.M) {
	if mode := os.Getenv(probeEnv); mode != "" {
		os.Exit(probe(mode))
	}
	// The trust record of .relay-baton.json files lives in the user's
	// config folder: the tests keep theirs in a folder of their own.
	cfg, err := os.MkdirTemp("", "relay-baton-config-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_CONFIG_HOME", cfg)
	code := m.Run()
	os.RemoveAll(cfg)
	os.Exit(code)
}

// forceTrust records root's .relay-baton.json as trusted without the
// checks of TrustConfig (a record written by an older relay-baton, or by
// hand), to prove that a trusted file is still checked when it is used.
func forceTrust(t *testing.T, root string) {
	t.Helper()
	p, err := agents.ConfigPath(root)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	tp, err := agents.TrustPath()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(tp), 0o700); err != nil {
		t.Fatal(err)
	}
	rec, _ := json.Marshal(map[string]any{"version": 1, "trusted": []map[string]string{{"path": p, "sha256": agents.ConfigSum(b)}}})
	if err := os.WriteFile(tp, rec, 0o600); err != nil {
		t.Fatal(err)
	}
}

// containsAll reports whether s holds every one of subs.
func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

func probe(mode string) int {
	switch mode {
	case "env":
		var names []string
		for _, kv := range os.Environ() {
			k, _, _ := strings.Cut(kv, "=")
			names = append(names, k)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Println("ENV " + n)
		}
		fmt.Println(`{"type":"result","subtype":"success","is_error":false,"result":"env listed","session_id":"probe","total_cost_usd":0}`)
		return 0
	case "exit3":
		fmt.Println(`{"type":"system","subtype":"init","session_id":"probe"}`)
		fmt.Fprintln(os.Stderr, "fatal: probe failure")
		return 3
	case "tree":
		fmt.Println(`{"type":"system","subtype":"init","session_id":"probe"}`)
		cmd := exec.Command("sh", "-c", "sleep 59.1234 & sleep 59.1234")
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			return 1
		}
		return 0
	case "orphan":
		cmd := exec.Command("sh", "-c", "sleep 59.4321")
		cmd.Stdout = os.Stdout
		if err := cmd.Start(); err != nil {
			return 1
		}
		fmt.Println(`{"type":"result","subtype":"success","is_error":false,"result":"left one behind"}`)
		time.Sleep(50 * time.Millisecond)
		return 0
	}
	fmt.Fprintln(os.Stderr, "unknown probe mode", mode)
	return 2
}

// self is the test binary, used as a fake agent.
func self(t *testing.T) string {
	t.Helper()
	p, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return p
}
