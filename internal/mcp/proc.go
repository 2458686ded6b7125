package mcp

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hermes-go/hermes/internal/reaper"
	"github.com/hermes-go/hermes/internal/termsafe"
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
	last    *proc // the process of the latest Connect, for its exit and last words
}

// exitNote says how the server of a failed connect ended, with the last
// lines it wrote to stderr ("" while it runs): "exited at once" alone tells a
// user nothing, "Cannot find module …" does.
func (t *stdioTransport) exitNote() string {
	p := t.last
	if p == nil {
		return ""
	}
	select {
	case <-p.exited:
	case <-time.After(200 * time.Millisecond):
		return ""
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	note := "the server exited"
	if p.waitErr != nil {
		note += " (" + p.waitErr.Error() + ")"
	}
	if len(p.tail) > 0 {
		words := p.tail
		if p.firstErr != "" && !slices.Contains(words, p.firstErr) {
			words = append([]string{p.firstErr, "…"}, words...)
		}
		note += "; it said: " + Redact(strings.Join(words, " | "))
	} else {
		note += " without a word on stderr"
	}
	return note
}

func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	path, err := lookPath(t.srv.Command, t.srv.Cwd, t.environ)
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
	t.last = p
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			t.log(sc.Text())
			p.remember(sc.Text())
		}
		_, _ = io.Copy(io.Discard, stderr)
		err := cell.Wait(nil)
		p.mu.Lock()
		p.waitErr = err
		p.mu.Unlock()
		close(p.exited)
	}()
	return (&mcp.IOTransport{Reader: p, Writer: p}).Connect(ctx)
}

// lookPath resolves command on the PATH hermes passes the server, so "command
// not found" is said before anything starts.
func lookPath(command, cwd string, environ []string) (string, error) {
	if strings.Contains(command, "/") {
		p := command
		if !filepath.IsAbs(p) && cwd != "" {
			p = filepath.Join(cwd, p) // exec resolves it against the server's cwd
		}
		if !isExec(p) {
			return "", fmt.Errorf("command %q does not exist or is not an executable file; fix command: in config.yaml", command)
		}
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

	mu       sync.Mutex
	firstErr string   // the first stderr line that names an error (Node puts it above its stack)
	tail     []string // the last stderr lines, terminal-safe
	waitErr  error
}

// tailLines and tailWidth bound what a failed connect quotes of stderr.
const (
	tailLines = 3
	tailWidth = 300
)

func (p *proc) remember(line string) {
	line = strings.TrimSpace(termsafe.Line(line))
	if line == "" {
		return
	}
	if len(line) > tailWidth {
		line = line[:tailWidth] + "…"
	}
	p.mu.Lock()
	if p.firstErr == "" && strings.Contains(strings.ToLower(line), "error") {
		p.firstErr = line
	}
	p.tail = append(p.tail, line)
	if len(p.tail) > tailLines {
		p.tail = p.tail[len(p.tail)-tailLines:]
	}
	p.mu.Unlock()
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
