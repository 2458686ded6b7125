//go:build linux

package runtime

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// procAttr puts the plugin in a session of its own, which leads its own process
// group (so the whole tree can be signalled, and a terminal Ctrl-C reaches the host
// only) and has no controlling terminal: a plugin opening /dev/tty (getpass, ssh)
// gets an error instead of being stopped for reading the terminal from the
// background, which hung hermes. The kernel kills it if the host dies without
// cleaning up.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}

// exitedUnreaped blocks until the child pid has exited, without reaping it: while it
// is a zombie its pid, and so its process group id, cannot be reused, and the group
// can be signalled safely.
func exitedUnreaped(pid int) bool {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err == nil
	}
}
