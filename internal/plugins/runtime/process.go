// Package runtime starts and supervises out-of-process plugins: one OS process per
// plugin, speaking pkg/protocol on two dedicated pipes, with its stdout and stderr
// drained into tagged log lines. It is the one place that touches plugin processes.
package runtime

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hermes-go/hermes/pkg/protocol"
)

// LineSink receives one line of a plugin's stdout or stderr ("stdout" / "stderr").
type LineSink func(pluginID, stream, line string)

// maxOutputLine caps one line of plugin output; longer lines are cut with a marker.
const maxOutputLine = 64 << 10

// Options configure how processes are started and stopped.
type Options struct {
	Sink            LineSink
	MaxMessageBytes int
	// HandshakeTimeout bounds process start + initialize (default 20s).
	HandshakeTimeout time.Duration
	// StopGrace is how long a plugin gets to exit after shutdown/EOF before SIGTERM,
	// and again before SIGKILL (default 2s).
	StopGrace time.Duration
}

func (o Options) handshakeTimeout() time.Duration {
	if o.HandshakeTimeout > 0 {
		return o.HandshakeTimeout
	}
	return 20 * time.Second
}

func (o Options) stopGrace() time.Duration {
	if o.StopGrace > 0 {
		return o.StopGrace
	}
	return 2 * time.Second
}

// Command is a fully resolved process to start.
type Command struct {
	PluginID string
	Argv     []string
	Dir      string
	Env      []string
}

// Process is one running plugin process and its protocol connection.
type Process struct {
	id       string
	cmd      *exec.Cmd
	conn     *protocol.Conn
	toPlugin *os.File
	opts     Options

	drains sync.WaitGroup
	exited chan struct{}
	waitMu sync.Mutex
	state  *os.ProcessState

	tailMu sync.Mutex
	tail   []string

	passMu      sync.Mutex
	passthrough io.Writer // while a plugin CLI command runs, stdout goes here untagged
	passErr     io.Writer
}

// start launches cmd with the protocol pipes and serves host on the connection.
func start(c Command, host protocol.Handler, opts Options) (*Process, error) {
	if len(c.Argv) == 0 {
		return nil, errors.New("empty plugin command")
	}
	hostToPluginR, hostToPluginW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("create protocol pipe: %w", err)
	}
	pluginToHostR, pluginToHostW, err := os.Pipe()
	if err != nil {
		closeAll(hostToPluginR, hostToPluginW)
		return nil, fmt.Errorf("create protocol pipe: %w", err)
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		closeAll(hostToPluginR, hostToPluginW, pluginToHostR, pluginToHostW)
		return nil, fmt.Errorf("create output pipe: %w", err)
	}
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		closeAll(hostToPluginR, hostToPluginW, pluginToHostR, pluginToHostW, stdoutR, stdoutW)
		return nil, fmt.Errorf("create output pipe: %w", err)
	}
	childEnds := []*os.File{hostToPluginR, pluginToHostW, stdoutW, stderrW}

	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.Dir = c.Dir
	cmd.Env = append(append([]string{}, c.Env...),
		protocol.EnvMagicCookie+"="+protocol.MagicCookieValue,
		protocol.EnvFDIn+"=3",
		protocol.EnvFDOut+"=4",
	)
	cmd.Stdin = nil // /dev/null: plugins never read the user's terminal
	cmd.Stdout = stdoutW
	cmd.Stderr = stderrW
	cmd.ExtraFiles = []*os.File{hostToPluginR, pluginToHostW}
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		closeAll(childEnds...)
		closeAll(hostToPluginW, pluginToHostR, stdoutR, stderrR)
		return nil, fmt.Errorf("start %s: %w", c.Argv[0], err)
	}
	closeAll(childEnds...)

	p := &Process{id: c.PluginID, cmd: cmd, toPlugin: hostToPluginW, opts: opts, exited: make(chan struct{})}
	p.conn = protocol.NewConn(pluginToHostR, hostToPluginW, host, protocol.ConnOptions{MaxMessageBytes: opts.MaxMessageBytes})
	p.drains.Add(2)
	go p.drain(stdoutR, "stdout")
	go p.drain(stderrR, "stderr")
	go func() {
		err := p.conn.Run()
		pluginToHostR.Close()
		if err != nil && !errors.Is(err, io.EOF) {
			// A protocol violation (garbage, oversized message) fails this plugin only.
			p.report("stderr", fmt.Sprintf("protocol error: %v; stopping the plugin", err))
			p.Kill()
		}
	}()
	go func() {
		_ = cmd.Wait()
		p.waitMu.Lock()
		p.state = cmd.ProcessState
		p.waitMu.Unlock()
		// Grandchildren may hold the pipes open; the plugin itself is gone, so stop talking.
		p.conn.Close()
		hostToPluginW.Close()
		close(p.exited)
	}()
	return p, nil
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
}

// ID is the plugin id this process serves.
func (p *Process) ID() string { return p.id }

// Pid is the OS process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited is closed when the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Conn is the protocol connection.
func (p *Process) Conn() *protocol.Conn { return p.conn }

