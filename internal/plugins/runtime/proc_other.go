//go:build !linux

package runtime

import "syscall"

// procAttr puts the plugin in its own process group; without Pdeathsig the bridge's
// EOF watchdog ends it when the host goes away.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// exitedUnreaped is not available here: the group is signalled after the reap.
func exitedUnreaped(pid int) bool { return false }
