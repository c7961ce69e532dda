package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// releaseConfig is the part of .goreleaser.yaml (GoReleaser v2) that
// relay-baton relies on; every other key is refused by the decoder (as
// GoReleaser's strict one refuses an unknown key) unless listed here.
type releaseConfig struct {
	Version     int    `yaml:"version"`
	ProjectName string `yaml:"project_name"`
	Before      struct {
		Hooks []string `yaml:"hooks"`
	} `yaml:"before"`
	Builds []struct {
		ID      string   `yaml:"id"`
		Main    string   `yaml:"main"`
		Binary  string   `yaml:"binary"`
		Env     []string `yaml:"env"`
		Flags   []string `yaml:"flags"`
		Ldflags []string `yaml:"ldflags"`
		Goos    []string `yaml:"goos"`
		Goarch  []string `yaml:"goarch"`
	} `yaml:"builds"`
	Archives []struct {
		ID              string   `yaml:"id"`
		IDs             []string `yaml:"ids"`
		NameTemplate    string   `yaml:"name_template"`
		Formats         []string `yaml:"formats"`
		FormatOverrides []struct {
			Goos    string   `yaml:"goos"`
			Formats []string `yaml:"formats"`
		} `yaml:"format_overrides"`
		Files []string `yaml:"files"`
	} `yaml:"archives"`
	Checksum struct {
		NameTemplate string `yaml:"name_template"`
		Algorithm    string `yaml:"algorithm"`
	} `yaml:"checksum"`
	Snapshot struct {
		VersionTemplate string `yaml:"version_template"`
	} `yaml:"snapshot"`
	Changelog struct {
		Disable bool `yaml:"disable"`
	} `yaml:"changelog"`
	Release struct {
		GitHub struct {
			Owner string `yaml:"owner"`
			Name  string `yaml:"name"`
		} `yaml:"github"`
	} `yaml:"release"`
}

// TestReleaseConfig holds .goreleaser.yaml to the code without GoReleaser
// itself: it is well-formed YAML of known keys, builds the binary from the
// module's root for the six targets docs/platforms.md names (each of which
// .ci/run cross-builds), statically, stamps a version variable cli really
// has, and packs files that exist.
func TestReleaseConfig(t *testing.T) {
	b, err := os.ReadFile(".goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c releaseConfig
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	if c.Version != 2 || c.ProjectName != "relay-baton" || len(c.Builds) != 1 || len(c.Archives) != 1 {
		t.Fatalf(".goreleaser.yaml: version %d, project %q, %d builds, %d archives: want version 2 of relay-baton, one build, one archive", c.Version, c.ProjectName, len(c.Builds), len(c.Archives))
	}
	bd := c.Builds[0]
	if bd.Main != "." || bd.Binary != "relay-baton" || !slices.Contains(bd.Env, "CGO_ENABLED=0") {
		t.Errorf("build: main %q, binary %q, env %q: want the module root, relay-baton, CGO_ENABLED=0", bd.Main, bd.Binary, bd.Env)
	}
	if a := c.Archives[0]; !slices.Equal(a.IDs, []string{bd.ID}) {
		t.Errorf("archive packs builds %q, the build is %q", a.IDs, bd.ID)
	}

	var targets []string
	for _, goos := range bd.Goos {
		for _, arch := range bd.Goarch {
			targets = append(targets, goos+"/"+arch)
		}
	}
	slices.Sort(targets)
	want := []string{"darwin/amd64", "darwin/arm64", "linux/amd64", "linux/arm64", "windows/amd64", "windows/arm64"}
	if !slices.Equal(targets, want) {
		t.Errorf("release targets %q, want %q", targets, want)
	}
	run, err := os.ReadFile(".ci/run")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^for target in ([^;]+); do\n\s+echo "go build`).FindSubmatch(run)
	if m == nil {
		t.Fatal(".ci/run has no loop of cross builds (for target in ...; do echo \"go build ...\")")
	}
	built := append(strings.Fields(string(m[1])), "linux/amd64") // the host's build: the suite's
	for _, tg := range targets {
		if !slices.Contains(built, tg) {
			t.Errorf(".ci/run does not build %s, a release target", tg)
		}
	}

	xvar := regexp.MustCompile(`-X github\.com/relay-baton/relay-baton/([a-z/]+)\.([A-Za-z_]+)=`)
	for _, l := range bd.Ldflags {
		for _, x := range xvar.FindAllStringSubmatch(l, -1) {
			src, _ := filepath.Glob(filepath.Join(x[1], "*.go"))
			found := false
			for _, f := range src {
				fb, _ := os.ReadFile(f)
				if !strings.HasSuffix(f, "_test.go") && regexp.MustCompile(`(?m)^var `+x[2]+` = ""`).Match(fb) {
					found = true
				}
			}
			if !found {
				t.Errorf("ldflags set %s.%s, which is no string variable there", x[1], x[2])
			}
		}
	}
	for _, g := range c.Archives[0].Files {
		if ms, _ := filepath.Glob(g); len(ms) == 0 {
			t.Errorf("the archive's files %q match nothing", g)
		}
	}
}
