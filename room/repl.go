package room

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/chzyer/readline"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/workspace"
)

// REPLOptions configures RunREPL.
type REPLOptions struct {
	In       io.Reader // the terminal (os.Stdin in production)
	Out      io.Writer
	Err      io.Writer
	Terminal bool // In is a terminal
	Color    bool
	// OutTerminal: Out is a terminal too (a wide one gets the boxed context
	// panel; otherwise a one-line status precedes each prompt).
	OutTerminal bool
	// Resume rebuilds the state from conversation.jsonl before the first
	// prompt (chat --resume), with a recap of Recap turns (0: DefaultRecap).
	Resume bool
	Recap  int
}

// completer implements readline.AutoCompleter from the command table.
type completer struct{ e *Engine }

// Do returns the suffixes that complete the word before pos, and the
// length of what is already typed of it.
func (c completer) Do(line []rune, pos int) ([][]rune, int) {
	return Complete(c.e, string(line[:pos]))
}

// Complete completes a partial input line: command names after "/", then
// the command's arguments. It returns suffixes and the typed length.
func Complete(e *Engine, text string) ([][]rune, int) {
	if !strings.HasPrefix(text, "/") {
		return nil, 0
	}
	name, rest, hasArgs := strings.Cut(text[1:], " ")
	if !hasArgs {
		var out [][]rune
		lname := strings.ToLower(name)
		for _, cmd := range Commands {
			if strings.HasPrefix(cmd.Name, lname) {
				out = append(out, []rune(cmd.Name[len(lname):]+" "))
			}
		}
		return out, len([]rune(name))
	}
	cmd := Lookup(name)
	if cmd == nil || cmd.Args == nil {
		return nil, 0
	}
	fields := strings.Fields(rest)
	cur := ""
	if len(fields) > 0 && !strings.HasSuffix(rest, " ") {
		cur, fields = fields[len(fields)-1], fields[:len(fields)-1]
	}
	var out [][]rune
	for _, w := range cmd.Args(e, fields) {
		if strings.HasPrefix(w, cur) {
			out = append(out, []rune(w[len(cur):]+" "))
		}
	}
	return out, len([]rune(cur))
}

