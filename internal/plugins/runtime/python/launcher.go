// Package python is how one plugin manager runs Python plugins: which
// interpreter (plugins.python, HERMES_PYTHON, python3), probed once; the
// embedded bridge, unpacked and byte-compiled once; the fork server, started on
// first use and again if it dies; where pip entry points are looked for; and
// what an import error in register() should tell the user. The processes
// themselves are package runtime's: this package decides, runtime runs.
package python

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/hermes-go/hermes/internal/plugins/pybridge"
	"github.com/hermes-go/hermes/internal/plugins/runtime"
	"github.com/hermes-go/hermes/internal/reaper"
)

// Options configure a Launcher.
type Options struct {
	// Configured is plugins.python from config.yaml, read when the interpreter
	// is first probed ("" when unset).
	Configured func() string
	Env        func(string) string // the process environment (HERMES_PYTHON, ...)
	CacheDir   string              // HERMES_HOME's cache: probe results, the unpacked bridge
	Cwd        string              // where plugins run
	Sink       runtime.LineSink    // the fork server's own output
	Logger     *slog.Logger
	// PluginEnv is the environment plugin processes get (and so the fork server,
	// whose children share it).
	PluginEnv func() []string
	// NoForkServer starts an interpreter per plugin (HERMES_NO_FORKSERVER).
	NoForkServer bool
	// Reaper contains the probe, the precompile and the fork server with its
	// children (nil: process groups only).
	Reaper *reaper.Reaper
}

// Launcher starts the Python plugins of one manager.
type Launcher struct {
	opts Options
	log  *slog.Logger

	mu      sync.Mutex
	info    *runtime.PythonInfo
	infoErr error
	fork    *runtime.ForkServer
	failed  bool // the fork server could not start: do not try again
	closed  bool

	forkMu sync.Mutex // serialises starting the fork server
}

// New returns a launcher; nothing runs until it is used.
func New(opts Options) *Launcher {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Configured == nil {
		opts.Configured = func() string { return "" }
	}
	return &Launcher{opts: opts, log: opts.Logger}
}

// Info probes the configured interpreter, once per launcher.
func (l *Launcher) Info(ctx context.Context) (*runtime.PythonInfo, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.info != nil || l.infoErr != nil {
		return l.info, l.infoErr
	}
	interp := runtime.ChooseInterpreter(l.opts.Configured(), l.opts.Env)
	info, err := runtime.ProbePython(ctx, l.opts.Reaper, interp, l.opts.Env, l.opts.CacheDir, l.opts.Cwd)
	if err != nil {
		l.infoErr = err
		return nil, err
	}
	l.info = &info
	return l.info, nil
}

// Executable is the probed interpreter ("" before a successful probe).
func (l *Launcher) Executable() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.info == nil {
		return ""
	}
	return l.info.Executable
}

// Runtime returns what starts one Python plugin: the bridge run by the probed
// interpreter, forked from the fork server when it is up.
func (l *Launcher) Runtime(ctx context.Context, opts runtime.Options) (runtime.Runtime, error) {
	py, err := l.Info(ctx)
	if err != nil {
		return nil, err
	}
	script, err := pybridge.Ensure(l.opts.CacheDir)
	if err != nil {
		return nil, err
	}
	l.ensureBytecode(ctx, py, script)
	return &runtime.Python{Interpreter: py.Executable, Script: script, Options: opts, Fork: l.forkServer(ctx, py, script)}, nil
}

// bridgeChecked holds one sync.Once per (bridge directory, interpreter) this process
// has made sure has bytecode, so concurrent plugin starts check it once and wait for
// that check instead of each compiling the bridge from source.
var bridgeChecked sync.Map

// ensureBytecode precompiles the unpacked bridge for py when the plugin
// environment keeps Python from caching bytecode itself (see runtime.PrecompileBridge).
// Best effort: a failure only costs start-up time, so it is logged, not returned.
func (l *Launcher) ensureBytecode(ctx context.Context, py *runtime.PythonInfo, script string) {
	dir := filepath.Dir(script)
	once, _ := bridgeChecked.LoadOrStore(dir+"\x00"+py.Executable+"\x00"+py.CacheTag, new(sync.Once))
	once.(*sync.Once).Do(func() {
		compiled, err := runtime.PrecompileBridge(ctx, l.opts.Reaper, *py, dir, l.opts.PluginEnv())
		switch {
		case err != nil:
			l.log.Debug("python bridge bytecode not written", "error", err)
		case compiled:
			l.log.Debug("python bridge bytecode written", "dir", dir, "interpreter", py.Executable)
		}
	})
}

// forkServer returns the fork server, starting it on first use; nil when it is
// switched off or cannot start, and plugins then start an interpreter each. A
// server that died is started again.
func (l *Launcher) forkServer(ctx context.Context, py *runtime.PythonInfo, script string) *runtime.ForkServer {
	if l.opts.NoForkServer {
		return nil
	}
	l.forkMu.Lock()
	defer l.forkMu.Unlock()
	l.mu.Lock()
	fork, closed, failed := l.fork, l.closed, l.failed
	l.mu.Unlock()
	if closed || failed {
		return nil
	}
	if fork != nil && fork.Alive() {
		return fork
	}
	if fork != nil {
		fork.Close()
	}
	fork, err := runtime.StartForkServer(ctx, l.opts.Reaper, py.Executable, script, runtime.PythonEnv(l.opts.PluginEnv()), l.opts.Cwd, l.opts.Sink)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.failed = true
		l.log.Warn("python fork server unavailable; starting an interpreter per plugin", "error", err)
		return nil
	}
	if l.closed {
		fork.Close()
		return nil
	}
	l.fork = fork
	return fork
}

// Close stops the fork server; later plugin starts run an interpreter each.
func (l *Launcher) Close() {
	l.mu.Lock()
	l.closed = true
	fork := l.fork
	l.fork = nil
	l.mu.Unlock()
	if fork != nil {
		fork.Close()
	}
}

// SitePackages is where pip entry points are looked for: the directories of
// PYTHONPATH first (as on the interpreter's sys.path), then the probed sys.path.
// The probe is cached per interpreter, so PYTHONPATH is read here, fresh, rather
// than trusted to be in the cached sys.path.
func SitePackages(pythonPath string, info *runtime.PythonInfo) []string {
	var out []string
	seen := map[string]bool{}
	add := func(dir string) {
		if dir == "" {
			return
		}
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
		if seen[dir] {
			return
		}
		seen[dir] = true
		out = append(out, dir)
	}
	for _, dir := range filepath.SplitList(pythonPath) {
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			add(dir)
		}
	}
	for _, dir := range info.SitePackages() {
		add(dir)
	}
	return out
}
