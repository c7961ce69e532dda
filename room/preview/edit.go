package preview

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/relay-baton/relay-baton/safeio"
)

// ErrNoEditor is EditText's error when no editor is found: neither
// $VISUAL nor $EDITOR is set and none of the fallbacks is on PATH. The
// confirmation says so and asks again, it does not cancel.
var ErrNoEditor = errors.New("no editor to open: $VISUAL and $EDITOR are not set and none of " + strings.Join(fallbackEditors(), ", ") +
	" is on PATH (install one, or start the room again with EDITOR set, for example EDITOR=vi)")

// fallbackEditors are the editors looked for on PATH when neither
// $VISUAL nor $EDITOR is set, in order, as git does (Debian's `editor`
// alternative, then vi; nano where vi is missing; Notepad on Windows).
func fallbackEditors() []string {
	if runtime.GOOS == "windows" {
		return []string{"notepad"}
	}
	return []string{"editor", "vi", "nano"}
}

// findEditor is the first of fallbackEditors found in the directories of
// path (an executable regular file; an empty or relative entry, the
// current folder, is never searched), "" when none is.
func findEditor(path string) string {
	exts := []string{""}
	if runtime.GOOS == "windows" {
		exts = []string{".exe"}
	}
	for _, name := range fallbackEditors() {
		for _, dir := range filepath.SplitList(path) {
			if dir == "" || !filepath.IsAbs(dir) {
				continue
			}
			for _, ext := range exts {
				p := filepath.Join(dir, name+ext)
				fi, err := os.Stat(p)
				if err == nil && fi.Mode().IsRegular() && (runtime.GOOS == "windows" || fi.Mode()&0o111 != 0) {
					return p
				}
			}
		}
	}
	return ""
}

// EditText opens text in $VISUAL or $EDITOR (split on spaces, run without
// a shell), else in the first of editor, vi and nano on PATH, and returns
// the edited text.
func EditText(text string, getenv func(string) string, dir string, in io.Reader, out, errw io.Writer) (string, error) {
	ed := getenv("VISUAL")
	if strings.TrimSpace(ed) == "" {
		ed = getenv("EDITOR")
	}
	argv := strings.Fields(ed)
	if len(argv) == 0 {
		if p := findEditor(getenv("PATH")); p != "" {
			argv = []string{p}
		}
	}
	if len(argv) == 0 {
		return "", ErrNoEditor
	}
	f, err := os.CreateTemp(dir, "prompt-*.md")
	if err != nil {
		return "", err
	}
	path := f.Name()
	defer os.Remove(path)
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return "", err
	}
	f.Close()
	cmd := exec.Command(argv[0], append(argv[1:], path)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in, out, errw
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("editor %s: %w", argv[0], err)
	}
	b, err := safeio.ReadOwned(path, maxEditBytes) // what the editor left there: a regular file, capped
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// maxEditBytes caps what is read back of an edited prompt.
const maxEditBytes = 16 << 20
