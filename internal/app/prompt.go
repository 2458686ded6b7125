package app

import (
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/hermes-go/hermes/internal/termsafe"
)

// confirm asks a yes/no question on the terminal; only "y"/"yes" count, EOF is no.
func (s *IOStreams) Confirm(prompt string) bool {
	if !s.CanPrompt() {
		return false
	}
	fmt.Fprint(s.Out, termsafe.Line(prompt)) // it often names a plugin or a pack
	line, err := ReadLine(s.In)
	if err != nil && line == "" {
		fmt.Fprintln(s.Out)
		return false
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true
	}
	return false
}

// ReadLine reads one line a byte at a time, so no later prompt's answer is
// swallowed into a buffer (stdin may be a pipe feeding several answers).
func ReadLine(in io.Reader) (string, error) {
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

// ReadSecret reads one line with terminal echo off when in is a terminal.
func ReadSecret(in io.Reader) (string, error) {
	if off := EchoOff(in); off != nil {
		defer off()()
	}
	return ReadLine(in)
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
