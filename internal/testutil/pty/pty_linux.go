// Package pty gives tests a real pseudo-terminal, for what hermes does when its
// standard input is a terminal.
package pty

import (
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// Open returns the master and the terminal (slave) end of a new pseudo-terminal,
// neither of them the test's controlling terminal; the test is skipped where
// there are none. Both are closed when the test ends.
func Open(t testing.TB) (master, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("pty number: %v", err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open pty: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// Echoes reports whether the terminal tty echoes what is typed.
func Echoes(t testing.TB, tty *os.File) bool {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	return tio.Lflag&unix.ECHO != 0
}
