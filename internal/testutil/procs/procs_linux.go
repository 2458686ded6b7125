// Package procs helps tests prove that no process is left behind: a unique marker
// put in a plugin's environment finds every descendant in /proc.
package procs

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// NewMarker returns a unique string to put in the environment of a test's processes.
func NewMarker() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "hermes-test-" + hex.EncodeToString(b)
}

// Alive reports whether pid is a running (not zombie) process.
func Alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}

// WaitGone waits up to guard until pid has exited (a zombie counts as exited).
func WaitGone(t testing.TB, pid int, what string, guard time.Duration) {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return
	}
	if err != nil {
		t.Fatalf("pidfd_open %d: %v", pid, err)
	}
	defer unix.Close(fd)
	deadline := time.Now().Add(guard)
	for {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(time.Until(deadline).Milliseconds()))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			t.Fatalf("poll pidfd: %v", err)
		}
		if n > 0 {
			return
		}
		t.Fatalf("%s (pid %d) is still running", what, pid)
	}
}

// Marked lists live processes whose environment or argv holds marker.
func Marked(marker string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		for _, f := range []string{"environ", "cmdline"} {
			b, err := os.ReadFile("/proc/" + e.Name() + "/" + f)
			if err == nil && bytes.Contains(b, []byte(marker)) && Alive(pid) {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// NoneMarked fails unless every process carrying marker is gone within guard. A
// SIGKILLed process stays visible in /proc for a moment while the kernel tears it
// down, hence the wait.
func NoneMarked(t testing.TB, marker string, guard time.Duration) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for {
		pids := Marked(marker)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes left behind: %v", pids)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
