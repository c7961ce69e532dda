package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// version overrides the module version when set at build time (-ldflags
// "-X github.com/relay-baton/relay-baton/cli.version=v1.2.3"); otherwise
// the build information decides (BuildVersion).
var version = ""

// BuildVersion is what the binary knows about its own build: the module
// version and the VCS stamp Go records when it builds from a git checkout
// (go build / go install in the clone; -buildvcs=auto is the default).
type BuildVersion struct {
	Version  string `json:"version"`            // module version: a tag, a pseudo-version or (devel)
	Revision string `json:"revision,omitempty"` // vcs.revision: the commit
	Time     string `json:"time,omitempty"`     // vcs.time: the commit's time (RFC 3339)
	Modified bool   `json:"modified"`           // vcs.modified: the work tree had local changes (false when unknown)
	Go       string `json:"go"`                 // the Go toolchain that built it
}

// ReadBuildVersion reads the running binary's build information.
func ReadBuildVersion() BuildVersion {
	v := BuildVersion{Version: "(devel)", Go: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			v.Version = bi.Main.Version
		}
		if bi.GoVersion != "" {
			v.Go = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Revision = s.Value
			case "vcs.time":
				v.Time = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	if version != "" {
		v.Version = version
	}
	return v
}

// String is the one line `--version` prints, e.g.
// "relay-baton v0.0.0-20261201200000-0123456789ab+dirty (commit 0123456789ab, 2026-12-01T20:00:00Z, modified; go1.26.8)".
func (v BuildVersion) String() string {
	var parts []string
	if v.Revision != "" {
		r := v.Revision
		if len(r) > 12 {
			r = r[:12]
		}
		parts = append(parts, "commit "+r)
	} else {
		parts = append(parts, "no VCS information: built outside a git clone, in a git worktree, or with -buildvcs=false")
	}
	if v.Time != "" {
		parts = append(parts, v.Time)
	}
	if v.Modified {
		parts = append(parts, "modified")
	}
	return fmt.Sprintf("relay-baton %s (%s; %s)", v.Version, strings.Join(parts, ", "), v.Go)
}

func runVersion(inv *Invocation) error {
	fs := inv.Flags()
	js := fs.Bool("json", false, "print JSON: {version, revision, time, modified, go}; revision and time only when Go stamped them")
	if err := inv.Parse(fs); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return Usagef("version takes no arguments")
	}
	v := ReadBuildVersion()
	if *js {
		return inv.PrintJSON(v)
	}
	fmt.Fprintln(inv.IO.Out, v.String())
	return nil
}
