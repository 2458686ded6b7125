//go:build linux

package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hermes-go/hermes/internal/reaper"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// ForkServer starts Python plugin processes by forking one pre-started bridge
// interpreter instead of exec'ing a fresh one per plugin. Interpreter start-up (tens
// of milliseconds of CPU, more with a heavy site set-up) is paid once per hermes
// process instead of once per plugin; each plugin is still its own process, in its
// own process group, supervised exactly like an exec'd one.
type ForkServer struct {
	cmd    *exec.Cmd
	conn   *net.UnixConn
	pid    int
	cell   *reaper.Cell   // the server's own
	reaper *reaper.Reaper // gives each child a cell of its own

	mu      sync.Mutex
	nextID  int
	spawns  map[int]chan spawnReply
	exits   map[int]chan string // pid → how it ended
	early   map[int]string      // exits reported before the spawn reply was read
	dead    bool
	deadErr error
	gone    chan struct{} // closed when the server process has exited
}

type serverMsg struct {
	Ready   bool   `json:"ready"`
	Spawned *int   `json:"spawned"`
	Pid     int    `json:"pid"`
	Error   string `json:"error"`
	Exited  int    `json:"exited"`
	Code    *int   `json:"code"`
	Signal  *int   `json:"signal"`
}

type spawnReply struct {
	pid int
	err error
}

// StartForkServer starts the fork server: the bridge script run by interp with env
// (the environment every plugin shares) in dir, in a cell of r, as each of its
// children is. Its own output goes to sink.
func StartForkServer(ctx context.Context, r *reaper.Reaper, interp, script string, env []string, dir string, sink LineSink) (*ForkServer, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("fork server control socket: %w", err)
	}
	hostEnd := os.NewFile(uintptr(fds[0]), "forkserver-host")
	childEnd := os.NewFile(uintptr(fds[1]), "forkserver-child")
	defer childEnd.Close()
	fc, err := net.FileConn(hostEnd)
	hostEnd.Close()
	if err != nil {
		return nil, fmt.Errorf("fork server control socket: %w", err)
	}
	conn := fc.(*net.UnixConn)

	pp, err := newPipes() // only stdout/stderr are used
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	closeAll(pp.toPluginR, pp.toPluginW, pp.fromPluginR, pp.fromPluginW)
	cmd := exec.Command(interp, script)
	cmd.Dir = dir
	cmd.Env = append(append([]string{}, env...), "HERMES_BRIDGE_FORKSERVER=3")
	cmd.Stdout = pp.stdoutW
	cmd.Stderr = pp.stderrW
	cmd.ExtraFiles = []*os.File{childEnd}
	cmd.SysProcAttr = procAttr()
	cell, err := r.Start(cmd)
	if err != nil {
		_ = conn.Close()
		closeAll(pp.stdoutR, pp.stdoutW, pp.stderrR, pp.stderrW)
		return nil, fmt.Errorf("start python fork server %s: %w", interp, err)
	}
	closeAll(pp.stdoutW, pp.stderrW)
	fs := &ForkServer{cmd: cmd, conn: conn, pid: cmd.Process.Pid, cell: cell, reaper: r,
		spawns: map[int]chan spawnReply{}, exits: map[int]chan string{}, early: map[int]string{}, gone: make(chan struct{})}
	out := &Process{id: "python-forkserver", opts: Options{Sink: sink}}
	out.drains.Add(2)
	go out.drain(pp.stdoutR, "stdout")
	go out.drain(pp.stderrR, "stderr")
	go func() {
		_ = cell.Wait(nil) // kills what is left in its cell (and group) first
		close(fs.gone)
	}()

	ready := make(chan error, 1)
	go fs.read(ready)
	select {
	case err := <-ready:
		if err != nil {
			fs.Close()
			return nil, err
		}
	case <-ctx.Done():
		fs.Close()
		return nil, ctx.Err()
	case <-time.After(20 * time.Second):
		fs.Close()
		return nil, errors.New("the python fork server did not start within 20s")
	}
	return fs, nil
}

// read dispatches the server's messages until its socket closes.
func (fs *ForkServer) read(ready chan<- error) {
	buf := make([]byte, 64<<10)
	first := true
	for {
		n, _, _, _, err := fs.conn.ReadMsgUnix(buf, nil)
		if err != nil || n == 0 {
			if first {
				ready <- fmt.Errorf("the python fork server exited before it was ready: %v", describeErr(err))
			}
			fs.die(errors.New("the python fork server exited"))
			return
		}
		var m serverMsg
		if json.Unmarshal(buf[:n], &m) != nil {
			continue
		}
		switch {
		case m.Ready:
			if first {
				first = false
				ready <- nil
			}
		case m.Spawned != nil:
			fs.mu.Lock()
			ch := fs.spawns[*m.Spawned]
			delete(fs.spawns, *m.Spawned)
			if m.Error == "" {
				fs.exits[m.Pid] = make(chan string, 1)
				if desc, ok := fs.early[m.Pid]; ok {
					fs.exits[m.Pid] <- desc
					delete(fs.early, m.Pid)
				}
			}
			fs.mu.Unlock()
			if ch != nil {
				if m.Error != "" {
					ch <- spawnReply{err: errors.New(m.Error)}
				} else {
					ch <- spawnReply{pid: m.Pid}
				}
			}
		case m.Exited != 0:
			desc := "exited"
			switch {
			case m.Signal != nil:
				desc = "killed by signal " + syscall.Signal(*m.Signal).String()
			case m.Code != nil:
				desc = fmt.Sprintf("exit status %d", *m.Code)
			}
			fs.mu.Lock()
			if ch, ok := fs.exits[m.Exited]; ok {
				ch <- desc
				delete(fs.exits, m.Exited)
			} else {
				fs.early[m.Exited] = desc
			}
			fs.mu.Unlock()
		}
	}
}

