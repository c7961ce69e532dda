package agents

import (
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/relay-baton/relay-baton/safeio"
)

// codexBuiltinNoLogin are Codex's built-in local providers: they need no
// login.
var codexBuiltinNoLogin = map[string]bool{"oss": true, "ollama": true, "lmstudio": true}

// CodexNoLoginProvider reports the model provider codex uses per its
// config.toml ($CODEX_HOME from env, else this process's, else ~/.codex)
// when that provider needs no login: a provider table with no env_key, no
// auth and no requires_openai_auth = true (a local or mock endpoint), or a
// built-in local one. ok is false for the default OpenAI provider, for a
// provider that needs a key or a login, and when the file cannot be read.
func CodexNoLoginProvider(env []string) (name string, ok bool) {
	b, err := readCodexConfig(codexHomeIn(env))
	if err != nil {
		return "", false
	}
	name, table := codexProviderTable(string(b))
	if name == "" || name == "openai" {
		return "", false
	}
	if table == "" {
		if !codexBuiltinNoLogin[name] {
			return "", false
		}
		return name, true
	}
	fields := tomlFields(table)
	for _, key := range []string{"env_key", "auth", "experimental_bearer_token"} {
		if _, set := fields[key]; set {
			return "", false
		}
	}
	if fields["requires_openai_auth"] == "true" {
		return "", false
	}
	return name, true
}

// codexHomeIn is CODEX_HOME as env (a child's environment) sets it, else
// as this process has it, else ~/.codex.
func codexHomeIn(env []string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], "CODEX_HOME="); ok && v != "" {
			return v
		}
	}
	if d := os.Getenv("CODEX_HOME"); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".codex")
}

// readCodexConfig reads config.toml in home: a regular file (a FIFO does
// not block), at most 1 MiB.
func readCodexConfig(home string) ([]byte, error) {
	f, err := safeio.OpenRegular(filepath.Join(home, "config.toml"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 1<<20))
}

// codexProviderTable finds the top-level model_provider of a config.toml
// and the text of its [model_providers.<name>] table (with its sub-tables),
// or of its inline table, "" when the file defines none.
func codexProviderTable(toml string) (name, table string) {
	section := ""
	var body strings.Builder
	inTable := false
	for _, raw := range strings.Split(toml, "\n") {
		line := strings.TrimSpace(raw)
		if strings.HasPrefix(line, "[") {
			section = strings.Trim(strings.Trim(line, "[]"), " ")
			inTable = name != "" && (section == "model_providers."+name || section == `model_providers."`+name+`"` ||
				strings.HasPrefix(section, "model_providers."+name+"."))
			if inTable {
				body.WriteString(strings.TrimPrefix(section, "model_providers."+name+".") + "\n")
			}
			continue
		}
		if section == "" {
			if v, ok := tomlValue(line, "model_provider"); ok {
				name = strings.Trim(v, `"'`)
			}
			if v, ok := tomlValue(line, "model_providers."+name); ok && name != "" {
				body.WriteString(v + "\n")
			}
		}
		if section == "model_providers" && name != "" {
			if v, ok := tomlValue(line, name); ok {
				body.WriteString(v + "\n")
			}
		}
		if inTable {
			body.WriteString(line + "\n")
		}
	}
	return name, body.String()
}

// tomlValue returns the value of `key = value` on a line (its comment
// cut), ok false when the line sets another key.
func tomlValue(line, key string) (string, bool) {
	k, v, found := strings.Cut(line, "=")
	if !found || strings.TrimSpace(k) != key {
		return "", false
	}
	if i := strings.Index(v, " #"); i >= 0 && !strings.ContainsAny(v[:i], `"'`) {
		v = v[:i]
	}
	return strings.TrimSpace(v), true
}

// tomlFields are the keys a provider table's text sets, with their values:
// `key = value` lines, the fields of an inline table, and [<key>]
// sub-tables (with an empty value).
func tomlFields(table string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(table, "\n") {
		line = strings.Trim(strings.TrimSpace(line), "{}")
		if line != "" && !strings.ContainsAny(line, "=,") {
			out[line] = ""
		}
		for _, field := range strings.Split(line, ",") {
			if k, v, ok := strings.Cut(field, "="); ok {
				out[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
	}
	return out
}
