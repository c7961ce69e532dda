// Package repl is the Agent Room's terminal: the loop that reads a line,
// hands it to the engine (room.Engine.Process) and prints what went wrong,
// with everything around it that only a terminal has: raw line input with
// bracketed paste, the pinned context panel and the writer that keeps it
// whole, notifications when a wait ends, and tab completion of the room's
// commands. The engine knows none of it: it is given a room.Terminal for
// questions, a room.Notifier, and a writer for its output.
package repl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/chzyer/readline"
	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/resume"
	"github.com/relay-baton/relay-baton/room"
	"github.com/relay-baton/relay-baton/workspace"
)

// Options configures Run.
type Options struct {
	In       io.Reader // the terminal (os.Stdin in production)
	Out      io.Writer
	Err      io.Writer
	Terminal bool // In is a terminal
	Color    bool
	// OutTerminal: Out is a terminal too (a wide one gets the boxed context
	// panel; otherwise a one-line status precedes each prompt).
	OutTerminal bool
	// Resume rebuilds the state from conversation.jsonl before the first
	// prompt (chat --resume), with a recap of Recap turns (0:
	// resume.DefaultRecap).
	Resume bool
	Recap  int
}

// Run runs the room until /exit, Ctrl-D or a second Ctrl-C on an empty
// prompt. Command errors are printed, never fatal. Ctrl-C while a command
// runs cancels that command (and its agent's process tree).
func Run(ctx context.Context, e *room.Engine, o Options) error {
	s, err := start(ctx, e, o)
	defer s.close()
	if err != nil {
		return err
	}
	s.greet()
	for ctx.Err() == nil {
		line, typed, err := s.read()
		if errors.Is(err, readline.ErrInterrupt) {
			if s.interrupted(line) {
				return nil
			}
			continue
		}
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return s.ended(err)
		}
		s.interrupts = 0
		if strings.TrimSpace(line) == "" {
			continue
		}
		s.remember(line, typed)
		if s.dispatch(line) {
			e.Say("bye.")
			return nil
		}
	}
	return nil
}

// session is one Run: the line editor, what it reads from and writes to,
// and the loop's state between lines.
type session struct {
	ctx  context.Context
	e    *room.Engine
	o    Options
	in   *termInput
	out  *termWriter
	pin  *pinnedPanel // nil when the panel is not pinned
	rl   *readline.Instance
	term *rlTerminal
	// undo holds what close does, in reverse order.
	undo []func()

	history    workspace.History
	historyErr bool // a failure to save history was said

	mu         sync.Mutex
	cancelTurn context.CancelFunc // the running command's, for SIGINT

	reading    atomic.Bool   // a Readline is running
	interrupts int           // Ctrl-C presses in a row on an empty prompt
	redraw     bool          // show the context before the next prompt
	poke       chan struct{} // the pinned panel gathers its facts again (others.go)
}

// onClose has close run f (the last added first).
func (s *session) onClose(f func()) { s.undo = append(s.undo, f) }

// close undoes the start-up, in reverse order.
func (s *session) close() {
	for i := len(s.undo) - 1; i >= 0; i-- {
		s.undo[i]()
	}
}

