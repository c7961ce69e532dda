package room

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// ErrNoEditor is EditText's error when neither $VISUAL nor $EDITOR is set:
// the confirmation says so and asks again, it does not cancel.
var ErrNoEditor = errors.New("no editor to open: set $VISUAL or $EDITOR (for example: export EDITOR=vi) and start the room again to edit")

// EditText opens text in $VISUAL or $EDITOR (split on spaces, run without
// a shell) and returns the edited text.
func EditText(text string, getenv func(string) string, dir string, in io.Reader, out, errw io.Writer) (string, error) {
	ed := getenv("VISUAL")
	if strings.TrimSpace(ed) == "" {
		ed = getenv("EDITOR")
	}
	argv := strings.Fields(ed)
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
	b, err := readDoc(path) // what the editor left there: a regular file, capped
	if err != nil {
		return "", err
	}
	return string(b), nil
}
