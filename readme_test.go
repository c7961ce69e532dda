package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/cli"
)

var updateReadme = flag.Bool("update-readme", false, "rewrite README.md's generated sections")

// readmeCommands is the README's "Commands at a glance", generated from the
// command table that drives dispatch and --help.
func readmeCommands() string {
	var b strings.Builder
	b.WriteString("| command | what it does |\n|---|---|\n")
	for _, c := range table.Commands {
		if c.Hidden {
			continue
		}
		usage := strings.TrimSpace("relay-baton " + c.Name + " " + c.Usage)
		short := c.Short
		if len(c.Aliases) > 0 {
			short += " (alias `" + strings.Join(c.Aliases, "`, `") + "`)"
		}
		fmt.Fprintf(&b, "| `%s` | %s |\n", strings.ReplaceAll(usage, "|", `\|`), short)
	}
	return b.String()
}

// The README's command list is the command table's: a command added, renamed
// or given a new usage shows there (go test . -run TestReadmeCommands
// -update-readme rewrites it).
func TestReadmeCommands(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	const open, end = "<!-- commands:", "<!-- /commands -->"
	i, j := strings.Index(s, open), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("README.md has no %q ... %q section", open, end)
	}
	i += strings.Index(s[i:], "-->\n") + len("-->\n")
	want := readmeCommands()
	if s[i:j] == want {
		return
	}
	if *updateReadme {
		if err := os.WriteFile("README.md", []byte(s[:i]+want+s[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("README.md's commands differ from the command table (go test . -run TestReadmeCommands -update-readme):\n%s\nwant:\n%s", s[i:j], want)
}

// The README's exit codes are --help's: the same codes, in the same order.
func TestReadmeExitCodes(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "<!-- exit-codes")
	sec, _, ok2 := strings.Cut(sec, "<!-- /exit-codes -->")
	if !ok || !ok2 {
		t.Fatal("README.md has no exit-codes section")
	}
	codes := func(re *regexp.Regexp, s string) (out []string) {
		for _, m := range re.FindAllStringSubmatch(s, -1) {
			out = append(out, m[1])
		}
		return out
	}
	readme := codes(regexp.MustCompile(`(?m)^\| (\d+) \|`), sec)
	help := codes(regexp.MustCompile(`(?m)^  (\d+)  `), cli.ExitCodesHelp)
	if strings.Join(readme, ",") != strings.Join(help, ",") || len(help) < 4 {
		t.Fatalf("README.md lists exit codes %v, --help %v", readme, help)
	}
}

// commandFlags are the flags `relay-baton <args> --help` lists, and the
// global ones.
func commandFlags(t *testing.T, args ...string) map[string]bool {
	t.Helper()
	code, out, errOut := runCLI(t, "", append(args, "--help")...)
	if code != 0 {
		t.Fatalf("%v --help: exit %d %s", args, code, errOut)
	}
	flags := map[string]bool{"--help": true, "-h": true, "--color": true, "--version": true}
	_, list, _ := strings.Cut(out, "\nFlags:\n")
	for _, m := range regexp.MustCompile(`(?m)^\s+(?:(-\w), )?(--[a-z][a-z0-9-]*)`).FindAllStringSubmatch(list, -1) {
		flags[m[2]] = true
		if m[1] != "" {
			flags[m[1]] = true
		}
	}
	return flags
}

// Every command line the README and docs/ show (a code line or span that
// starts with relay-baton, or a shell line after "$ ") names a command
// that exists and only flags that command takes.
func TestDocsCommandLinesAreTrue(t *testing.T) {
	files, _ := filepath.Glob("docs/*.md")
	files = append(files, "README.md")
	cache := map[string]map[string]bool{}
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range commandLines(string(b)) {
			for _, seg := range invocations(line) {
				words := strings.Fields(seg)
				if len(words) == 0 || words[0] == "--version" || words[0] == "--help" || strings.HasSuffix(words[0], ":") {
					continue // "relay-baton serve: http://..." is output
				}
				c := table.Lookup(words[0])
				if c == nil || c.Hidden {
					t.Errorf("%s: %q: %q is no relay-baton command", f, n, words[0])
					continue
				}
				key := []string{c.Name}
				if c.Dispatch && len(words) > 1 && !strings.HasPrefix(words[1], "-") {
					key = append(key, words[1])
				}
				flags, ok := cache[strings.Join(key, " ")]
				if !ok {
					flags = commandFlags(t, key...)
					cache[strings.Join(key, " ")] = flags
				}
				for _, w := range words[1:] {
					w, _, _ = strings.Cut(w, "=")
					w = strings.Trim(w, "[]()`,")
					if strings.HasPrefix(w, "-") && len(w) > 1 && !flags[w] {
						t.Errorf("%s: %q: %s takes no %s", f, n, strings.Join(key, " "), w)
					}
				}
				checked++
			}
		}
	}
	if checked < 30 {
		t.Fatalf("only %d command lines found in README.md and docs/", checked)
	}
}

// commandLines are the pieces of a Markdown text that show a relay-baton
// command: code spans, and lines of code blocks, that start with
// "relay-baton " or "$ ".
func commandLines(md string) map[string]string {
	out := map[string]string{}
	fence := false
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "```") {
			fence = !fence
			continue
		}
		if fence || strings.HasPrefix(l, "    ") {
			tl := strings.TrimSpace(l)
			if s, ok := strings.CutPrefix(tl, "$ "); ok {
				tl = s
			}
			if strings.HasPrefix(tl, "relay-baton ") {
				out[tl] = tl
			}
			continue
		}
		for _, m := range regexp.MustCompile("`(relay-baton [^`]*)`").FindAllStringSubmatch(l, -1) {
			out[m[1]] = strings.ReplaceAll(m[1], `\|`, "|") // in a table
		}
	}
	return out
}