// rlTerminal asks questions through the REPL's readline instance.
type rlTerminal struct {
	rl   *readline.Instance
	in   *termInput
	pin  *pinnedPanel // nil when the panel is not pinned
	e    *Engine
	opts REPLOptions
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
	defer t.rl.SetPrompt(PromptFor(t.e.Active, t.opts.Color))
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
	t.in.Pause()
	t.bracketed(false)
	defer func() {
		t.bracketed(true)
		if t.pin != nil {
			t.pin.Reapply()
		}
		t.in.Flush()
		t.in.Resume()
	}()
	return EditText(text, t.e.getenv, t.e.SessionDir, t.opts.In, t.opts.Out, t.opts.Err)
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

// RunREPL runs the room until /exit, Ctrl-D or a second Ctrl-C on an empty
// prompt. Command errors are printed, never fatal. Ctrl-C while a command
// runs cancels that command (and its agent's process tree).
func RunREPL(ctx context.Context, e *Engine, o REPLOptions) error {
	in := o.In
	if in == nil {
		in = os.Stdin
	}
	// termInput owns the terminal's input (input.go): pastes, long lines,
	// typed-ahead answers. It reads only when poll says there is input, so
	// ending ctx (SIGTERM, SIGHUP) ends a pending Readline and an editor
	// can own the terminal while it is paused.
	fd := -1
	if f, ok := in.(*os.File); ok && o.Terminal {
		fd = int(f.Fd())
	}
	rc := newTermInput(in, fd)
	// One writer for everything that reaches the terminal, so that the
	// pinned panel's draws never land inside a readline redraw.
	lw := &termWriter{w: o.Out}
	e.out.mu.Lock()
	prevOut := e.out.w
	e.out.w = lw
	e.out.mu.Unlock()
	defer func() {
		e.out.mu.Lock()
		e.out.w = prevOut
		e.out.mu.Unlock()
	}()
	if o.Terminal && o.OutTerminal {
		e.out.setWidth(func() int { return termWidth(o) })
		defer e.out.setWidth(nil)
	}
	var pin *pinnedPanel
	if fd >= 0 && o.OutTerminal {
		pin = &pinnedPanel{w: lw, color: o.Color, size: func() (int, int, bool) {
			w, h, err := readline.GetSize(fd)
			return w, h, err == nil && w > 0 && h > 0
		}}
		lw.pin = pin
		defer pin.Close()
	}
	cfg := &readline.Config{
		Prompt: PromptFor(e.Active, o.Color),
		// No HistoryFile: the line editor would follow a symlink at that
		// path and create it 0644; the room reads and appends it itself.
		HistoryLimit:      1000,
		HistorySearchFold: true,
		// Only room input goes into history, not answers to "run this?".
		DisableAutoSaveHistory: true,
		AutoComplete:           completer{e},
		InterruptPrompt:        "^C",
		EOFPrompt:              "exit",
		Stdin:                  rc,
		Stdout:                 lw,
		Stderr:                 o.Err,
		FuncIsTerminal:         func() bool { return o.Terminal },
	}
	var reading atomic.Bool // a Readline is running
	var rlp atomic.Pointer[readline.Instance]
	if f, ok := in.(*os.File); ok && o.Terminal {
		// Raw mode on the terminal we were given (readline's default is
		// always fd 0).
		fd := int(f.Fd())
		var state *readline.State
		cfg.FuncMakeRaw = func() (err error) {
			state, err = readline.MakeRaw(fd)
			return err
		}
		cfg.FuncExitRaw = func() error {
			if state == nil {
				return nil
			}
			return readline.Restore(fd, state)
		}
		cfg.FuncGetWidth = func() int {
			if w, _, err := readline.GetSize(fd); err == nil && w > 0 {
				return w
			}
			return 80
		}
		// On SIGWINCH the pinned panel takes its rows again first, then
		// readline redraws its line.
		// readline itself only notes the new width: the panel is pinned
		// again for the new size and readline redraws its line (the
		// prompt would otherwise stay hidden until the next key).
		cfg.FuncOnWidthChanged = func(f func()) {
			readline.DefaultOnWidthChanged(func() {
				f()
				if pin != nil {
					pin.Resize(reading.Load())
				}
				if l := rlp.Load(); l != nil {
					l.Refresh() // only while a line is being read
				}
			})
		}
	}
	if !o.Terminal {
		cfg.FuncMakeRaw = func() error { return nil }
		cfg.FuncExitRaw = func() error { return nil }
		cfg.FuncGetWidth = func() int { return 80 }
	}
	rl, err := readline.NewEx(cfg)
	if err != nil {
		return fmt.Errorf("start the line editor: %w", err)
	}
	defer rl.Close()
	rlp.Store(rl)
	// Runs before rl.Close: readline closes only its own buffer, and its
	// reader goroutine may already be waiting in rc for the next key, which
	// would make rl.Close wait for a keystroke that never comes.
	defer rc.Close()
	history := workspace.History{Path: filepath.Join(e.SessionDir, "room_history"), Limit: 1000}
	if lines, err := history.Load(); err != nil {
		e.Say("history not loaded: %v", err)
	} else {
		for _, l := range lines {
			rl.SaveHistory(l)
		}
	}
	historyErr := false
	rt := &rlTerminal{rl: rl, in: rc, pin: pin, e: e, opts: o, reading: &reading}
	rc.setOnDrop(func() {
		// Written through readline, which redraws the question below it.
		e.out.mu.Lock()
		defer e.out.mu.Unlock()
		rl.Write([]byte(e.out.label(events.RoleRelayBaton) + " ignored a paste while asking: a confirmation is a key you type.\n"))
	})
	if o.Terminal && o.OutTerminal {
		n, err := newNotifier(lw, e.getenv)
		if err != nil {
			e.Say("%v", err)
		}
		if n != nil {
			e.notify = n
			rc.mu.Lock()
			rc.onFocus = n.setFocus
			rc.mu.Unlock()
			defer func() { e.notify = nil }()
		}
	}
	// Replies to messages the room stopped waiting for are printed above
	// the prompt (readline clears its line and draws it again after) and
	// logged; their followers end with the room. Deferred after the
	// notifier's reset, so it runs before it.
	liveCtx, liveStop := context.WithCancel(ctx)
	live := &liveReplies{ctx: liveCtx, print: func(b []byte) {
		e.out.mu.Lock()
		defer e.out.mu.Unlock()
		e.out.clearLocked()
		rl.Write(b)
	}}
	e.live = live
	defer func() {
		liveStop()
		live.wg.Wait()
		e.live = nil
	}()
	if o.Terminal {
		e.SetTerminal(rt)
		rt.bracketed(true)
		defer rt.bracketed(false)
	} else {
		// Without a terminal nothing can be confirmed: no agent runs
		// unless the room was started with --yes (as the one-shots).
		e.SetTerminal(nil)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-ctx.Done():
			rc.Close()
			rl.Close()
		case <-stop:
		}
	}()

	// SIGINT reaches us only while a command runs (readline reads ^C as a
	// key in raw mode): it cancels that command.
	var mu sync.Mutex
	var cancelTurn context.CancelFunc
	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, os.Interrupt)
	defer func() { signal.Stop(sigc); close(sigc) }()
	go func() {
		for range sigc {
			mu.Lock()
			if cancelTurn != nil {
				cancelTurn()
			}
			mu.Unlock()
		}
	}()

	banner, hint := fmt.Sprintf("Agent Room · %s · active agent %s", e.Root, e.Active), "/help lists commands, Ctrl-D leaves"
	if utf8.RuneCountInString("[relay-baton] "+banner+" · "+hint) < termWidth(o) {
		e.Say("%s · %s", banner, hint)
	} else { // two lines rather than one the terminal breaks mid-word
		e.Say("%s", banner)
		e.Say("%s", hint)
	}
	if o.Resume {
		recap := o.Recap
		if recap <= 0 {
			recap = DefaultRecap
		}
		if _, err := e.Resume(ctx, recap); err != nil && !errors.Is(err, ErrDeclined) {
			e.Say("error: %v", err)
		}
	}
	interrupts := 0
	redraw := true
	for {
		if ctx.Err() != nil {
			return nil
		}
		rl.SetPrompt(PromptFor(e.Active, o.Color))
		stopPanel := func() {}
		if redraw {
			stopPanel = e.startPanel(ctx, o, rl.Stdout(), pin)
			redraw = false
		}
		line, err := rt.readLine()
		stopPanel()
		typed := line
		line = rc.Expand(line)
		// A line ending in \ (or Alt-Enter) continues on the next line.
		for err == nil && strings.HasSuffix(line, "\\") {
			rl.SetPrompt(continuationPrompt(o.Color))
			var next string
			next, err = rt.readLine()
			if err == nil {
				line = strings.TrimSuffix(line, "\\") + "\n" + rc.Expand(next)
				typed = ""
			}
		}
		if errors.Is(err, readline.ErrInterrupt) {
			if strings.TrimSpace(line) != "" {
				interrupts = 0
				continue
			}
			interrupts++
			if interrupts >= 2 {
				e.Say("bye.")
				return nil
			}
			e.Say("press Ctrl-C again (or Ctrl-D, or /exit) to leave the room")
			continue
		}
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, io.EOF) {
			e.Say("bye.")
			return nil
		}
		if err != nil {
			return err
		}
		interrupts = 0
		if strings.TrimSpace(line) == "" {
			continue
		}
		redraw = true
		if typed == line { // no paste, no continuation: one line to recall
			rl.SaveHistory(line)
			if err := history.Append(line); err != nil && !historyErr {
				historyErr = true // said once
				e.Say("history not saved: %v", err)
			}
		}
		if !o.Terminal {
			e.out.say(events.RoleUser, "%s", line)
		}
		turn, cancel := context.WithCancel(ctx)
		mu.Lock()
		cancelTurn = cancel
		mu.Unlock()
		exit, err := e.Process(turn, line)
		mu.Lock()
		cancelTurn = nil
		mu.Unlock()
		cancelled := turn.Err() != nil && ctx.Err() == nil
		cancel()
		// ErrNotLoggedIn: the run's summary line already said how to log in.
		// A cancelled run's own line said "cancelled": one Ctrl-C, one line.
		if err != nil && !errors.Is(err, ErrDeclined) && !errors.Is(err, agents.ErrNotLoggedIn) && !(cancelled && told(err)) {
			if cancelled {
				e.Say("cancelled (Ctrl-C): %v", err)
			} else {
				e.Say("error: %v", err)
			}
		}
		if exit {
			e.Say("bye.")
			return nil
		}
	}
}

// continuationPrompt is the prompt of a message's next line.
func continuationPrompt(useColor bool) string {
	p := printer{color: useColor}
	return p.dim("   …") + " "
}

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
	return EditText(text, g, t.Dir, t.Stdin, t.Out, t.Err)
}
