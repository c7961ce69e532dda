package agents

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// A path variable (*_FILE, *_BUNDLE) is not a credential unless the rest of
// its name says one: AWS_CA_BUNDLE is a CA bundle's path.
func TestPathVariablesAreNotCredentials(t *testing.T) {
	for _, n := range []string{"AWS_CA_BUNDLE", "AWS_CONFIG_FILE", "aws_ca_bundle", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE"} {
		if CredentialName(n) {
			t.Errorf("%s is held back as a credential; it is a path", n)
		}
	}
	for _, n := range []string{"AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ACCESS_KEY_ID", "AWS_PROFILE",
		"AWS_SHARED_CREDENTIALS_FILE", "AWS_WEB_IDENTITY_TOKEN_FILE", "SSH_KEY_FILE", "GITHUB_TOKEN"} {
		if !CredentialName(n) {
			t.Errorf("%s passes as no credential", n)
		}
	}
}

// Credentials by shape: a name is split into words before it is matched
// (underscores, dashes, dots, camel case, digits, plurals), a name that is
// not portable is held back whole, and a value with a secret's shape is
// held back whatever its name. Every name and value a review found
// reaching the agents is held back; what agents need passes.
func TestCredentialsByShape(t *testing.T) {
	held := map[string]string{
		"FOO_TOKENS": "x", "FOO_TOKEN2": "x", "FOO-TOKEN": "x", "MyToken": "x", "VAULTTOKEN": "x", "FOO_KEYS": "x",
		"FOO_PRIVATEKEY": "x", "MY_ACCESSKEY": "x", "CI_JOB_JWT": "x", "CI_JOB_JWT_V2": "x", "fooApiKey": "x", "APIKey": "x",
		"db.password": "x", "x-api-key": "x", "DB_PASS": "x", "SECRETS": "x", "MY_CREDS": "x", "Token1": "x",
		" GITHUB_TOKEN": "x", "GITHUB_TOKEN ": "x", "GITHUB_T\u041eKEN": "x", "\u0422OKEN": "x", "FOO BAR": "x", "FOO-BAR": "x",
		"STRIPE":     "sk_live_" + "51HqLyjWDarjtT1zdp7dcXXXXXXXX",
		"GHX":        "ghp_" + "16C7e42F292c6912E7710c838347Ae178B4a",
		"GH2":        "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
		"GHO":        "gho_" + "16C7e42F292c6912E7710c838347Ae178B4a",
		"GHS":        "ghs_" + "16C7e42F292c6912E7710c838347Ae178B4a",
		"GL":         "glpat-" + "xxxxxxxxxxxxxxxxxxxx",
		"SL":         "xoxb-" + "123456789012-1234567890123-abcdefghijklmnop",
		"SL2":        "xoxp-" + "123456789012-abc",
		"RK":         "rk_live_" + "abcdefghijklmnop",
		"AK":         "AKIA" + "IOSFODNN7EXAMPLE",
		"AS":         "ASIA" + "IOSFODNN7EXAMPLE",
		"AN":         "sk-ant-" + "api03-abcdefghijklmnopqrstuvwxyz0123456789",
		"OA":         "sk-" + "abcdefghijklmnopqrstuvwxyz0123456789",
		"OP2":        "sk-proj-" + "abcdefghijklmnopqrstuvwxyz",
		"ID":         "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
		"PEM":        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n",
		"SENTRY_DSN": "https://" + "0123456789abcdef0123456789abcdef@o1.ingest.sentry.io/1",
		"DATABASE":   "postgres://app:hunter2@db:5432/app",
		"IN_TEXT":    "Authorization: Bearer ghp_" + "16C7e42F292c6912E7710c838347Ae178B4a",
	}
	plain := map[string]string{
		"PATH": "/usr/local/bin:/usr/bin:/home/u/task-runner-0123456789abcdefghijkl/bin", "HOME": "/home/u", "LANG": "C.UTF-8",
		"HTTP_PROXY": "http://proxy.example:3128", "GIT_REMOTE": "ssh://git@github.com/x/y", "CLAUDE_CODE_MAX_OUTPUT_TOKENS": "1000",
		"MAX_THINKING_TOKENS": "8000", "TOKENIZERS_PARALLELISM": "false", "KEYTIMEOUT": "1", "AWS_CA_BUNDLE": "/etc/ssl/ca.pem",
		"SSL_CERT_FILE": "/etc/ssl/cert.pem", "REQUESTS_CA_BUNDLE": "/etc/ssl/ca.pem", "EDITOR": "vim", "TERM": "xterm-256color",
		"GNOME_KEYRING_CONTROL": "/run/user/1000/keyring", "SHORT": "ghp_x", "TASK": "task-abcdefghijklmnopqrstuvwxyz0123", "LESSKEY": "/x",
		"ProgramFiles(x86)": `C:\Program Files (x86)`, "COMMIT": "AKIAIOSFODNN7EXAMPLE0", "DOTS": "eyJ.a.b",
	}
	var env []string
	for k, v := range held {
		env = append(env, k+"="+v)
	}
	for k, v := range plain {
		env = append(env, k+"="+v)
	}
	d := envPolicy(Claude, env, false, nil)
	heldNow := map[string]bool{}
	for _, n := range d.held {
		heldNow[n] = true
	}
	for k := range held {
		if !heldNow[k] {
			t.Errorf("%q reaches the agent", k)
		}
	}
	for k := range plain {
		if heldNow[k] {
			t.Errorf("%q is held back; it is no credential", k)
		}
	}
	for _, kv := range d.env {
		k, _, _ := strings.Cut(kv, "=")
		if _, bad := held[k]; bad {
			t.Errorf("%q is in the agent's environment", k)
		}
	}
	// A name is named, never its value, and a non-portable one cannot be
	// passed on purpose (--allow-env and allowEnv take portable names).
	for _, n := range d.held {
		for _, v := range held {
			if len(v) > 1 && strings.Contains(n, v) {
				t.Errorf("held name %q holds a value", n)
			}
		}
	}
	if d := envPolicy(Claude, []string{"STRIPE=" + held["STRIPE"]}, false, []string{"STRIPE"}); len(d.passed) != 1 || d.passed[0] != "STRIPE" {
		t.Errorf("STRIPE passed on purpose: %+v", d)
	}
}

// The check runs on every variable of every run: it stays cheap.
func BenchmarkCredentialCheck(b *testing.B) {
	env := os.Environ()
	for i := 0; i < 100; i++ {
		env = append(env, fmt.Sprintf("SOME_SETTING_%d=/usr/local/share/some/long/path/value-%d:/opt/x/bin", i, i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		envPolicy(Claude, env, false, nil)
	}
}
