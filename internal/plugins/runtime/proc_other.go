//go:build !linux

package runtime

import "syscall"

// procAttr puts the plugin in a session (and so a process group) of its own, with
// no controlling terminal (see proc_linux.go); without Pdeathsig the bridge's EOF
// watchdog ends it when the host goes away.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}
