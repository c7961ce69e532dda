package agents

import (
	"net/url"
	"sort"
	"strings"
)

// An agent's environment holds no credential it was not given on purpose.
// A variable is held back when its name looks like a credential
// (CredentialName: split into words first; a name that is not portable is
// held back whole) or its value has a secret's shape whatever the name
// (SecretShape: GitHub, GitLab, Slack, Stripe, AWS, Anthropic and OpenAI
// keys, JWTs, private key blocks; a URL that carries a password or a key).
// The preview names what was held back, never a value. What passes on
// purpose:
//   - the agent's own login variables (OwnKeyVars) to that agent only, with
//     --allow-api-key-env (audited);
//   - claude's own OAuth token (CLAUDE_CODE_OAUTH_TOKEN) to claude only, as
//     its login;
//   - the names given with --allow-env NAME or the trusted config's
//     allowEnv (audited).

// OwnKeyVars are each agent's own API-key variables: passed to that agent
// only, and only with Request.AllowAPIKeyEnv.
var OwnKeyVars = map[string][]string{
	Claude: {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"},
	Codex:  {"OPENAI_API_KEY", "CODEX_API_KEY"},
}

// ownLogin are variables an agent logs in with that pass to it by default
// (as a login file under its home would), and to no other agent.
var ownLogin = map[string][]string{
	Claude: {"CLAUDE_CODE_OAUTH_TOKEN"},
}

// credentialWords are the words of a name that mark a credential, once
// the name is split into words (nameWords: underscores, dashes, dots,
// camel case, digits) and a plural's S is dropped: GITHUB_TOKEN,
// FOO_TOKENS, FOO_TOKEN2, MyToken, FOO-KEY, DB_PASS, CI_JOB_JWT.
var credentialWords = map[string]bool{
	"KEY": true, "APIKEY": true, "TOKEN": true, "SECRET": true, "PASSWORD": true, "PASSWD": true, "PASS": true,
	"PASSPHRASE": true, "CREDENTIAL": true, "CRED": true, "PAT": true, "COOKIE": true, "JWT": true,
	"PRIVATEKEY": true, "ACCESSKEY": true, "SECRETKEY": true, "AUTHTOKEN": true, "SESSIONTOKEN": true,
}

// credentialInside are found inside a word too (PGPASSWORD, VAULTTOKEN,
// MYSECRET, FOO_PRIVATEKEY); TOKEN only at a word's end (TOKENIZERS is
// none).
var credentialInside = []string{"SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "APIKEY", "CREDENTIAL", "PRIVATEKEY", "ACCESSKEY"}

// countWords before TOKEN make it a count, not a credential
// (CLAUDE_CODE_MAX_OUTPUT_TOKENS, MAX_THINKING_TOKENS).
var countWords = map[string]bool{"MAX": true, "MIN": true, "LIMIT": true, "BUDGET": true, "NUM": true, "COUNT": true}

// credentialFamilies are name prefixes of cloud and forge credentials,
// held back whole (AWS_PROFILE and AWS_REGION included: they select
// credentials).
var credentialFamilies = []string{"AWS_", "AZURE_", "ARM_", "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CREDENTIALS", "GOOGLE_CLOUD_KEYFILE",
	"GCLOUD_", "CLOUDSDK_AUTH_", "GH_", "GITHUB_TOKEN", "GITHUB_PAT", "GITLAB_", "NPM_TOKEN", "NPM_CONFIG__AUTH", "HF_TOKEN",
	"HUGGING_FACE_HUB_TOKEN", "DIGITALOCEAN_", "HEROKU_", "VAULT_", "OP_", "DOCKER_AUTH", "SSH_AUTH_SOCK", "MYSQL_PWD",
	"KAGGLE_", "CLOUDFLARE_", "CF_API_", "LINODE_", "SCW_", "OS_PASSWORD", "TWILIO_", "STRIPE_", "SENTRY_AUTH", "SLACK_"}

// PortableName reports whether name is a portable variable name
// ([A-Za-z_][A-Za-z0-9_]*). Any other (a space before or after, a dash, a
// Cyrillic letter that looks Latin) is held back from agents: no rule
// about words can be trusted on it. Windows' own ProgramFiles(x86) and
// CommonProgramFiles(x86) pass.
func PortableName(name string) bool {
	if base, ok := strings.CutSuffix(name, "(x86)"); ok && (base == "ProgramFiles" || base == "CommonProgramFiles") {
		return true
	}
	return ValidEnvName(name)
}

// nameWords splits a name into its words, upper case: at every character
// that is not a letter or digit, between a lower-case letter and an upper
// one (MyToken), before the last of a run of capitals followed by a
// lower-case letter (APIKey: API, KEY), and between letters and digits
// (TOKEN2: TOKEN, 2).
func nameWords(name string) []string {
	var words []string
	start := -1
	kind := func(c byte) int { // 0 other, 1 lower, 2 upper, 3 digit
		switch {
		case c >= 'a' && c <= 'z':
			return 1
		case c >= 'A' && c <= 'Z':
			return 2
		case c >= '0' && c <= '9':
			return 3
		}
		return 0
	}
	flush := func(end int) {
		if start >= 0 && end > start {
			words = append(words, strings.ToUpper(name[start:end]))
		}
		start = -1
	}
	for i := 0; i < len(name); i++ {
		k := kind(name[i])
		if k == 0 {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		p := kind(name[i-1])
		switch {
		case p == 1 && k == 2, (p == 3) != (k == 3):
			flush(i)
			start = i
		case p == 2 && k == 2 && i+1 < len(name) && kind(name[i+1]) == 1:
			flush(i)
			start = i
		}
	}
	flush(len(name))
	return words
}

// singular drops a plural's S (TOKENS, KEYS, SECRETS; not PASS).
func singular(w string) string {
	if len(w) > 3 && w[len(w)-1] == 'S' && w[len(w)-2] != 'S' {
		return w[:len(w)-1]
	}
	return w
}

// CredentialName reports whether an environment variable's name looks like
// a credential (case-insensitive): a credential word among its words, one
// inside a word, a cloud or forge family's prefix, or a name that is not
// portable (PortableName).
func CredentialName(name string) bool {
	if !PortableName(name) {
		return true
	}
	n := strings.ToUpper(name)
	words := nameWords(name)
	isPath := false
	if len(words) > 1 && (words[len(words)-1] == "FILE" || words[len(words)-1] == "BUNDLE") {
		words, isPath = words[:len(words)-1], true
	}
	if !isPath {
		for _, f := range credentialFamilies {
			if strings.HasPrefix(n, f) {
				return true
			}
		}
	}
	count := false
	for _, w := range words {
		count = count || countWords[w]
	}
	for _, w := range words {
		w1 := singular(w)
		if credentialWords[w] || credentialWords[w1] {
			if !(count && w1 == "TOKEN") {
				return true
			}
		}
		if strings.HasSuffix(w1, "TOKEN") && !count {
			return true // VAULTTOKEN, MYTOKENS
		}
		for _, c := range credentialInside {
			if strings.Contains(w, c) {
				return true
			}
		}
	}
	// Words run together across a separator: PRIVATE_KEY, API_KEY,
	// ACCESS_KEY, SECRET_KEY.
	joined := strings.Join(words, "")
	for _, c := range credentialInside {
		if strings.Contains(joined, c) {
			return true
		}
	}
	return false
}

// credentialValue reports whether v has the shape of a secret, whatever
// the variable is called: a URL that carries a password or a key
// (http://user:secret@proxy:3128, https://KEY@sentry.example/1), or a
// token of a known kind (SecretShape).
func credentialValue(v string) bool {
	return urlCredential(v) || SecretShape(v) != ""
}

// urlCredential reports whether v is a URL with a password, or with a
// user name long enough to be a key (a Sentry DSN's); a short user name
// (ssh://git@host) is none.
func urlCredential(v string) bool {
	if !strings.Contains(v, "://") || !strings.Contains(v, "@") {
		return false
	}
	u, err := url.Parse(strings.TrimSpace(v))
	if err != nil || u.User == nil {
		return strings.Contains(v, ":") // unparseable with user info: hold it
	}
	if _, has := u.User.Password(); has {
		return true
	}
	return len(u.User.Username()) >= 16
}

// tokenPrefixes are the prefixes of known secret tokens and the least
// number of token characters ([A-Za-z0-9_-]) after them.
var tokenPrefixes = []struct {
	prefix, kind string
	min          int
}{
	{"ghp_", "GitHub token", 20}, {"gho_", "GitHub token", 20}, {"ghs_", "GitHub token", 20},
	{"ghu_", "GitHub token", 20}, {"ghr_", "GitHub token", 20}, {"github_pat_", "GitHub token", 20},
	{"glpat-", "GitLab token", 16},
	{"xoxb-", "Slack token", 10}, {"xoxp-", "Slack token", 10}, {"xoxa-", "Slack token", 10},
	{"xoxs-", "Slack token", 10}, {"xoxr-", "Slack token", 10}, {"xoxe-", "Slack token", 10},
	{"sk_live_", "Stripe key", 10}, {"rk_live_", "Stripe key", 10}, {"sk_test_", "Stripe key", 10}, {"rk_test_", "Stripe key", 10},
	{"sk-ant-", "Anthropic key", 16},
	{"sk-proj-", "OpenAI key", 16}, {"sk-", "OpenAI key", 20},
}

// tokenChar is a character of a token.
func tokenChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// SecretShape says what kind of secret v holds ("" when none): a GitHub,
// GitLab, Slack, Stripe, Anthropic or OpenAI token, an AWS access key id
// (AKIA..., ASIA...), a JWT or a PEM private key block, each found at the
// start of a word of v.
func SecretShape(v string) string {
	if len(v) < 16 {
		return ""
	}
	if i := strings.Index(v, "-----BEGIN "); i >= 0 && strings.Contains(v[i:], "PRIVATE KEY-----") {
		return "private key"
	}
	for i := 0; i < len(v); i++ {
		if i > 0 && tokenChar(v[i-1]) {
			continue // not the start of a word
		}
		rest := v[i:]
		switch rest[0] {
		case 'g', 'x', 's', 'r':
			for _, p := range tokenPrefixes {
				if strings.HasPrefix(rest, p.prefix) && tokenRun(rest[len(p.prefix):]) >= p.min {
					return p.kind
				}
			}
		case 'A':
			if (strings.HasPrefix(rest, "AKIA") || strings.HasPrefix(rest, "ASIA")) && awsKeyID(rest) {
				return "AWS access key id"
			}
		case 'e':
			if strings.HasPrefix(rest, "eyJ") && jwt(rest) {
				return "JWT"
			}
		}
	}
	return ""
}

// tokenRun is how many token characters s starts with.
func tokenRun(s string) int {
	n := 0
	for n < len(s) && tokenChar(s[n]) {
		n++
	}
	return n
}

// awsKeyID: 20 capitals and digits, then the end of the word.
func awsKeyID(s string) bool {
	if len(s) < 20 {
		return false
	}
	for i := 0; i < 20; i++ {
		if c := s[i]; !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return len(s) == 20 || !tokenChar(s[20])
}

// jwt: three base64url parts joined by dots, the first two of 10
// characters or more.
func jwt(s string) bool {
	parts := 0
	n := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && (tokenChar(s[i])) {
			n++
			continue
		}
		if i < len(s) && s[i] == '.' && parts < 2 {
			if n < 10 {
				return false
			}
			parts++
			n = 0
			continue
		}
		break
	}
	return parts == 2 && n >= 10
}

// envDecision is what envPolicy decided, names only (never values).
type envDecision struct {
	env    []string // the child's environment
	held   []string // names held back
	passed []string // credential names passed on purpose (audit them)
}

// envPolicy applies the credentials policy to env for agent.
func envPolicy(agent string, env []string, allowKeys bool, allowEnv []string) envDecision {
	var d envDecision
	allowed := map[string]bool{}
	for _, n := range allowEnv {
		allowed[strings.ToUpper(n)] = true
	}
	own := func(list map[string][]string, k string) (mine, other bool) {
		for a, names := range list {
			for _, n := range names {
				if strings.EqualFold(k, n) {
					if a == agent {
						return true, false
					}
					other = true
				}
			}
		}
		return false, other
	}
	d.env = make([]string, 0, len(env))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if k == AgentRunEnv || k == ClaudeBinEnv || k == CodexBinEnv {
			d.env = append(d.env, kv)
			continue
		}
		keyMine, keyOther := own(OwnKeyVars, k)
		loginMine, loginOther := own(ownLogin, k)
		secret := CredentialName(k) || credentialValue(v) || keyMine || keyOther || loginOther
		switch {
		case !secret, loginMine:
			d.env = append(d.env, kv)
		case allowed[strings.ToUpper(k)]:
			d.env = append(d.env, kv)
			d.passed = append(d.passed, k)
		case keyMine && allowKeys:
			d.env = append(d.env, kv)
			d.passed = append(d.passed, k)
		default:
			d.held = append(d.held, k)
		}
	}
	sort.Strings(d.held)
	sort.Strings(d.passed)
	return d
}
