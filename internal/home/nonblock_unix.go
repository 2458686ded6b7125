//go:build unix

package home

import "syscall"

// openNonblock keeps open(2) of a named pipe from waiting for a writer.
const openNonblock = syscall.O_NONBLOCK
