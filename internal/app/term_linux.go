package app

import "golang.org/x/sys/unix"

// termios ioctls for reading a secret without echo.
const (
	ioctlGetTermios = unix.TCGETS
	ioctlSetTermios = unix.TCSETS
)
