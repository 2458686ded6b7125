package service

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hermes-go/hermes/internal/clock"
)

// PIDFile is $HERMES_HOME/gateway.pid: the running gateway holds an
// exclusive flock on it for its whole life, so "is one running" never
// trusts a stale pid (the lock dies with the process, even on kill -9).
type PIDFile struct {
	path string
	f    *os.File
}

// ErrRunning says another gateway holds the file.
type ErrRunning struct{ PID int }

func (e *ErrRunning) Error() string {
	return fmt.Sprintf("a gateway is already running for this HERMES_HOME (pid %d): stop it, or start with hermes gateway run --replace", e.PID)
}

// Running reports the pid of the gateway holding path, 0 when none does.
func Running(path string) (int, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return 0, nil
	}
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	return pid, nil
}

// Acquire takes path for this process. When another gateway holds it:
// without replace, *ErrRunning; with replace, that gateway gets SIGTERM
// (it drains) and Acquire waits for it up to wait, then SIGKILLs it.
func Acquire(ctx context.Context, path string, replace bool, wait time.Duration) (*PIDFile, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("gateway pid file: %w", err)
	}
	lock := func() bool { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil }
	if !lock() {
		b := make([]byte, 32)
		n, _ := f.ReadAt(b, 0)
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b[:n])))
		if !replace || pid <= 0 || pid == os.Getpid() {
			f.Close()
			return nil, &ErrRunning{PID: pid}
		}
		_ = syscall.Kill(pid, syscall.SIGTERM)
		deadline := clock.Now().Add(wait)
		killed := false
		for !lock() {
			if !killed && clock.Now().After(deadline) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				killed = true
			}
			select {
			case <-ctx.Done():
				f.Close()
				return nil, ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0); err != nil {
		f.Close()
		return nil, err
	}
	return &PIDFile{path: path, f: f}, nil
}

// Release lets the file go (the lock also goes when the process dies).
func (p *PIDFile) Release() {
	_ = p.f.Truncate(0)
	_ = p.f.Close()
}
