package agents

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// A codex model provider may read its key from an environment variable
// (`env_key = "X_API_KEY"` in its [model_providers.<name>] table: Azure,
// OpenRouter, company gateways). relay-baton holds such a variable back
// like any credential; these say which one it is and what passes it.

// CodexProviderKey is the model provider codex uses per its config.toml
// ($CODEX_HOME from env, else this process's, else ~/.codex) and the
// environment variable that provider reads its key from (its env_key);
// both "" when the file cannot be read, and key "" when the provider names
// no env_key (or its env_key is not a variable name).
func CodexProviderKey(env []string) (provider, key string) {
	b, err := readCodexConfig(codexHomeIn(env))
	if err != nil {
		return "", ""
	}
	name, table := codexProviderTable(string(b))
	if name == "" || table == "" {
		return name, ""
	}
	key = strings.Trim(tomlFields(table)["env_key"], `"'`)
	if !ValidEnvName(key) {
		key = ""
	}
	return name, key
}

// ProviderKey is what an agent's invocation does with the variable its
// provider reads its key from.
type ProviderKey struct {
	Provider string // the codex model provider
	Name     string // the variable (its env_key)
	Set      bool   // set in relay-baton's environment
	Passed   bool   // in the agent's environment
}

// Line is doctor's and the preview's words for it.
func (k ProviderKey) Line() string {
	head := fmt.Sprintf("codex provider %s reads its key from %s", k.Provider, k.Name)
	switch {
	case k.Passed:
		return head + ": set, passed to codex (--allow-env / allowEnv)"
	case k.Set:
		return head + ": set, but relay-baton holds it back from agents (a credential): " + AllowEnvHowTo(k.Name)
	}
	return head + ": not set; set it in relay-baton's environment, then " + AllowEnvHowTo(k.Name)
}

// AllowEnvHowTo says how to pass a held-back variable to the agents: for
// one run of relay-baton, and for good.
func AllowEnvHowTo(name string) string {
	return fmt.Sprintf("pass it with --allow-env %s (in the room: /allow-env %s), or for good with \"allowEnv\": [%q] in the repository's .relay-baton.json, then relay-baton trust", name, name, name)
}

// CodexProviderKeyOf is the provider key an invocation of codex meets
// (Set and Passed read from inv's environment and what it held back); ok
// is false when codex's provider names no env_key.
func CodexProviderKeyOf(inv Invocation) (ProviderKey, bool) {
	provider, key := CodexProviderKey(inv.Env)
	if key == "" {
		return ProviderKey{}, false
	}
	k := ProviderKey{Provider: provider, Name: key}
	if lookupEnv(inv.Env, key) != "" {
		k.Set, k.Passed = true, true
	} else if slices.Contains(inv.Stripped, key) {
		k.Set = true
	}
	return k, true
}

// missingEnvRE is codex's refusal when its provider's env_key is not in
// its environment (codex 0.171.0: "Missing environment variable:
// `X_API_KEY`.", an error line and then turn.failed with the same text).
// (Compiled on first use: a hook run compiles nothing it does not use.)
var missingEnvRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile("Missing environment variable: `([A-Za-z_][A-Za-z0-9_]*)`")
})

// MissingEnvError is a run's error when the agent's CLI refused to start
// for want of an environment variable (codex's provider key): its message
// names the variable and what passes it.
type MissingEnvError struct {
	Agent string
	Name  string
	// Held: relay-baton held the variable back (it is set in relay-baton's
	// environment); else it is not set at all.
	Held bool
}

func (e *MissingEnvError) Error() string {
	if e.Held {
		return fmt.Sprintf("%s needs %s, which relay-baton holds back from agents (a credential): %s", e.Agent, e.Name, AllowEnvHowTo(e.Name))
	}
	return fmt.Sprintf("%s needs %s, which is not set: set it in relay-baton's environment, then %s", e.Agent, e.Name, AllowEnvHowTo(e.Name))
}

// missingEnv is the MissingEnvError a CLI's error text says, nil when it
// says none.
func missingEnv(agent, text string, held []string) *MissingEnvError {
	m := missingEnvRE().FindStringSubmatch(text)
	if m == nil {
		return nil
	}
	return &MissingEnvError{Agent: agent, Name: m[1], Held: slices.Contains(held, m[1])}
}
