package runs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/relay-baton/relay-baton/safeio"
)

// ConfigName is the user's worktree config, in their config folder
// (os.UserConfigDir()/relay-baton): never read from a repository.
const ConfigName = "worktree.json"

// UserConfig is the user's choices for executor runs:
//
//	{"in_place": false, "copy": [".env"], "link": ["node_modules"]}
//
// in_place keeps the executor in the user's tree (no worktree); copy
// lists ignored paths copied into each run's worktree, link ignored
// folders linked into it.
type UserConfig struct {
	InPlace bool     `json:"in_place"`
	Copy    []string `json:"copy"`
	Link    []string `json:"link"`
	Path    string   `json:"-"` // where it was read ("" when there is none)
}

// ConfigPath is where the user's worktree config lives.
func ConfigPath() (string, error) {
	d, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "relay-baton", ConfigName), nil
}

// LoadUserConfig reads the user's worktree config; none is the zero
// config.
func LoadUserConfig() (UserConfig, error) {
	p, err := ConfigPath()
	if err != nil {
		return UserConfig{}, nil
	}
	b, err := safeio.ReadRegular(p, 1<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return UserConfig{}, nil
	}
	if err != nil {
		return UserConfig{}, fmt.Errorf("%s: %w", p, err)
	}
	var c UserConfig
	if err := json.Unmarshal(b, &c); err != nil {
		return UserConfig{}, fmt.Errorf("%s: %w (fix it or remove it)", p, err)
	}
	for _, list := range [][]string{c.Copy, c.Link} {
		for _, q := range list {
			if _, err := cleanRel(q); err != nil {
				return UserConfig{}, fmt.Errorf("%s: %q: %w", p, q, err)
			}
		}
	}
	c.Path = p
	return c, nil
}
