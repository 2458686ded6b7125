// Package runtime starts and supervises out-of-process plugins: one OS process per
// plugin, speaking pkg/protocol on two dedicated pipes, with its stdout and stderr
// drained into tagged log lines. It is the one place that touches plugin processes.
package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hermes-go/hermes/internal/plugins/runtime/pipeio"
	"github.com/hermes-go/hermes/internal/reaper"
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
	// Reaper contains each plugin process and everything it starts, even what
	// leaves its process group (nil: the process group only).
	Reaper *reaper.Reaper
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
	proc     launched
	conn     *pipeio.Conn
	toPlugin *os.File
	out      *pipeWriter // writes to toPlugin, watched for stalls
	opts     Options

	drains   sync.WaitGroup
	drained  chan struct{} // closed when both output streams reached EOF (or were cut off)
	exited   chan struct{}
	connDone chan struct{} // closed when the connection has stopped reading
	waitMu   sync.Mutex
	exitDesc string // how the process ended ("" while it runs)
	failure  string // why the host stopped the plugin ("" if it was not the host's doing)

	sigMu  sync.Mutex
	reaped bool // the group leader has been reaped: its pid may be reused, never signal it

	closeOnce sync.Once

	tailMu sync.Mutex
	tail   []string

	passMu      sync.Mutex
	passthrough io.Writer // while a plugin CLI command runs, stdout goes here untagged
	passErr     io.Writer
}

// launched is a started plugin process: a child the host exec'd, or a child of the
// Python fork server.
type launched struct {
	pid int
	// wait blocks until the process has exited, kills what it left in its cell
	// (calling beforeReap once the group may no longer be signalled), and says
	// how it ended ("exit status 1", "killed by signal killed").
	wait func(beforeReap func()) string
	// kill sends SIGKILL to the process and everything in its cell; safe after
	// it has exited.
	kill func()
}

// pipes are the four pipes of one plugin process.
type pipes struct {
	toPluginR, toPluginW     *os.File // protocol, host → plugin (fd 3 in the plugin)
	fromPluginR, fromPluginW *os.File // protocol, plugin → host (fd 4)
	stdoutR, stdoutW         *os.File
	stderrR, stderrW         *os.File
}

func newPipes() (*pipes, error) {
	var pp pipes
	var err error
	made := []*os.File{}
	for _, pair := range []struct{ r, w **os.File }{
		{&pp.toPluginR, &pp.toPluginW}, {&pp.fromPluginR, &pp.fromPluginW},
		{&pp.stdoutR, &pp.stdoutW}, {&pp.stderrR, &pp.stderrW},
	} {
		if *pair.r, *pair.w, err = os.Pipe(); err != nil {
			closeAll(made...)
			return nil, fmt.Errorf("create plugin pipes: %w", err)
		}
		made = append(made, *pair.r, *pair.w)
	}
	return &pp, nil
}

// childEnds are what the plugin process gets; the host closes its copies once the
// process has them.
func (pp *pipes) childEnds() []*os.File {
	return []*os.File{pp.toPluginR, pp.fromPluginW, pp.stdoutW, pp.stderrW}
}

func (pp *pipes) closeAll() {
	closeAll(pp.toPluginR, pp.toPluginW, pp.fromPluginR, pp.fromPluginW, pp.stdoutR, pp.stdoutW, pp.stderrR, pp.stderrW)
}

// start execs c with the protocol pipes and serves host on the connection.
func start(c Command, host protocol.Handler, opts Options) (*Process, error) {
	if len(c.Argv) == 0 {
		return nil, errors.New("empty plugin command")
	}
	pp, err := newPipes()
	if err != nil {
		return nil, err
	}
	cell, err := opts.Reaper.NewCell()
	if err != nil {
		pp.closeAll()
		return nil, fmt.Errorf("start %s: %w", c.Argv[0], err)
	}
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.Dir = c.Dir
	cmd.Env = pluginEnv(c.Env)
	cmd.Stdin = nil // /dev/null: plugins never read the user's terminal
	cmd.Stdout = pp.stdoutW
	cmd.Stderr = pp.stderrW
	cmd.ExtraFiles = []*os.File{pp.toPluginR, pp.fromPluginW}
	cmd.SysProcAttr = procAttr()
	if err := cell.Start(cmd); err != nil {
		cell.Close()
		pp.closeAll()
		return nil, fmt.Errorf("start %s: %w", c.Argv[0], err)
	}
	closeAll(pp.childEnds()...)
	l := launched{
		pid:  cmd.Process.Pid,
		kill: cell.Kill, // the whole cell; by pidfd and cgroup: safe even after the exit
		wait: func(beforeReap func()) string {
			// The cell kills what the plugin left running before the reap.
			_ = cell.Wait(beforeReap)
			return describeExit(cmd.ProcessState)
		},
	}
	return supervise(c.PluginID, pp, l, host, opts), nil
}

