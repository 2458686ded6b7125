//go:build !linux

package runtime

import "syscall"

// procAttr puts the plugin in its own process group; without Pdeathsig the bridge's
// EOF watchdog ends it when the host goes away.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
