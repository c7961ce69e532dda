package claudecode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/procfacts"
	"github.com/relay-baton/relay-baton/safeio"
)

// The last answer of `claude agents --json`, kept in the user's own cache
// folder (never in a repository: a clone cannot plant it), each session
// with its process named across pid reuse (pid, start time, boot id). A
// send to a session this file names, whose process still runs as named,
// needs no new call of claude (seconds on a loaded machine): the session's
// socket is still asked who listens there before a byte is written. The
// targets' list always asks claude (new sessions, their state).

// RegistryFile is where the answer is kept ("" when the user has no cache
// folder).
func RegistryFile() string {
	d, err := os.UserCacheDir()
	if err != nil || d == "" {
		return ""
	}
	return filepath.Join(d, "relay-baton", "claude-agents.json")
}

type knownSession struct {
	Session
	Process procfacts.Process `json:"process"`
}

// rememberRegistry writes list with each session's process identity
// (0600, a temporary file renamed over the old one, its folder 0700).
func rememberRegistry(list []Session) {
	p := RegistryFile()
	if p == "" {
		return
	}
	known := make([]knownSession, 0, len(list))
	for _, l := range list {
		if pr := procfacts.Identify(procfacts.System, l.PID); pr.Known() && pr.Start != 0 {
			known = append(known, knownSession{l, pr})
		}
	}
	b, err := json.Marshal(known)
	if err != nil {
		return
	}
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return
	}
	f, err := os.CreateTemp(dir, ".claude-agents-*")
	if err != nil {
		return
	}
	_, werr := f.Write(b)
	cerr := f.Close()
	if werr != nil || cerr != nil || os.Rename(f.Name(), p) != nil {
		os.Remove(f.Name())
	}
}

// rememberedSession is the remembered entry of session id whose process
// still runs as it ran when claude listed it (ok false otherwise).
func rememberedSession(id string) (Session, bool) {
	list, _, ok := rememberedRegistry()
	if !ok {
		return Session{}, false
	}
	for _, l := range list {
		if strings.EqualFold(l.SessionID, id) {
			return l, true
		}
	}
	return Session{}, false
}

// rememberedRegistry is the remembered answer, when it was written, and
// of its sessions those whose process still runs as it ran then.
func rememberedRegistry() ([]Session, time.Time, bool) {
	p := RegistryFile()
	if p == "" {
		return nil, time.Time{}, false
	}
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, time.Time{}, false
	}
	b, err := safeio.ReadOwned(p, 4<<20)
	if err != nil {
		return nil, time.Time{}, false
	}
	var known []knownSession
	if json.Unmarshal(b, &known) != nil {
		return nil, time.Time{}, false
	}
	var live []Session
	for _, k := range known {
		if k.Process.PID == k.PID && k.Process.Start != 0 && k.Process.Check(procfacts.System) == procfacts.Live {
			live = append(live, k.Session)
		}
	}
	return live, fi.ModTime(), true
}

// CachedRegistry is the last answer of `claude agents --json` this process
// or another one read (the remembered file), and when it was read; ok is
// false when there is none to be had without running claude. It never
// starts a process: the views' word on the registry.
func CachedRegistry() ([]Session, time.Time, bool) {
	if os.Getenv(NoRegistryEnv) == "1" || registryOff.Load() {
		return nil, time.Time{}, false
	}
	registryCache.Lock()
	list, at, err := registryCache.list, registryCache.at, registryCache.err
	registryCache.Unlock()
	if !at.IsZero() && err == nil {
		return list, at, true
	}
	return rememberedRegistry()
}

// CachedSession is FindSession from what CachedRegistry has:
// no new call of claude (ok false when the last answer does not name id).
func CachedSession(id string) (Session, bool) {
	list, _, ok := CachedRegistry()
	if !ok {
		return Session{}, false
	}
	if l, ok := rememberedSession(id); ok {
		return l, true
	}
	for _, l := range list {
		if strings.EqualFold(l.SessionID, id) {
			return l, true
		}
	}
	return Session{}, false
}
