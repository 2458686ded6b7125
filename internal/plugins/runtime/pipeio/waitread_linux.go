package pipeio

import (
	"io"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// eagerWaitMillis bounds how long a caller waits for its response blocked on its
// own thread before falling back to the runtime's poller. A kick (read deadline)
// is seen when the wait ends, so it also bounds how late a kick can be noticed.
const eagerWaitMillis = 1

// waitReader is the host end of a plugin→host pipe. While a caller holds the read
// token (eager), a read that would block first waits for the pipe with poll(2) on
// the caller's own thread: the response of a plugin call is usually tens of µs
// away, and parking the goroutine on the runtime's poller costs a failed read, an
// epoll wait and two scheduler passes per round trip. Otherwise (the background
// pump, a long call) it reads like *os.File, honouring read deadlines.
type waitReader struct {
	f     *os.File
	rc    syscall.RawConn
	eager atomic.Bool
}

func newWaitReader(f *os.File) *waitReader {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	return &waitReader{f: f, rc: rc}
}

// eagerWaiters counts the threads waiting in poll(2) right now. The wait is a raw
// system call, invisible to the scheduler, so it holds its P for up to
// eagerWaitMillis: with GOMAXPROCS > 1 at most GOMAXPROCS-1 callers do it at once,
// so the other goroutines (the other calls of a hook fan-out, timers) always have a
// P; with GOMAXPROCS = 1 (one CPU, where the plugin needs that CPU to answer
// anyway) one caller may. A signal ends the wait early (EINTR).
var eagerWaiters atomic.Int32

// callsWaiting counts the calls, over every connection, whose caller is reading
// for its response.
var callsWaiting atomic.Int32

func (r *waitReader) Read(p []byte) (int, error) {
	// Only the one call waiting in this process waits on its thread; several (a
	// hook fan-out) are served best by the poller, which needs no P per wait.
	if len(p) == 0 || !r.eager.Load() || callsWaiting.Load() > 1 {
		return r.f.Read(p)
	}
	if eagerWaiters.Add(1) > int32(max(1, runtime.GOMAXPROCS(0)-1)) {
		eagerWaiters.Add(-1)
		return r.f.Read(p)
	}
	defer eagerWaiters.Add(-1)
	var n int
	var rerr error
	waited := false
	err := r.rc.Read(func(fd uintptr) bool {
		for {
			if !waited {
				// Raw: an ordinary system call would let sysmon hand the P to
				// another thread after 20 µs, and getting it back costs more than
				// the whole wait.
				waited = true
				pfd := unix.PollFd{Fd: int32(fd), Events: unix.POLLIN}
				_, _, _ = unix.RawSyscall(unix.SYS_POLL, uintptr(unsafe.Pointer(&pfd)), 1, eagerWaitMillis)
			}
			n, rerr = unix.Read(int(fd), p)
			if rerr == unix.EINTR {
				continue
			}
			return rerr != unix.EAGAIN // EAGAIN: let the poller wait (deadline-aware)
		}
	})
	if err != nil {
		return 0, &os.PathError{Op: "read", Path: r.f.Name(), Err: err}
	}
	if rerr != nil {
		return 0, &os.PathError{Op: "read", Path: r.f.Name(), Err: rerr}
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

func (r *waitReader) setEager(on bool) { r.eager.Store(on) }
