package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/hermes-go/hermes/internal/termsafe"
)

// Confirm asks a yes/no question on the terminal; only "y"/"yes" count, EOF is no.
// An interrupt (ctx ends while it waits: the first Ctrl-C) is no as well, and comes
// back as ctx's error: the command stops there, changes nothing more and exits 130.
func (s *IOStreams) Confirm(ctx context.Context, prompt string) (bool, error) {
	if !s.CanPrompt() {
		return false, nil
	}
	fmt.Fprint(s.Out, termsafe.Line(prompt)) // it often names a plugin or a pack
	line, err := s.ReadLine(ctx)
	if ctx.Err() != nil {
		fmt.Fprintln(s.Out) // the terminal's cursor is still after the prompt
		return false, ctx.Err()
	}
	if err != nil && line == "" {
		fmt.Fprintln(s.Out)
		return false, nil
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}

// lineReaderContext is a stdin that hands out whole lines and can stop waiting
// (the chat's line pump).
type lineReaderContext interface {
	ReadLineContext(ctx context.Context) (string, error)
}

// ReadLine reads one line of s.In (with its newline, when it has one), or gives up
// when ctx ends. A read it gives up on stays pending, and its line is what the next
// ReadLine returns: an abandoned prompt never swallows an answer meant for a later
// one. One prompt reads at a time.
func (s *IOStreams) ReadLine(ctx context.Context) (string, error) {
	if lr, ok := s.In.(lineReaderContext); ok {
		l, err := lr.ReadLineContext(ctx)
		if err != nil {
			return l, err
		}
		return l + "\n", nil
	}
	linesMu.Lock()
	if s.lines == nil {
		s.lines = &lineSource{in: s.In}
	}
	src := s.lines
	ch := src.pending
	if ch == nil {
		// The blocking read runs on its own goroutine, so that the prompt can
		// notice an interrupt: a read of a terminal does not return for a signal.
		ch = make(chan lineRead, 1)
		src.pending = ch
		go func() {
			l, err := readLine(src.in)
			ch <- lineRead{l, err}
		}()
	}
	linesMu.Unlock()
	select {
	case r := <-ch:
		linesMu.Lock()
		src.pending = nil
		linesMu.Unlock()
		return r.line, r.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// ReadSecret is ReadLine with the terminal's echo off while it waits.
func (s *IOStreams) ReadSecret(ctx context.Context) (string, error) {
	if off := EchoOff(s.In); off != nil {
		defer off()()
	}
	return s.ReadLine(ctx)
}

// lineSource is the read of s.In in flight, if any (see ReadLine).
type lineSource struct {
	in      io.Reader
	pending chan lineRead
}

type lineRead struct {
	line string
	err  error
}

// linesMu guards every IOStreams' lines and their pending reads.
var linesMu sync.Mutex

// readLine reads one line a byte at a time, so no later prompt's answer is
// swallowed into a buffer (stdin may be a pipe feeding several answers).
func readLine(in io.Reader) (string, error) {
	var b []byte
	var c [1]byte
	for {
		n, err := in.Read(c[:])
		if n == 1 {
			b = append(b, c[0])
			if c[0] == '\n' {
				return string(b), nil
			}
		}
		if err != nil {
			return string(b), err
		}
	}
}

// EchoOff returns what turns in's echo off and gives back the function that
// turns it on again, or nil when in is not a terminal.
func EchoOff(in io.Reader) func() (restore func()) {
	f, ok := in.(*os.File)
	if !ok {
		return nil
	}
	fd := int(f.Fd())
	if _, err := unix.IoctlGetTermios(fd, ioctlGetTermios); err != nil {
		return nil
	}
	return func() func() {
		old, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
		if err != nil {
			return func() {}
		}
		quiet := *old
		quiet.Lflag &^= unix.ECHO
		if unix.IoctlSetTermios(fd, ioctlSetTermios, &quiet) != nil {
			return func() {}
		}
		return func() { _ = unix.IoctlSetTermios(fd, ioctlSetTermios, old) }
	}
}
