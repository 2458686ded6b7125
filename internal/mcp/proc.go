package mcp

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hermes-go/hermes/internal/reaper"
)

// envAllowlist is what a stdio server inherits of hermes' environment
// (wave2 §3.1); everything else it gets comes from the server's env:.
var envAllowlist = []string{"PATH", "HOME", "USER", "LANG", "LC_ALL", "TERM", "SHELL", "TMPDIR"}

func childEnv(environ []string, extra map[string]string) []string {
	var out []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if _, over := extra[k]; over {
			continue
		}
		for _, a := range envAllowlist {
			if k == a {
				out = append(out, kv)
			}
		}
		if strings.HasPrefix(k, "XDG_") {
			out = append(out, kv)
		}
	}
	for k, v := range extra {
		out = append(out, k+"="+v)
	}
	return out
}

// stdioTransport starts a stdio server in a reaper cell of its own (own
// process group, killed with hermes), its stderr drained line by line to log.
type stdioTransport struct {
	srv     *ServerConfig
	reaper  *reaper.Reaper
	environ []string
	log     func(line string)
}

func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	path, err := lookPath(t.srv.Command, t.environ)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, t.srv.Args...)
	cmd.Dir = t.srv.Cwd
	cmd.Env = childEnv(t.environ, t.srv.Env)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	cell, err := t.reaper.NewCell()
	if err != nil {
		return nil, fmt.Errorf("contain MCP server %q: %w", t.srv.Name, err)
	}
	cmd.Env = append(cmd.Env, cell.Env()...)
	if err := cell.Start(cmd); err != nil {
		cell.Close()
		return nil, fmt.Errorf("start MCP server %q (%s): %w", t.srv.Name, t.srv.Command, err)
	}
	p := &proc{cell: cell, stdin: stdin, stdout: stdout, exited: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			t.log(sc.Text())
		}
		_, _ = io.Copy(io.Discard, stderr)
		_ = cell.Wait(nil)
		close(p.exited)
	}()
	return (&mcp.IOTransport{Reader: p, Writer: p}).Connect(ctx)
}

// lookPath resolves command on the PATH hermes passes the server, so "command
// not found" is said before anything starts.
func lookPath(command string, environ []string) (string, error) {
	if strings.Contains(command, "/") {
		return command, nil
	}
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			for _, dir := range strings.Split(v, ":") {
				if dir == "" {
					continue
				}
				if p := dir + "/" + command; isExec(p) {
					return p, nil
				}
			}
		}
	}
	return "", fmt.Errorf("command %q not found on PATH; install it or give its full path in command:", command)
}

func isExec(p string) bool {
	var st syscall.Stat_t
	return syscall.Stat(p, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG && st.Mode&0o111 != 0
}

// eofGrace is how long a server may take to exit on its own once its stdin closes.
const eofGrace = 100 * time.Millisecond

// proc is the running server's stdio as one ReadWriteCloser. Close closes
// its stdin, gives it a moment to exit, then kills its whole cell.
type proc struct {
	cell      *reaper.Cell
	stdin     io.WriteCloser
	stdout    io.ReadCloser
	once      sync.Once
	exited    chan struct{}
	closeWait time.Duration
}

func (p *proc) Read(b []byte) (int, error)  { return p.stdout.Read(b) }
func (p *proc) Write(b []byte) (int, error) { return p.stdin.Write(b) }

func (p *proc) Close() error {
	p.once.Do(func() {
		_ = p.stdin.Close()
		wait := p.closeWait
		if wait == 0 {
			wait = 2 * time.Second
		}
		// Many servers (server-everything among them) do not exit at EOF:
		// hermes' own exit would wait on each, so they get SIGTERM soon.
		select {
		case <-p.exited:
		case <-time.After(min(wait, eofGrace)):
			p.cell.SignalGroup(syscall.SIGTERM)
			select {
			case <-p.exited:
			case <-time.After(wait):
			}
		}
		p.cell.Kill()
		<-p.exited
	})
	return nil // how the server exited is not the closer's problem
}
