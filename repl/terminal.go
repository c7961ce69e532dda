package repl

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"

	"github.com/chzyer/readline"
	"github.com/relay-baton/relay-baton/room"
)

// rlTerminal asks questions through the REPL's readline instance.
type rlTerminal struct {
	rl   *readline.Instance
	in   *termInput
	pin  *pinnedPanel // nil when the panel is not pinned
	e    *room.Engine
	opts Options
	// reading is set while a Readline runs (the prompt or a question is
	// on the cursor's line).
	reading *atomic.Bool
}

// readLine is rl.Readline with t.reading set meanwhile.
func (t *rlTerminal) readLine() (string, error) {
	t.reading.Store(true)
	defer t.reading.Store(false)
	return t.rl.Readline()
}

// Ask reads an answer typed after the question is shown: everything that
// arrived before (typed ahead, the rest of a paste) is discarded first, and
// a paste while asking answers nothing.
func (t *rlTerminal) Ask(q string) (string, error) {
	t.in.Flush()
	t.in.SetAsk(true)
	t.in.SetOneKey(t.OneKey())
	defer t.in.SetAsk(false)
	t.rl.SetPrompt(q)
	defer t.rl.SetPrompt(promptFor(t.e.Active, t.opts.Color))
	line, err := t.readLine()
	if !t.opts.Terminal && err == nil {
		fmt.Fprintf(t.opts.Out, "%s%s\n", q, line)
	}
	return line, err
}

// OneKey reports whether a question takes one key, without Enter: the
// terminal is raw (the room reads it key by key).
func (t *rlTerminal) OneKey() bool { return t.opts.Terminal && t.in.fd >= 0 }

// Edit hands the terminal to the editor: the room stops reading it and
// switches bracketed paste off meanwhile.
func (t *rlTerminal) Edit(text string) (string, error) {
	defer t.handOver()()
	return room.EditText(text, t.e.Getenv, t.e.SessionDir, t.opts.In, t.opts.Out, t.opts.Err)
}

// handOver stops reading the terminal, switches bracketed paste off and
// gives the pinned panel's rows back (the program gets the whole screen)
// while another program (an editor, a pager) has it; the returned func
// takes the terminal back, the panel's rows reserved again and what was
// typed meanwhile discarded.
func (t *rlTerminal) handOver() (back func()) {
	t.in.Pause()
	t.bracketed(false)
	if t.pin != nil {
		t.pin.Suspend()
	}
	return func() {
		t.bracketed(true)
		if t.pin != nil {
			t.pin.Reapply()
		}
		t.in.Flush()
		t.in.Resume()
	}
}

// Page runs $PAGER (default less -R) on text when the room's input and
// output are a terminal and text is taller than it.
func (t *rlTerminal) Page(text string) bool {
	if !t.opts.Terminal || !t.opts.OutTerminal {
		return false
	}
	f, ok := t.opts.Out.(*os.File)
	if !ok {
		return false
	}
	_, h, err := readline.GetSize(int(f.Fd()))
	if err != nil || h <= 0 || strings.Count(text, "\n") < h-2 {
		return false
	}
	argv := strings.Fields(t.e.Getenv("PAGER"))
	if len(argv) == 0 {
		argv = []string{"less", "-R"}
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return false
	}
	defer t.handOver()()
	cmd := exec.Command(path, argv[1:]...)
	// The text is the pager's stdin: it reads its keys from the terminal.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(text), t.opts.Out, t.opts.Err
	return cmd.Run() == nil
}

// bracketed asks the terminal to mark pastes (ESC[?2004h) and report
// focus changes (ESC[?1004h), or stop.
func (t *rlTerminal) bracketed(on bool) {
	if !t.opts.Terminal || !t.opts.OutTerminal {
		return
	}
	// Focus reports (CSI ?1004) go with it: the room reads them (the
	// notifications), an editor would take them for keys.
	if on {
		io.WriteString(t.opts.Out, "\x1b[?2004h\x1b[?1004h")
	} else {
		io.WriteString(t.opts.Out, "\x1b[?2004l\x1b[?1004l")
	}
}

// LineTerminal asks on a plain reader (one-shot commands on a terminal).
type LineTerminal struct {
	In     *bufio.Reader
	Out    io.Writer
	Err    io.Writer
	Stdin  io.Reader // handed to the editor
	Getenv func(string) string
	Dir    string
}

// Ask prints q and reads one line typed after it: input that arrived
// before (typed ahead while the preview was built) is discarded first.
func (t *LineTerminal) Ask(q string) (string, error) {
	fmt.Fprint(t.Out, q)
	if f, ok := t.Stdin.(*os.File); ok {
		_ = tcflush(int(f.Fd()))
	}
	t.In.Discard(t.In.Buffered())
	s, err := t.In.ReadString('\n')
	if err != nil && s == "" {
		fmt.Fprintln(t.Out)
		return "", err
	}
	return strings.TrimRight(s, "\r\n"), nil
}

// Edit opens the editor.
func (t *LineTerminal) Edit(text string) (string, error) {
	g := t.Getenv
	if g == nil {
		g = os.Getenv
	}
	return room.EditText(text, g, t.Dir, t.Stdin, t.Out, t.Err)
}