// start sets the terminal up for the room: input, output, the pinned
// panel, the line editor with its history, notifications, replies that
// come after Ctrl-C, confirmations, and what ends a turn or the room.
func start(ctx context.Context, e *room.Engine, o Options) (*session, error) {
	s := &session{ctx: ctx, e: e, o: o, redraw: true, poke: make(chan struct{}, 1)}
	in := o.In
	if in == nil {
		in = os.Stdin
	}
	// termInput owns the terminal's input (input.go): pastes, long lines,
	// typed-ahead answers. It reads only when poll says there is input, so
	// ending ctx (SIGTERM, SIGHUP) ends a pending Readline and an editor
	// can own the terminal while it is paused.
	s.in = newTermInput(in, terminalFd(in, o.Terminal))
	// One writer for everything that reaches the terminal, so that the
	// pinned panel's draws never land inside a readline redraw.
	s.out = &termWriter{w: o.Out}
	var width func() int
	if o.Terminal && o.OutTerminal {
		width = func() int { return termWidth(o) }
	}
	s.onClose(e.SetOutput(s.out, width))
	if fd := s.in.fd; fd >= 0 && o.OutTerminal {
		s.pin = &pinnedPanel{w: s.out, color: o.Color, size: func() (int, int, bool) {
			w, h, err := readline.GetSize(fd)
			return w, h, err == nil && w > 0 && h > 0
		}}
		s.out.pin = s.pin
		s.onClose(s.pin.Close)
	}
	if err := s.openEditor(); err != nil {
		return s, err
	}
	s.loadHistory()
	s.term = &rlTerminal{rl: s.rl, in: s.in, pin: s.pin, e: e, opts: o, reading: &s.reading}
	s.in.setOnDrop(func() {
		// Written through readline, which redraws the question below it.
		e.HoldOutput(false, func() {
			s.rl.Write([]byte(e.Label(events.RoleRelayBaton) + " ignored a paste while asking: a confirmation is a key you type.\n"))
		})
	})
	s.attach()
	s.watch()
	s.followOthers()
	return s, nil
}

// openEditor starts the line editor (readline) on the room's input and
// writer. It is closed after the input: readline closes only its own
// buffer, and its reader goroutine may already be waiting in termInput for
// the next key, which would make rl.Close wait for a keystroke that never
// comes.
func (s *session) openEditor() error {
	o := s.o
	cfg := &readline.Config{
		Prompt: promptFor(s.e.Active, o.Color),
		// No HistoryFile: the line editor would follow a symlink at that
		// path and create it 0644; the room reads and appends it itself.
		HistoryLimit:      1000,
		HistorySearchFold: true,
		// Only room input goes into history, not answers to "run this?".
		DisableAutoSaveHistory: true,
		AutoComplete:           completer{s.e},
		InterruptPrompt:        "^C",
		EOFPrompt:              "exit",
		Stdin:                  s.in,
		Stdout:                 s.out,
		Stderr:                 o.Err,
		FuncIsTerminal:         func() bool { return o.Terminal },
	}
	var rlp atomic.Pointer[readline.Instance]
	if fd := s.in.fd; fd >= 0 {
		s.rawTerminal(cfg, fd, &rlp)
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
	s.rl = rl
	s.onClose(func() { rl.Close() })
	rlp.Store(rl)
	s.onClose(func() { s.in.Close() })
	return nil
}

// completer implements readline.AutoCompleter from the command table.
type completer struct{ e *room.Engine }

// Do returns the suffixes that complete the word before pos, and the
// length of what is already typed of it.
func (c completer) Do(line []rune, pos int) ([][]rune, int) {
	return room.Complete(c.e, string(line[:pos]))
}

// rawTerminal has readline put the terminal fd (not its default, fd 0)
// in raw mode and read its width. On SIGWINCH the pinned panel takes its
// rows again for the new size first, then readline redraws its line (it
// only notes the new width on its own, and the prompt would stay hidden
// until the next key).
func (s *session) rawTerminal(cfg *readline.Config, fd int, rlp *atomic.Pointer[readline.Instance]) {
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
	cfg.FuncOnWidthChanged = func(f func()) {
		readline.DefaultOnWidthChanged(func() {
			f()
			if s.pin != nil {
				s.pin.Resize(s.reading.Load())
			}
			if l := rlp.Load(); l != nil {
				l.Refresh() // only while a line is being read
			}
		})
	}
}

// terminalFd is the descriptor of in when it is a terminal, or -1.
func terminalFd(in io.Reader, terminal bool) int {
	if f, ok := in.(*os.File); ok && terminal {
		return int(f.Fd())
	}
	return -1
}

// loadHistory puts the room's input history into the line editor.
func (s *session) loadHistory() {
	s.history = workspace.History{Path: filepath.Join(s.e.SessionDir, "room_history"), Limit: 1000}
	lines, err := s.history.Load()
	if err != nil {
		s.e.Say("history not loaded: %v", err)
		return
	}
	for _, l := range lines {
		s.rl.SaveHistory(l)
	}
}

// attach gives the engine what the terminal offers: notifications, the
// replies that come after Ctrl-C printed above the prompt, and the
// confirmations.
func (s *session) attach() {
	e, o := s.e, s.o
	if o.Terminal && o.OutTerminal {
		n, err := newNotifier(s.out, e.Getenv)
		if err != nil {
			e.Say("%v", err)
		}
		if n != nil {
			e.SetNotifier(n)
			s.in.mu.Lock()
			s.in.onFocus = n.setFocus
			s.in.mu.Unlock()
			s.onClose(func() { e.SetNotifier(nil) })
		}
	}
	// Replies to messages the room stopped waiting for are printed above
	// the prompt (readline clears its line and draws it again after) and
	// logged; their followers end with the room, before the notifier is
	// reset.
	liveCtx, liveStop := context.WithCancel(s.ctx)
	wait := e.FollowReplies(liveCtx, func(b []byte) {
		e.HoldOutput(true, func() { s.rl.Write(b) })
	})
	s.onClose(func() {
		liveStop()
		wait()
	})
	if !o.Terminal {
		// Without a terminal nothing can be confirmed: no agent runs
		// unless the room was started with --yes (as the one-shots).
		e.SetTerminal(nil)
		return
	}
	e.SetTerminal(s.term)
	s.term.bracketed(true)
	s.onClose(func() { s.term.bracketed(false) })
}

// watch ends a pending read when ctx ends, and has SIGINT cancel the
// running command: it reaches the room only while one runs (readline reads
// ^C as a key in raw mode).
func (s *session) watch() {
	stop := make(chan struct{})
	s.onClose(func() { close(stop) })
	go func() {
		select {
		case <-s.ctx.Done():
			s.in.Close()
			s.rl.Close()
		case <-stop:
		}
	}()
	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, os.Interrupt)
	s.onClose(func() { signal.Stop(sigc); close(sigc) })
	go func() {
		for range sigc {
			s.mu.Lock()
			if s.cancelTurn != nil {
				s.cancelTurn()
			}
			s.mu.Unlock()
		}
	}()
}