// ExitDescription says how the process ended ("" while it runs).
func (p *Process) ExitDescription() string {
	p.waitMu.Lock()
	defer p.waitMu.Unlock()
	if p.state == nil {
		return ""
	}
	if ws, ok := p.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "killed by signal " + ws.Signal().String()
	}
	return fmt.Sprintf("exit status %d", p.state.ExitCode())
}

// StderrTail returns the last lines the plugin wrote to stderr, for error messages.
func (p *Process) StderrTail() string {
	p.tailMu.Lock()
	defer p.tailMu.Unlock()
	return strings.Join(p.tail, "\n")
}

// Call makes a request to the plugin. When the process dies the error says how.
func (p *Process) Call(ctx context.Context, method string, params, result any) error {
	err := p.conn.Call(ctx, method, params, result)
	if err != nil && errors.Is(err, protocol.ErrClosed) {
		return p.deathError(err)
	}
	return err
}

func (p *Process) deathError(cause error) error {
	select {
	case <-p.exited:
	case <-time.After(200 * time.Millisecond):
	}
	desc := p.ExitDescription()
	if desc == "" {
		return fmt.Errorf("plugin %s stopped answering: %w", p.id, cause)
	}
	msg := fmt.Sprintf("plugin %s exited (%s)", p.id, desc)
	if tail := lastLines(p.StderrTail(), 5); tail != "" {
		msg += "; last output:\n" + tail
	}
	return &ExitError{Message: msg, Cause: cause}
}

// ExitError reports a call that failed because the plugin process ended.
type ExitError struct {
	Message string
	Cause   error
}

func (e *ExitError) Error() string { return e.Message }
func (e *ExitError) Unwrap() error { return e.Cause }

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// SetPassthrough sends the plugin's stdout/stderr to w/errW untagged (nil restores
// tagged logging). Plugin CLI commands use it so their output is the command's output.
func (p *Process) SetPassthrough(w, errW io.Writer) {
	p.passMu.Lock()
	p.passthrough, p.passErr = w, errW
	p.passMu.Unlock()
}

// WaitOutput waits until both output streams reached EOF (the process and anything it
// spawned closed them) or ctx ends.
func (p *Process) WaitOutput(ctx context.Context) {
	done := make(chan struct{})
	go func() { p.drains.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

func (p *Process) drain(r *os.File, stream string) {
	defer p.drains.Done()
	defer r.Close()
	br := bufio.NewReaderSize(r, 32<<10)
	for {
		line, err := readCapped(br, maxOutputLine)
		if len(line) > 0 || err == nil {
			p.emit(stream, line)
		}
		if err != nil {
			return
		}
	}
}

// readCapped reads one line without its newline; a longer line is cut and the rest
// of it discarded, so a plugin flooding one giant line cannot exhaust memory.
func readCapped(br *bufio.Reader, max int) (string, error) {
	var buf []byte
	cut := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !cut {
			room := max - len(buf)
			if len(chunk) > room {
				buf = append(buf, chunk[:room]...)
				cut = true
			} else {
				buf = append(buf, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		s := strings.TrimRight(string(buf), "\r\n")
		if cut {
			s += " …[line cut]"
		}
		return s, err
	}
}

func (p *Process) emit(stream, line string) {
	p.passMu.Lock()
	w := p.passthrough
	if stream == "stderr" {
		w = p.passErr
	}
	p.passMu.Unlock()
	if stream == "stderr" {
		p.tailMu.Lock()
		p.tail = append(p.tail, line)
		if len(p.tail) > 20 {
			p.tail = p.tail[len(p.tail)-20:]
		}
		p.tailMu.Unlock()
	}
	if w != nil {
		fmt.Fprintln(w, line)
		return
	}
	p.report(stream, line)
}

func (p *Process) report(stream, line string) {
	if p.opts.Sink != nil {
		p.opts.Sink(p.id, stream, line)
	}
}

// Stop shuts the plugin down: a shutdown request (the plugin runs its on_unload
// callbacks), then EOF on its protocol pipe, then SIGTERM, then SIGKILL to the whole
// process group. It returns when the process has exited.
func (p *Process) Stop(ctx context.Context) {
	grace := p.opts.stopGrace()
	select {
	case <-p.exited:
		p.killGroup()
		return
	default:
	}
	sctx, cancel := context.WithTimeout(ctx, grace)
	_ = p.conn.Call(sctx, protocol.MethodShutdown, struct{}{}, nil)
	cancel()
	p.toPlugin.Close()
	if p.waitExit(ctx, grace) {
		p.killGroup()
		return
	}
	p.signalGroup(syscall.SIGTERM)
	if p.waitExit(ctx, grace) {
		p.killGroup()
		return
	}
	p.Kill()
	<-p.exited
}

// Kill ends the process group at once.
func (p *Process) Kill() {
	p.killGroup()
	_ = p.cmd.Process.Kill()
}

func (p *Process) waitExit(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}

func (p *Process) killGroup() { p.signalGroup(syscall.SIGKILL) }

func (p *Process) signalGroup(sig syscall.Signal) {
	// The plugin leads its own process group, so this reaches anything it spawned.
	_ = syscall.Kill(-p.cmd.Process.Pid, sig)
}