// pluginEnv adds what every plugin process is told about its protocol pipes.
func pluginEnv(base []string) []string {
	return append(append([]string{}, base...),
		protocol.EnvMagicCookie+"="+protocol.MagicCookieValue,
		protocol.EnvFDIn+"=3",
		protocol.EnvFDOut+"=4",
	)
}

func describeExit(st *os.ProcessState) string {
	if st == nil {
		return "exited"
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "killed by signal " + ws.Signal().String()
	}
	return fmt.Sprintf("exit status %d", st.ExitCode())
}

// supervise wires a launched process to its connection and output drains.
func supervise(id string, pp *pipes, l launched, host protocol.Handler, opts Options) *Process {
	p := &Process{id: id, proc: l, toPlugin: pp.toPluginW, opts: opts,
		out: &pipeWriter{f: pp.toPluginW}, drained: make(chan struct{}), exited: make(chan struct{}), connDone: make(chan struct{})}
	p.conn = pipeio.NewConn(pp.fromPluginR, p.out, host, protocol.ConnOptions{MaxMessageBytes: opts.MaxMessageBytes})
	p.drains.Add(2)
	go p.drain(pp.stdoutR, "stdout")
	go p.drain(pp.stderrR, "stderr")
	go func() { p.drains.Wait(); close(p.drained) }()
	go p.serve()
	go p.wait(pp.stdoutR, pp.stderrR, pp.fromPluginR)
	return p
}

// serve runs the connection. A protocol violation (garbage, an oversized message)
// fails this plugin only: it is stopped at once. A plugin that closes its end of the
// connection but keeps running is of no use either and is stopped after a grace.
func (p *Process) serve() {
	_ = p.conn.Run()
	close(p.connDone)
	err := p.conn.Err() // the first reason the connection stopped
	if err != nil && !errors.Is(err, io.EOF) {
		p.fail(fmt.Sprintf("sent an invalid message (protocol error: %v)", err))
		p.report("stderr", fmt.Sprintf("hermes: protocol error: %v; stopping the plugin", err))
		p.Kill()
		return
	}
	t := time.NewTimer(p.opts.stopGrace())
	defer t.Stop()
	select {
	case <-p.exited:
	case <-t.C:
		p.fail("closed its protocol connection but kept running")
		p.Kill()
	}
}

// wait reaps the plugin. Whatever it left running in its process group is an orphan
// and is killed with it, before the leader is reaped so the group id cannot have been
// reused. Then the pipes are given a moment to deliver what the plugin wrote last,
// and closed even if an escaped descendant still holds them.
func (p *Process) wait(outputs ...*os.File) {
	desc := p.proc.wait(func() {
		p.sigMu.Lock()
		p.reaped = true
		p.sigMu.Unlock()
	})
	p.waitMu.Lock()
	p.exitDesc = desc
	p.waitMu.Unlock()
	close(p.exited)

	// One grace for both: a timer's channel fires once, so a second wait on it
	// would block for good once the first had used it up (an escaped descendant
	// holding the protocol pipe and stdout then hung every pending call).
	grace, cancel := context.WithTimeout(context.Background(), p.opts.stopGrace())
	defer cancel()
	for _, ch := range []<-chan struct{}{p.connDone, p.drained} {
		select {
		case <-ch:
		case <-grace.Done():
		}
	}
	p.conn.Close() // fails every pending call, waking the one reading the pipe
	p.closeToPlugin()
	for _, f := range outputs {
		f.Close() // unblocks a reader stuck on a pipe an escaped descendant holds open
	}
}

