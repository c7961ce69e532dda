package agents

import (
	"net/url"
	"sort"
	"strings"
)

// An agent's environment holds no credential it was not given on purpose.
// A variable is held back when its name looks like a credential
// (CredentialName) or its value is a URL that carries a password (a proxy
// or database URL with user:password@). What passes on purpose:
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

// credentialParts are name parts (between underscores) that mark a
// credential: GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, DB_PASS, NODE_AUTH_TOKEN.
var credentialParts = map[string]bool{
	"KEY": true, "APIKEY": true, "TOKEN": true, "SECRET": true, "SECRETS": true, "PASSWORD": true, "PASSWD": true,
	"PASS": true, "PASSPHRASE": true, "CREDENTIAL": true, "CREDENTIALS": true, "PAT": true, "COOKIE": true,
}

// credentialWords are found anywhere in a name (PGPASSWORD, MYSECRET).
var credentialWords = []string{"SECRET", "PASSWORD", "PASSWD", "APIKEY", "API_KEY", "TOKEN_", "CREDENTIAL", "PRIVATE_KEY", "ACCESS_KEY"}

// credentialFamilies are name prefixes of cloud and forge credentials,
// held back whole (AWS_PROFILE and AWS_REGION included: they select
// credentials).
var credentialFamilies = []string{"AWS_", "AZURE_", "ARM_", "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CREDENTIALS", "GOOGLE_CLOUD_KEYFILE",
	"GCLOUD_", "CLOUDSDK_AUTH_", "GH_", "GITHUB_TOKEN", "GITHUB_PAT", "GITLAB_", "NPM_TOKEN", "NPM_CONFIG__AUTH", "HF_TOKEN",
	"HUGGING_FACE_HUB_TOKEN", "DIGITALOCEAN_", "HEROKU_", "VAULT_", "OP_", "DOCKER_AUTH", "SSH_AUTH_SOCK", "MYSQL_PWD",
	"KAGGLE_", "CLOUDFLARE_", "CF_API_", "LINODE_", "SCW_", "OS_PASSWORD", "TWILIO_", "STRIPE_", "SENTRY_AUTH", "SLACK_"}

// CredentialName reports whether an environment variable's name looks like
// a credential (case-insensitive).
func CredentialName(name string) bool {
	n := strings.ToUpper(name)
	path, isPath := pathVariable(n)
	for _, f := range credentialFamilies {
		if strings.HasPrefix(n, f) && !isPath {
			return true
		}
	}
	n = path
	for _, w := range credentialWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	for _, p := range strings.Split(n, "_") {
		if credentialParts[p] {
			return true
		}
	}
	return false
}

// pathVariable reports whether n (upper case) names a file path rather
// than a value (a *_FILE or *_BUNDLE name: AWS_CA_BUNDLE, AWS_CONFIG_FILE),
// and returns n without that suffix. Such a path is no credential unless
// the rest of its name says one (AWS_SHARED_CREDENTIALS_FILE,
// AWS_WEB_IDENTITY_TOKEN_FILE).
func pathVariable(n string) (string, bool) {
	for _, suffix := range []string{"_FILE", "_BUNDLE"} {
		if base, ok := strings.CutSuffix(n, suffix); ok && base != "" {
			return base, true
		}
	}
	return n, false
}

// credentialValue reports whether v is a URL carrying a password
// (http://user:secret@proxy:3128, postgres://u:p@db/x).
func credentialValue(v string) bool {
	if !strings.Contains(v, "://") || !strings.Contains(v, "@") {
		return false
	}
	u, err := url.Parse(strings.TrimSpace(v))
	if err != nil || u.User == nil {
		return strings.Contains(v, ":") // unparseable with user info: hold it
	}
	_, has := u.User.Password()
	return has
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