func describeErr(err error) string {
	if err == nil {
		return "end of stream"
	}
	return err.Error()
}

// die fails what is pending: the children were killed with the server (they die
// with their parent).
func (fs *ForkServer) die(err error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.dead {
		return
	}
	fs.dead, fs.deadErr = true, err
	for id, ch := range fs.spawns {
		ch <- spawnReply{err: err}
		delete(fs.spawns, id)
	}
	for pid, ch := range fs.exits {
		ch <- "killed: the python fork server exited"
		delete(fs.exits, pid)
	}
}

// Alive reports whether the server can still spawn.
func (fs *ForkServer) Alive() bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return !fs.dead
}

// joinCgroupVar names the cgroup a forked child moves itself into before it runs
// anything else, so whatever the plugin starts is in it too.
const joinCgroupVar = "HERMES_BRIDGE_CGROUP"

// spawn forks one plugin process with the given pipe ends as its fds 3, 4, 1, 2.
// The child joins cell before it runs anything else.
func (fs *ForkServer) spawn(ctx context.Context, cell *reaper.Cell, env []string, dir string, ends []*os.File) (launched, error) {
	env = append(env[:len(env):len(env)], cell.Env()...)
	if dir := cell.CgroupDir(); dir != "" {
		env = append(env, joinCgroupVar+"="+dir)
	}
	envMap := make(map[string]string, len(env))
	for _, kv := range env {
		if k, v, ok := cutEnv(kv); ok {
			envMap[k] = v
		}
	}
	fs.mu.Lock()
	if fs.dead {
		err := fs.deadErr
		fs.mu.Unlock()
		return launched{}, err
	}
	fs.nextID++
	id := fs.nextID
	ch := make(chan spawnReply, 1)
	fs.spawns[id] = ch
	fs.mu.Unlock()

	req, _ := json.Marshal(map[string]any{"id": id, "env": envMap, "cwd": dir})
	fds := make([]int, len(ends))
	for i, f := range ends {
		fds[i] = int(f.Fd())
	}
	if _, _, err := fs.conn.WriteMsgUnix(req, unix.UnixRights(fds...), nil); err != nil {
		fs.mu.Lock()
		delete(fs.spawns, id)
		fs.mu.Unlock()
		return launched{}, fmt.Errorf("python fork server: %w", err)
	}
	var r spawnReply
	select {
	case r = <-ch:
	case <-ctx.Done():
		return launched{}, ctx.Err()
	}
	if r.err != nil {
		return launched{}, fmt.Errorf("python fork server: %w", r.err)
	}
	fs.mu.Lock()
	exitCh := fs.exits[r.pid]
	fs.mu.Unlock()
	pid := r.pid
	var once sync.Once
	var exited bool
	var exitMu sync.Mutex
	return launched{
		pid: pid,
		kill: func() {
			exitMu.Lock()
			if !exited {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			exitMu.Unlock()
			cell.Kill()
		},
		wait: func(beforeReap func()) string {
			desc := "exited"
			once.Do(func() {
				if exitCh != nil {
					desc = <-exitCh
				}
				exitMu.Lock()
				exited = true
				exitMu.Unlock()
				beforeReap()
				// The server killed the child's group; the cell takes the rest.
				cell.Close()
			})
			return desc
		},
	}, nil
}

func cutEnv(kv string) (string, string, bool) {
	for i := 0; i < len(kv); i++ {
		if kv[i] == '=' {
			return kv[:i], kv[i+1:], i > 0
		}
	}
	return "", "", false
}

// Close stops the server: it kills what is left of its children and exits.
func (fs *ForkServer) Close() {
	_ = fs.conn.Close()
	select {
	case <-fs.gone:
	case <-time.After(2 * time.Second):
		fs.cell.Kill()
		<-fs.gone
	}
}

// startForked forks a plugin process from the server and supervises it.
func startForked(ctx context.Context, fs *ForkServer, c Command, host protocol.Handler, opts Options) (*Process, error) {
	cell, err := fs.reaper.NewCell()
	if err != nil {
		return nil, fmt.Errorf("python fork server: %w", err)
	}
	pp, err := newPipes()
	if err != nil {
		cell.Close()
		return nil, err
	}
	l, err := fs.spawn(ctx, cell, pluginEnv(c.Env), c.Dir, pp.childEnds())
	closeAll(pp.childEnds()...)
	if err != nil {
		cell.Close()
		closeAll(pp.toPluginW, pp.fromPluginR, pp.stdoutR, pp.stderrR)
		return nil, err
	}
	return supervise(c.PluginID, pp, l, host, opts), nil
}