// invocations splits a command line into the arguments of each
// relay-baton it runs, with quoted text removed and cut at a pipe, a
// redirection or a list outside brackets.
func invocations(line string) []string {
	var b strings.Builder
	depth, quote := 0, byte(0)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
				b.WriteString(`""`)
			}
			continue
		case c == '"' || c == '\'':
			quote = c
			continue
		case c == '[':
			depth++
		case c == ']':
			depth--
		case depth == 0 && (c == '|' || c == '>' || c == ';' || c == '&' || c == '<'):
			b.WriteByte('\n')
			continue
		}
		b.WriteByte(c)
	}
	var out []string
	for _, part := range strings.Split(b.String(), "\n") {
		for {
			i := strings.Index(part, "relay-baton ")
			if i < 0 {
				break
			}
			part = part[i+len("relay-baton "):]
			next := strings.Index(part, "relay-baton ")
			if next < 0 {
				out = append(out, part)
				break
			}
			out = append(out, part[:next])
			part = part[next:]
		}
	}
	return out
}

// docs/architecture.md's table has one row per package of `go list ./...`.
func TestArchitectureListsEveryPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	b, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z/]+)/?`").FindAllStringSubmatch(string(b), -1) {
		rows[strings.TrimSuffix(m[1], "/")] = true
	}
	const mod = "github.com/relay-baton/relay-baton"
	for _, p := range strings.Fields(string(out)) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p, mod), "/")
		if rel == "" {
			rel = "main"
		}
		if !rows[rel] {
			t.Errorf("docs/architecture.md has no row for package %s", rel)
		}
		delete(rows, rel)
	}
	for r := range rows {
		t.Errorf("docs/architecture.md has a row for %s, which go list does not list", r)
	}
}

// TestArchitectureImportsAreTrue: each package row's last column, the
// packages of ours it imports, is what `go list` says its non-test code
// imports.
func TestArchitectureImportsAreTrue(t *testing.T) {
	const mod = "github.com/relay-baton/relay-baton"
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	actual := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		rel := strings.TrimPrefix(strings.TrimPrefix(f[0], mod), "/")
		if rel == "" {
			rel = "main"
		}
		actual[rel] = []string{}
		for _, imp := range f[1:] {
			if r, ok := strings.CutPrefix(imp, mod+"/"); ok {
				actual[rel] = append(actual[rel], r)
			}
		}
		slices.Sort(actual[rel])
	}
	b, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	paren := regexp.MustCompile(`\s*\([^)]*\)`)
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z/]+?)/?` \\|.*\\| ([^|]*) \\|$").FindAllStringSubmatch(string(b), -1) {
		pkg, cell := m[1], strings.TrimSpace(m[2])
		want, ok := actual[pkg]
		if !ok {
			continue // TestArchitectureListsEveryPackage names it
		}
		var said []string
		if c := paren.ReplaceAllString(cell, ""); c != "" && c != "—" && c != "nothing" {
			for _, p := range strings.Split(c, ",") {
				said = append(said, strings.TrimSuffix(strings.TrimSpace(p), "/"))
			}
		}
		slices.Sort(said)
		if !slices.Equal(said, want) {
			t.Errorf("docs/architecture.md: %s imports %v, the row says %q", pkg, want, cell)
		}
	}
}

// testdata/corpus/README.md names the files that read the corpus: each
// one it names exists, and each Go file that names the corpus's folder is
// among them.
func TestCorpusReadmeNamesRealFiles(t *testing.T) {
	b, err := os.ReadFile("testdata/corpus/README.md")
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(string(b), "\n---\n")
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`([a-z/_]+\\.go)`").FindAllStringSubmatch(head, -1) {
		named[m[1]] = true
		if _, err := os.Stat(m[1]); err != nil {
			t.Errorf("testdata/corpus/README.md names %s: %v", m[1], err)
		}
	}
	if len(named) < 5 {
		t.Fatalf("only %d files named in testdata/corpus/README.md: %v", len(named), named)
	}
	uses := regexp.MustCompile(`testdata/corpus/|"testdata", "corpus"`)
	err = filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (p == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != "." {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(p, ".go") || p == "readme_test.go" {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if uses.Match(src) && !named[filepath.ToSlash(p)] {
			t.Errorf("%s reads testdata/corpus but testdata/corpus/README.md does not name it", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
