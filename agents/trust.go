package agents

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/relay-baton/relay-baton/safeio"
)

// A repository's .relay-baton.json is used only once the user has trusted
// it, as direnv and mise do with .envrc and mise.toml: `relay-baton trust`
// records the file's absolute path and the SHA-256 of its content in the
// user's config folder (never in the repository). A file whose content
// changed is untrusted again; an untrusted one is ignored, with one line
// that says how to trust it.

// TrustFileName is the trust record, in TrustDir.
const TrustFileName = "trusted.json"

// maxTrustBytes caps the trust record: one short line per repository.
const maxTrustBytes = 4 << 20

// TrustEntry is one trusted config file.
type TrustEntry struct {
	Path      string    `json:"path"`   // absolute path of the .relay-baton.json
	SHA256    string    `json:"sha256"` // hex SHA-256 of the content trusted
	TrustedAt time.Time `json:"trustedAt"`
}

type trustRecord struct {
	Version int          `json:"version"`
	Trusted []TrustEntry `json:"trusted"`
}

// TrustDir is relay-baton's folder in the user's config folder:
// os.UserConfigDir()/relay-baton ($XDG_CONFIG_HOME or ~/.config on Linux,
// ~/Library/Application Support on macOS, %AppData% on Windows).
func TrustDir() (string, error) {
	d, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no user config folder to keep the trust record in: %w (set XDG_CONFIG_HOME or HOME)", err)
	}
	return filepath.Join(d, "relay-baton"), nil
}

// TrustPath is the trust record's path.
func TrustPath() (string, error) {
	d, err := TrustDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, TrustFileName), nil
}

// ConfigPath is the absolute path of root's .relay-baton.json, with the
// links in root resolved (the key of the trust record).
func ConfigPath(root string) (string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	return filepath.Join(abs, ConfigName), nil
}

// ConfigSum is the hex SHA-256 of a config's content.
func ConfigSum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TrustedConfigs reads the trust record: the trusted config files, sorted
// by path. A missing record is an empty list; a record that is a link, a
// FIFO or not JSON is an error that names it.
func TrustedConfigs() ([]TrustEntry, error) {
	p, err := TrustPath()
	if err != nil {
		return nil, err
	}
	rec, err := readTrust(p)
	return rec.Trusted, err
}

func readTrust(p string) (trustRecord, error) {
	var rec trustRecord
	b, err := safeio.ReadOwned(p, maxTrustBytes) // O_NOFOLLOW: a link there is refused
	if errors.Is(err, fs.ErrNotExist) {
		return rec, nil
	}
	if err != nil {
		return rec, fmt.Errorf("trust record: %w", err)
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, fmt.Errorf("trust record %s is not valid JSON (%w): move it aside and trust your repositories again", p, err)
	}
	sort.Slice(rec.Trusted, func(i, j int) bool { return rec.Trusted[i].Path < rec.Trusted[j].Path })
	return rec, nil
}

// ConfigTrust is the trust state of one repository's config file.
type ConfigTrust struct {
	Path    string      `json:"path"`              // the config file (absolute)
	Exists  bool        `json:"exists"`            // the file is there
	Trusted bool        `json:"trusted"`           // recorded with this very content
	Changed bool        `json:"changed,omitempty"` // recorded, but the content is not the one trusted
	SHA256  string      `json:"sha256,omitempty"`  // of the content now
	Entry   *TrustEntry `json:"entry,omitempty"`   // the record's entry for this path
}

// CheckTrust reports whether root's .relay-baton.json is trusted. b is its
// content (nil: read it).
func CheckTrust(root string) (ConfigTrust, []byte, error) {
	p, err := ConfigPath(root)
	if err != nil {
		return ConfigTrust{}, nil, err
	}
	st := ConfigTrust{Path: p}
	b, err := ReadConfigFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		b, err = nil, nil
	} else if err == nil {
		st.Exists, st.SHA256 = true, ConfigSum(b)
	}
	if err != nil {
		return st, nil, err
	}
	tp, err := TrustPath()
	if err != nil {
		return st, b, err
	}
	rec, err := readTrust(tp)
	if err != nil {
		return st, b, err
	}
	for i := range rec.Trusted {
		if rec.Trusted[i].Path == p {
			e := rec.Trusted[i]
			st.Entry = &e
			st.Trusted = st.Exists && e.SHA256 == st.SHA256
			st.Changed = st.Exists && !st.Trusted
		}
	}
	return st, b, nil
}

// TrustConfig records root's .relay-baton.json, as it is now, as trusted.
// The file must parse and hold no refused argument (RefusedArgs): a config
// relay-baton would refuse is not recorded. It returns the config trusted.
func TrustConfig(root string) (Config, error) {
	st, b, err := CheckTrust(root)
	if err != nil {
		return Config{}, err
	}
	if !st.Exists {
		return Config{}, fmt.Errorf("no %s in %s: nothing to trust", ConfigName, filepath.Dir(st.Path))
	}
	cfg, err := parseConfig(st.Path, b)
	if err != nil {
		return Config{}, fmt.Errorf("not trusted: %w", err)
	}
	err = updateTrust(func(rec *trustRecord) {
		out := rec.Trusted[:0]
		for _, e := range rec.Trusted {
			if e.Path != st.Path {
				out = append(out, e)
			}
		}
		rec.Trusted = append(out, TrustEntry{Path: st.Path, SHA256: st.SHA256, TrustedAt: time.Now().UTC().Truncate(time.Second)})
	})
	return cfg, err
}

// RevokeConfig removes root's .relay-baton.json from the trust record (the
// file itself may be gone). It reports whether there was an entry.
func RevokeConfig(root string) (bool, error) {
	p, err := ConfigPath(root)
	if err != nil {
		return false, err
	}
	found := false
	err = updateTrust(func(rec *trustRecord) {
		out := rec.Trusted[:0]
		for _, e := range rec.Trusted {
			if e.Path == p {
				found = true
				continue
			}
			out = append(out, e)
		}
		rec.Trusted = out
	})
	return found, err
}

// updateTrust rewrites the trust record under a lock: the folder is
// created 0700 (a link in its place is refused), the record written 0600
// through a temporary file renamed over it (a link at its name is
// replaced, never followed), fsynced.
func updateTrust(change func(*trustRecord)) error {
	dir, err := TrustDir()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return fmt.Errorf("trust record: %w", err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("trust record: %w", err)
	}
	if fi, err := os.Lstat(dir); err != nil {
		return fmt.Errorf("trust record: %w", err)
	} else if !fi.IsDir() {
		return fmt.Errorf("trust record: %s is %s, not a folder: move it aside", dir, safeio.FileKind(fi.Mode()))
	}
	lock, err := safeio.OpenChecked(filepath.Join(dir, ".trust.lock"), os.O_CREATE|os.O_RDWR, 0o600, true)
	if err != nil {
		return fmt.Errorf("trust record: %w", err)
	}
	defer lock.Close()
	defer safeio.LockFile(lock)()
	p := filepath.Join(dir, TrustFileName)
	rec, err := readTrust(p)
	if err != nil {
		return err
	}
	change(&rec)
	rec.Version = 1
	if rec.Trusted == nil {
		rec.Trusted = []TrustEntry{}
	}
	sort.Slice(rec.Trusted, func(i, j int) bool { return rec.Trusted[i].Path < rec.Trusted[j].Path })
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if err := safeio.WriteFileAtomic(p, append(b, '\n'), 0o600, true); err != nil {
		return fmt.Errorf("trust record %s not written (nothing changed): %w", p, err)
	}
	return nil
}
