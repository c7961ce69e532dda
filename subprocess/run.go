// Package subprocess runs a child process to completion in a process tree
// of its own (on Linux under a guard process that is a child subreaper and
// ends every descendant, setsid and double forks included; a process group
// watched by a guard on other Unix systems; a Job Object on Windows), so
// that cancelling the run, or relay-baton's own end, ends the child and
// everything it started.
package subprocess

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/relay-baton/relay-baton/events"
)

// Cmd is one child to run to completion.
type Cmd struct {
	Path string   // the executable (a bare name is looked up on PATH)
	Args []string // the argument vector: Args[0] names the program
	Dir  string   // the working directory ("": relay-baton's)
	Env  []string // the environment (nil: relay-baton's)
	// Stdout and Stderr receive the child's output (nil: discarded). The
	// child's standard input is the null device.
	Stdout, Stderr io.Writer
	// Grace is how long the tree gets between the request to end (SIGTERM
	// to the group, CTRL_BREAK on Windows) and the kill once ctx is done,
	// and how long output is awaited once the child exited while a process
	// it left behind still holds the pipes. Zero kills at once on
	// cancellation and awaits the output without bound.
	Grace time.Duration
	// OnStart, when set, is called with the child's process id (the
	// process group's id on Unix) once it runs.
	OnStart func(pid int)
}

// Command is the Cmd that runs path with args.
func Command(path string, args ...string) Cmd {
	return Cmd{Path: path, Args: append([]string{path}, args...)}
}

// Run starts c and waits for it. When ctx is done the tree is asked to
// end, and killed after Grace. Once the child exited, what it left behind
// in its tree goes with it: asked to end, or killed when ctx is done or
// when it held the output past Grace (that output is cut off, not an
// error). The error is exec.Cmd.Wait's: an *exec.ExitError for a child
// that failed, ctx's error for one cancelled that still exited 0.
func Run(ctx context.Context, c Cmd) (*os.ProcessState, error) {
	cmd := exec.CommandContext(ctx, c.Path)
	if len(c.Args) > 0 {
		cmd.Args = c.Args
	}
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = c.Dir, c.Env, c.Stdout, c.Stderr
	cmd.WaitDelay = waitDelay(c.Grace)
	t := &tree{cmd: cmd, grace: c.Grace}
	cmd.Cancel = func() error {
		if c.Grace > 0 {
			t.terminate()
		} else {
			t.kill()
		}
		return nil
	}
	if err := t.start(); err != nil {
		return nil, err
	}
	defer t.close()
	if c.OnStart != nil {
		c.OnStart(t.pid())
	}
	err := cmd.Wait()
	held := errors.Is(err, exec.ErrWaitDelay)
	if held {
		err = nil
	}
	if ctx.Err() != nil || held {
		t.kill()
	} else {
		t.terminate()
	}
	return cmd.ProcessState, err
}

// Output runs c and returns its standard output.
func Output(ctx context.Context, c Cmd) ([]byte, error) {
	var out bytes.Buffer
	c.Stdout = &out
	_, err := Run(ctx, c)
	return out.Bytes(), err
}

// CombinedOutput runs c and returns its standard output and standard
// error, interleaved as written.
func CombinedOutput(ctx context.Context, c Cmd) ([]byte, error) {
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	_, err := Run(ctx, c)
	return out.Bytes(), err
}

// LineWriter passes what is written to it to a function line by line
// (without the newline; a final "\r" dropped). A line over the limit is
// not delivered: the function gets (nil, its length) instead. The function
// runs on a goroutine of the writer's own, one line at a time.
type LineWriter struct {
	w    *io.PipeWriter
	done chan struct{}
	once sync.Once
}

// Lines returns a LineWriter calling fn for each line of at most max bytes.
func Lines(max int, fn func(line []byte, tooLong int)) *LineWriter {
	r, w := io.Pipe()
	lw := &LineWriter{w: w, done: make(chan struct{})}
	go func() {
		defer close(lw.done)
		readLines(r, max, fn)
		r.Close() // a writer still writing gets an error, not a hang
	}()
	return lw
}

func (lw *LineWriter) Write(p []byte) (int, error) { return lw.w.Write(p) }

// Close ends the input (a last line without a newline is delivered) and
// waits until fn returned for every line.
func (lw *LineWriter) Close() error {
	lw.once.Do(func() { lw.w.Close() })
	<-lw.done
	return nil
}

// readLines calls fn for each line of r (without the newline). A line over
// max is not delivered: fn gets (nil, its length) instead. It returns at
// EOF or on a read error.
func readLines(r io.Reader, max int, fn func(line []byte, tooLong int)) {
	lr := events.NewLineReader(r, 256<<10, max)
	for {
		line, n, _, tooLong, err := lr.Next()
		switch {
		case tooLong:
			fn(nil, n)
		case n > 0:
			fn(bytes.TrimSuffix(line, []byte("\r")), 0)
		}
		if err != nil {
			return
		}
	}
}