// greet prints the banner and, with Options.Resume, resumes.
func (s *session) greet() {
	e := s.e
	banner, hint := "Agent Room · "+e.Root+" · active agent "+e.Active, "/help lists commands, Ctrl-D leaves"
	if utf8.RuneCountInString("[relay-baton] "+banner+" · "+hint) < termWidth(s.o) {
		e.Say("%s · %s", banner, hint)
	} else { // two lines rather than one the terminal breaks mid-word
		e.Say("%s", banner)
		e.Say("%s", hint)
	}
	// A missing CLI is said now, not after a whole preview.
	for _, l := range e.MissingAgents() {
		e.Say("%s", l)
	}
	if !s.o.Resume {
		if l := e.KeptRunsLine(); l != "" {
			e.Say("%s", l)
		}
		return
	}
	recap := s.o.Recap
	if recap <= 0 {
		recap = resume.DefaultRecap
	}
	if _, err := e.Resume(s.ctx, recap); err != nil && !errors.Is(err, room.ErrDeclined) {
		e.Say("error: %v", err)
	}
}

// read reads the next message, the context shown first after a command:
// a line and its continuation lines (a line ending in \ or Alt-Enter goes
// on), pastes expanded. typed is the line as typed when it was one line
// without a paste, else "".
func (s *session) read() (line, typed string, err error) {
	s.rl.SetPrompt(promptFor(s.e.Active, s.o.Color))
	stopPanel := func() {}
	if s.redraw {
		stopPanel = startPanel(s.ctx, s.e, s.o, s.rl.Stdout(), s.pin, s.rl.Terminal.IsReading, s.poke)
		s.redraw = false
	}
	line, err = s.term.readLine()
	stopPanel()
	typed = line
	line = s.in.Expand(line)
	for err == nil && strings.HasSuffix(line, "\\") {
		s.rl.SetPrompt(continuationPrompt(s.o.Color))
		var next string
		next, err = s.term.readLine()
		if err == nil {
			line = strings.TrimSuffix(line, "\\") + "\n" + s.in.Expand(next)
			typed = ""
		}
	}
	return line, typed, err
}

