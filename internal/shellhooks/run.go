package shellhooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"syscall"
	"time"

	"github.com/hermes-go/hermes/internal/clock"
	"github.com/hermes-go/hermes/internal/reaper"
)

const (
	// MaxStdout is how much of a hook's stdout is read; the rest is drained and
	// dropped, so a runaway hook cannot take hermes' memory (a directive is a
	// few hundred bytes).
	MaxStdout = 1 << 20
	// maxStderr is how much of stderr is kept for the block message and logs.
	maxStderr = 64 << 10
	// pipeGrace bounds the wait for the pipes once the hook exited: something it
	// started outside its cell's reach may still hold them.
	pipeGrace = time.Second
)

// Runner starts hook commands.
type Runner struct {
	// Reaper contains each hook's process tree (nil: process groups only).
	Reaper *reaper.Reaper
	// Environ is the hook's environment; Home ($HOME) expands a leading ~.
	Environ []string
	Home    string
	// Dir is the hook's working directory ("" is hermes').
	Dir string
	// Now is the clock for elapsed times; default clock.Now.
	Now func() time.Time
}

// Result is what one run of a hook did.
type Result struct {
	ExitCode        int // -1 when it did not exit by itself
	Stdout          []byte
	Stderr          []byte
	StdoutTruncated bool // stdout was longer than MaxStdout and was cut there
	TimedOut        bool
	Cancelled       bool // the caller stopped waiting (ctx ended)
	Elapsed         time.Duration
	// Err says why the hook could not run at all (command not found, not
	// executable); ExitCode is -1 then.
	Err error
}

// Run runs spec's command with stdin as its standard input, bounded by
// spec.Timeout and ctx. On either end the hook's whole cell is killed (its
// process group, everything it started), so nothing it started outlives the run.
func (r *Runner) Run(ctx context.Context, spec Spec, stdin []byte) Result {
	now := r.Now
	if now == nil {
		now = clock.Now
	}
	res := Result{ExitCode: -1}
	argv, err := SplitCommand(spec.Command)
	if err != nil {
		res.Err = err
		return res
	}
	for i := range argv {
		argv[i] = expandHome(argv[i], r.Home)
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, spec.Timeout)
	defer cancel()
	cmd := exec.Command(argv[0], argv[1:]...)
	if cmd.Err != nil {
		res.Err = lookupError(argv[0], cmd.Err)
		return res
	}
	cmd.Env = r.Environ
	cmd.Dir = r.Dir
	cmd.Stdin = bytes.NewReader(stdin)
	stdout := &capped{max: MaxStdout}
	stderr := &capped{max: maxStderr}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = pipeGrace
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := now()
	cell, err := r.Reaper.Start(cmd)
	if err != nil {
		res.Err = startError(argv[0], err)
		return res
	}
	exited := make(chan error, 1)
	go func() { exited <- cell.Wait(nil) }() // kills what the hook left in its cell, then reaps it
	select {
	case err = <-exited:
	case <-ctx.Done():
		// A hook past its time made no decision; it gets no grace either, as the
		// caller is waiting on it.
		cell.Kill()
		err = <-exited
		res.TimedOut = parent.Err() == nil
		res.Cancelled = !res.TimedOut
	}
	res.Elapsed = now().Sub(start)
	res.Stdout, res.Stderr, res.StdoutTruncated = stdout.buf.Bytes(), stderr.buf.Bytes(), stdout.dropped
	if res.TimedOut || res.Cancelled {
		return res
	}
	res.ExitCode = cmd.ProcessState.ExitCode()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.ExitCode = 128 + int(ws.Signal())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) && !errors.Is(err, exec.ErrWaitDelay) {
		res.Err = err
	}
	return res
}

func lookupError(name string, err error) error {
	switch {
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("command not found: %s (give a path that exists, or a program on PATH)", name)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("command not executable: %s (chmod +x it, or run it through its interpreter: python3 %s)", name, name)
	}
	return fmt.Errorf("cannot run %s: %w", name, err)
}

func startError(name string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrPermission), errors.Is(err, exec.ErrNotFound):
		return lookupError(name, err)
	case errors.Is(err, syscall.ENOEXEC):
		return fmt.Errorf("cannot run %s: it is not a program (a script needs a #! line, or name its interpreter: bash %s)", name, name)
	}
	return fmt.Errorf("cannot run %s: %w", name, err)
}

// capped keeps the first max bytes written to it and counts the rest as dropped.
type capped struct {
	buf     bytes.Buffer
	max     int
	dropped bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room < len(p) {
		c.buf.Write(p[:max(room, 0)])
		c.dropped = true
		return len(p), nil // keep draining: a blocked writer would only hang until its timeout
	}
	c.buf.Write(p)
	return len(p), nil
}
