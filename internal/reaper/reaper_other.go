//go:build !linux

package reaper

import (
	"errors"
	"os/exec"
	"syscall"
)

// Without cgroups or a subreaper, a cell is its leader's process group.
func (r *Reaper) init() { r.setup.why = "no cgroups or child subreaper on this system" }

func (r *Reaper) mkCgroup() (string, error) { return "", errors.New("no cgroups on this system") }

func (r *Reaper) enableSubreaper() {}

func (c *Cell) prepare(*exec.Cmd, *syscall.SysProcAttr) (func(), error) { return func() {}, nil }

func (c *Cell) startFailed(err error) error { return err }

// exitedUnreaped is not available here: the group is signalled after the reap.
func exitedUnreaped(int) bool { return false }

func killCgroup(string) {}

func (r *Reaper) closeCgroups() {}

type watchdog struct{}

func (r *Reaper) stopOrphanWatch() {}

func removeCgroup(string) {}

func (r *Reaper) sweepOrphans(map[string]bool) {}
