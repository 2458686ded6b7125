package hostapi

import (
	"bufio"
	"context"
	"errors"
	"io"
	"sync"

	"github.com/hermes-go/hermes/pkg/protocol"
)

// ctx.cli_stdin: a plugin CLI command's input() and getpass() read hermes'
// standard input through the host (the plugin's own stdin is /dev/null).

type cliStdinKey struct{}

type cliStdin struct {
	in      io.Reader
	echoOff func() (restore func())
}

// WithCLIStdin gives the plugin CLI command run with ctx the reader its
// input() reads from (hermes' standard input), and echoOff, which turns that
// terminal's echo off while getpass() reads a secret (nil: not a terminal).
func WithCLIStdin(ctx context.Context, in io.Reader, echoOff func() (restore func())) context.Context {
	return context.WithValue(ctx, cliStdinKey{}, cliStdin{in: in, echoOff: echoOff})
}

// cliInput is hermes' standard input as a plugin CLI command reads it, a line
// per ctx.cli_stdin call. Each call is served on a goroutine of its own, and
// nothing Go can see orders one call after the previous (the order runs
// through the plugin process), so the reader has a lock of its own.
type cliInput struct {
	mu      sync.Mutex
	r       *bufio.Reader
	echoOff func() (restore func()) // nil: not a terminal
}

// readLine returns the next line, with its line break; "" at the end of input.
// A secret line is read with the terminal's echo off.
func (in *cliInput) readLine(secret bool) (string, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if secret && in.echoOff != nil {
		defer in.echoOff()()
	}
	line, err := in.r.ReadString('\n')
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return line, err
}

// cliInputSlot holds the input while one of the plugin's CLI commands runs.
type cliInputSlot struct {
	mu sync.Mutex
	in *cliInput
}

func (s *cliInputSlot) set(in *cliInput) {
	s.mu.Lock()
	s.in = in
	s.mu.Unlock()
}

func (s *cliInputSlot) get() *cliInput {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.in
}

func cliStdinRead(_ context.Context, s *Session, sp protocol.CLIStdinParams) (any, error) {
	in := s.cliIn.get()
	if in == nil {
		return nil, protocol.Errorf(protocol.CodeNotAvailable,
			"standard input is only available to a plugin CLI command while it runs (hermes <command>)")
	}
	line, err := in.readLine(sp.Secret)
	if err != nil {
		return nil, protocol.Errorf(protocol.CodeNotAvailable, "read standard input: %v", err)
	}
	return line, nil
}
