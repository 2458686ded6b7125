//go:build linux

package runtime

import "syscall"

// procAttr puts the plugin in a session of its own, which leads its own process
// group (so the whole tree can be signalled, and a terminal Ctrl-C reaches the host
// only) and has no controlling terminal: a plugin opening /dev/tty (getpass, ssh)
// gets an error instead of being stopped for reading the terminal from the
// background, which hung hermes. The kernel kills it if the host dies without
// cleaning up.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}
