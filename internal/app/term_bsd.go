//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package app

import "golang.org/x/sys/unix"

// termios ioctls for reading a secret without echo.
const (
	ioctlGetTermios = unix.TIOCGETA
	ioctlSetTermios = unix.TIOCSETA
)