// interrupted handles Ctrl-C at the prompt and reports whether the room
// ends: on text it only clears the line; the second in a row on an empty
// prompt leaves.
func (s *session) interrupted(line string) (leave bool) {
	if strings.TrimSpace(line) != "" {
		s.interrupts = 0
		return false
	}
	s.interrupts++
	if s.interrupts >= 2 {
		s.e.Say("bye.")
		return true
	}
	s.e.Say("press Ctrl-C again (or Ctrl-D, or /exit) to leave the room")
	return false
}

// ended is Run's result when reading failed: nil for Ctrl-D.
func (s *session) ended(err error) error {
	if errors.Is(err, io.EOF) {
		s.e.Say("bye.")
		return nil
	}
	return err
}

// remember keeps a line for recall (one typed line, no paste or
// continuation), and echoes it when the input is no terminal.
func (s *session) remember(line, typed string) {
	s.redraw = true
	if typed == line {
		s.rl.SaveHistory(line)
		if err := s.history.Append(line); err != nil && !s.historyErr {
			s.historyErr = true // said once
			s.e.Say("history not saved: %v", err)
		}
	}
	if !s.o.Terminal {
		s.e.SayAs(events.RoleUser, "%s", line)
	}
}

// dispatch runs one line through the engine, cancellable by Ctrl-C, says
// what went wrong, and reports whether the room ends (/exit).
func (s *session) dispatch(line string) (exit bool) {
	turn, cancel := context.WithCancel(s.ctx)
	s.setCancel(cancel)
	s.e.AdoptOthers() // what another screen's turns changed (others.go)
	exit, err := s.e.Process(turn, line)
	s.setCancel(nil)
	cancelled := turn.Err() != nil && s.ctx.Err() == nil
	cancel()
	s.printErr(err, cancelled)
	return exit
}

// setCancel sets what SIGINT cancels (nil: nothing runs).
func (s *session) setCancel(c context.CancelFunc) {
	s.mu.Lock()
	s.cancelTurn = c
	s.mu.Unlock()
}

// printErr says a command's error, unless it needs no line: a declined
// confirmation; ErrNotLoggedIn and MissingEnvError, whose run's summary
// line already said how to log in or which variable to pass; a cancelled run whose own line said "cancelled" (one Ctrl-C,
// one line).
func (s *session) printErr(err error, cancelled bool) {
	if err == nil || errors.Is(err, room.ErrDeclined) || errors.Is(err, agents.ErrNotLoggedIn) || errors.As(err, new(*agents.MissingEnvError)) || (cancelled && room.Told(err)) {
		return
	}
	if cancelled {
		s.e.Say("cancelled (Ctrl-C): %v", err)
	} else {
		s.e.Say("error: %v", err)
	}
}

// promptFor is the prompt for an agent: "<agent>› ", coloured.
func promptFor(agent string, useColor bool) string {
	return render.Paint(useColor, agent+"›", render.RoleColors[events.Role(agent)]) + " "
}

// continuationPrompt is the prompt of a message's next line.
func continuationPrompt(useColor bool) string {
	return render.NewTerminal(nil, useColor).Dim("   …") + " "
}
