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

	"github.com/chzyer/readline"
	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/events"
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
	e    *Engine
	opts REPLOptions
}

func (t *rlTerminal) Ask(q string) (string, error) {
	t.rl.SetPrompt(q)
	defer t.rl.SetPrompt(PromptFor(t.e.Active, t.opts.Color))
	line, err := t.rl.Readline()
	if !t.opts.Terminal && err == nil {
		fmt.Fprintf(t.opts.Out, "%s%s\n", q, line)
	}
	return line, err
}

func (t *rlTerminal) Edit(text string) (string, error) {
	return EditText(text, t.e.getenv, t.e.SessionDir, t.opts.In, t.opts.Out, t.opts.Err)
}

// RunREPL runs the room until /exit, Ctrl-D or a second Ctrl-C on an empty
// prompt. Command errors are printed, never fatal. Ctrl-C while a command
// runs cancels that command (and its agent's process tree).
func RunREPL(ctx context.Context, e *Engine, o REPLOptions) error {
	in := o.In
	if in == nil {
		in = os.Stdin
	}
	var rc io.ReadCloser
	if f, ok := in.(*os.File); ok {
		// Cancelable, so that ending ctx (SIGTERM, SIGHUP) ends a pending
		// Readline; it reads only while readline asks, so an editor or an
		// agent can own the terminal between prompts.
		rc = readline.NewCancelableStdin(f)
	} else if r, ok := in.(io.ReadCloser); ok {
		rc = r
	} else {
		rc = io.NopCloser(in)
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
		Stdout:                 o.Out,
		Stderr:                 o.Err,
		FuncIsTerminal:         func() bool { return o.Terminal },
	}
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
	// Runs before rl.Close: readline closes only its own buffer, and its
	// reader goroutine may already be waiting in rc for the next key, which
	// would make rl.Close wait for a keystroke that never comes.
	defer rc.Close()
	history := conversation.History{Path: filepath.Join(e.SessionDir, "room_history"), Limit: 1000}
	if lines, err := history.Load(); err != nil {
		e.Say("history not loaded: %v", err)
	} else {
		for _, l := range lines {
			rl.SaveHistory(l)
		}
	}
	historyErr := false
	e.SetTerminal(&rlTerminal{rl: rl, e: e, opts: o})
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

	e.Say("Agent Room · %s · active agent %s · /help lists commands, Ctrl-D leaves", e.Root, e.Active)
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
			stopPanel = e.startPanel(ctx, o, rl.Stdout())
			redraw = false
		}
		line, err := rl.Readline()
		stopPanel()
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
		rl.SaveHistory(line)
		if err := history.Append(line); err != nil && !historyErr {
			historyErr = true // said once
			e.Say("history not saved: %v", err)
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
		if err != nil && !errors.Is(err, ErrDeclined) && !errors.Is(err, agents.ErrNotLoggedIn) {
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

// EditText opens text in $VISUAL or $EDITOR (split on spaces, run without
// a shell) and returns the edited text.
func EditText(text string, getenv func(string) string, dir string, in io.Reader, out, errw io.Writer) (string, error) {
	ed := getenv("VISUAL")
	if strings.TrimSpace(ed) == "" {
		ed = getenv("EDITOR")
	}
	argv := strings.Fields(ed)
	if len(argv) == 0 {
		return "", errors.New("set $VISUAL or $EDITOR to edit the prompt")
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
	b, err := os.ReadFile(path)
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

// Ask prints q and reads one line.
func (t *LineTerminal) Ask(q string) (string, error) {
	fmt.Fprint(t.Out, q)
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