func (p *Process) closeToPlugin() {
	p.closeOnce.Do(func() { p.toPlugin.Close() })
}

// fail records why the host stopped the plugin (the first reason wins).
func (p *Process) fail(reason string) {
	p.waitMu.Lock()
	if p.failure == "" {
		p.failure = reason
	}
	p.waitMu.Unlock()
}

// pipeWriter is the host's end of the host→plugin pipe. It writes in chunks and
// counts them, so a write that makes no progress (the plugin stopped reading) can be
// told from a slow one.
type pipeWriter struct {
	f        *os.File
	inFlight atomic.Bool
	progress atomic.Uint64
	aborted  atomic.Bool
}

const writeChunk = 64 << 10

func (w *pipeWriter) Write(b []byte) (int, error) {
	w.inFlight.Store(true)
	defer w.inFlight.Store(false)
	n := 0
	for n < len(b) {
		end := min(n+writeChunk, len(b))
		m, err := w.f.Write(b[n:end])
		n += m
		w.progress.Add(1)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// look reports whether a write is in flight and a counter that moves whenever a
// write makes progress.
func (w *pipeWriter) look() (inFlight bool, mark uint64) {
	return w.inFlight.Load(), w.progress.Load()
}

// abort makes the write in flight (and any later one) fail at once.
func (w *pipeWriter) abort() {
	w.aborted.Store(true)
	_ = w.f.SetWriteDeadline(time.Unix(1, 0))
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
func (p *Process) Pid() int { return p.proc.pid }

// Exited is closed when the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Conn is the protocol connection.
func (p *Process) Conn() *pipeio.Conn { return p.conn }

// ExitDescription says how the process ended ("" while it runs).
func (p *Process) ExitDescription() string {
	p.waitMu.Lock()
	defer p.waitMu.Unlock()
	return p.exitDesc
}

// EndReason says why the process ended, for the log line of a plugin that went
// away without being asked to: "exited (exit status 7)", or, when hermes had to
// stop it, the reason ("sent an invalid message (...); its process was
// stopped"). "" while it runs.
func (p *Process) EndReason() string {
	p.waitMu.Lock()
	defer p.waitMu.Unlock()
	switch {
	case p.exitDesc == "":
		return ""
	case p.failure != "":
		return p.failure + "; its process was stopped"
	default:
		return "exited (" + p.exitDesc + ")"
	}
}

// StderrTail returns the last lines the plugin wrote to stderr, for error messages.
func (p *Process) StderrTail() string {
	p.tailMu.Lock()
	defer p.tailMu.Unlock()
	return strings.Join(p.tail, "\n")
}

// Call makes a request to the plugin. When the process dies the error says how. The
// call ends with ctx even when the plugin has stopped reading its input: a request
// that cannot be delivered is not allowed to block the caller (or Stop).
func (p *Process) Call(ctx context.Context, method string, params, result any) error {
	var err error
	if ctx.Done() == nil {
		err = p.conn.Call(ctx, method, params, result) // can never time out: nothing to watch
	} else {
		var returned atomic.Bool
		stop := context.AfterFunc(ctx, func() { p.watchStall(&returned) })
		err = p.conn.Call(ctx, method, params, result)
		returned.Store(true)
		stop()
	}
	if err == nil {
		return nil
	}
	if p.out.aborted.Load() && ctx.Err() != nil {
		// The request could not be written before ctx ended (see watchStall).
		return fmt.Errorf("plugin %s %s: %w", p.id, p.failureText("did not answer"), ctx.Err())
	}
	if errors.Is(err, protocol.ErrClosed) || errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) {
		// The connection stopped, or the request met a closed pipe: the plugin is gone.
		return p.deathError(ctx, err)
	}
	return err
}

// stallCheck is how often a call whose ctx has ended looks at a write in flight.
const stallCheck = 250 * time.Millisecond

// watchStall runs once a call's ctx has ended and the call has not returned. The
// call can only be stuck writing its request (or the cancel notification) to a
// plugin that does not read; if a write stays without progress for a whole
// stallCheck, the plugin has stopped reading its input: it is failed and killed, and
// the write aborted, so the caller gets its ctx error.
func (p *Process) watchStall(returned *atomic.Bool) {
	t := time.NewTicker(stallCheck)
	defer t.Stop()
	var last uint64
	seen := false
	for !returned.Load() {
		inFlight, mark := p.out.look()
		if inFlight && seen && mark == last {
			p.fail("stopped reading requests from hermes")
			p.report("stderr", "hermes: the plugin stopped reading its protocol input; stopping the plugin")
			p.out.abort()
			p.Kill()
			return
		}
		last, seen = mark, inFlight
		select {
		case <-t.C:
		case <-p.exited:
			return
		}
	}
}

func (p *Process) failureText(otherwise string) string {
	p.waitMu.Lock()
	defer p.waitMu.Unlock()
	if p.failure != "" {
		return p.failure + "; its process was stopped"
	}
	return otherwise
}

// deathError describes a call that failed because the connection stopped: the
// plugin exited (how, and its last stderr lines), or the host stopped it (why).
func (p *Process) deathError(ctx context.Context, cause error) error {
	// The connection stops when the plugin exits or the host stops it; either way
	// the process is on its way out (serve kills one that lingers), and the drain
	// reads its last words (EOF comes at once unless a descendant that escaped the
	// process group holds stderr; wait cuts that off after a grace).
	wctx, cancel := context.WithTimeout(ctx, 2*p.opts.stopGrace()+time.Second)
	defer cancel()
	for _, ch := range []<-chan struct{}{p.exited, p.drained} {
		select {
		case <-ch:
		case <-wctx.Done():
		}
	}
	p.waitMu.Lock()
	failure := p.failure
	p.waitMu.Unlock()
	desc := p.ExitDescription()
	var msg string
	switch {
	case failure != "":
		msg = fmt.Sprintf("plugin %s %s; its process was stopped", p.id, failure)
		if strings.Contains(failure, "protocol") {
			msg += " (this is a bug in the plugin: report it to its author)"
		}
	case desc == "":
		return fmt.Errorf("plugin %s stopped answering: %w", p.id, cause)
	default:
		msg = fmt.Sprintf("plugin %s exited (%s)", p.id, desc)
	}
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

// Stop shuts the plugin down: a shutdown request (the plugin runs its on_unload
// callbacks), then EOF on its protocol pipe, then SIGTERM, then SIGKILL to the whole
// process group. It returns when the process has exited.
//
// Whenever the plugin exits, for whatever reason, what it left running in its process
// group is killed with it.
func (p *Process) Stop(ctx context.Context) {
	grace := p.opts.stopGrace()
	select {
	case <-p.exited:
		return
	default:
	}
	sctx, cancel := context.WithTimeout(ctx, grace)
	_ = p.Call(sctx, protocol.MethodShutdown, struct{}{}, nil)
	cancel()
	p.closeToPlugin()
	if p.waitExit(ctx, grace) {
		return
	}
	p.signalGroup(syscall.SIGTERM)
	if p.waitExit(ctx, grace) {
		return
	}
	p.Kill()
	<-p.exited
}

// Kill ends the process group at once. It does not wait for the exit (see Exited).
func (p *Process) Kill() {
	p.killGroup()
	p.proc.kill()
}

// abort kills the plugin and waits until it has exited: for a plugin that never
// became useful (a failed handshake) there is nothing to shut down politely.
func (p *Process) abort() {
	p.Kill()
	<-p.exited
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

// ConnState describes the protocol connection, for a report on a call that went
// unanswered (see protocol.Conn.State).
func (p *Process) ConnState() string { return p.conn.State() }

// RequestStackDump sends SIGUSR2 to the plugin process: a Python bridge started
// with HERMES_DEBUG_STALL writes its threads' stacks to
// $HERMES_HOME/logs/stall-<pid>.txt. Other plugins take the signal's default.
func (p *Process) RequestStackDump() {
	p.sigMu.Lock()
	defer p.sigMu.Unlock()
	if !p.reaped {
		_ = syscall.Kill(p.proc.pid, syscall.SIGUSR2)
	}
}

func (p *Process) signalGroup(sig syscall.Signal) {
	// The plugin leads its own process group, so this reaches anything it spawned.
	p.sigMu.Lock()
	defer p.sigMu.Unlock()
	if !p.reaped {
		_ = syscall.Kill(-p.proc.pid, sig)
	}
}
