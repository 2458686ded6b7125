//go:build linux

package runtime

import "syscall"

// procAttr puts the plugin in its own process group (so the whole tree can be
// signalled, and a terminal Ctrl-C reaches the host only) and has the kernel kill it
// if the host dies without cleaning up.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
