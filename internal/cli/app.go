// Package cli is the hermes command line: one file per verb, each an options struct
// plus a run function, with terminal, environment and working directory injected
// through App so commands are testable end to end in-process.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"sync"

	"github.com/mattn/go-isatty"

	"github.com/hermes-go/hermes/internal/approval"
	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/home"
	"github.com/hermes-go/hermes/internal/plugins"
	"github.com/hermes-go/hermes/internal/tools"
)

// Version is the hermes version (set at build time with -ldflags).
var Version = "0.1.0"

// IO owns the terminal: the streams and whether they are TTYs.
type IO struct {
	In     io.Reader
	Out    io.Writer
	Err    io.Writer
	InTTY  bool
	OutTTY bool
	ErrTTY bool
}

// CanPrompt reports whether a human can answer prompts (stdin and stdout are TTYs).
func (s *IO) CanPrompt() bool { return s.InTTY && s.OutTTY }

// App is the injection root every command reads from.
type App struct {
	IO      *IO
	Env     func(string) string
	Cwd     string
	Profile string // --profile

	logMu     sync.Mutex
	logFile   *os.File
	logSize   int64 // bytes in logFile, to rotate it within a run
	logFailed bool
	windows   map[string]*rateWindow
	homeVal   *home.Home
	warned    int         // manager warnings already shown
	configDoc *config.Doc // config.yaml as migrate parsed it, for the next Manager
	// migrationUnsaved: the config migration could not be saved and is applied in
	// memory for this command (see migrate).
	migrationUnsaved bool
	// configWarned: the config file's warnings were shown (once per command).
	configWarned bool
	// approver is the interactive approval prompt of the last Manager (nil when no
	// human can answer); chat may point its Prompter at its own line reader.
	approver *approval.Approver
	// armInterrupts makes SIGINT/SIGTERM cancel the command's context (nil in
	// tests that call Run directly); Run arms it for every command not marked
	// instant.
	armInterrupts func()
	// agent serves the agent's facades (ctx.inject_message, ctx.llm) to the
	// plugins of the last Manager.
	agent *agentServices
}

// pipeline is the tool pipeline over what m's plugins registered, with the
// interactive approval prompt when a human can answer it.
func (a *App) pipeline(m *plugins.Manager) *tools.Pipeline {
	reg := m.Registry()
	p := &tools.Pipeline{Registry: reg.Tools(), Hooks: reg.Hooks(), Middleware: reg.ToolMiddleware()}
	if a.approver != nil {
		p.Approver = a.approver
	}
	return p
}

// NewApp builds the production App from the process environment.
func NewApp() *App {
	cwd, _ := os.Getwd()
	return &App{
		IO: &IO{
			In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
			InTTY:  isatty.IsTerminal(os.Stdin.Fd()),
			OutTTY: isatty.IsTerminal(os.Stdout.Fd()),
			ErrTTY: isatty.IsTerminal(os.Stderr.Fd()),
		},
		Env: os.Getenv,
		Cwd: cwd,
	}
}

// Home resolves HERMES_HOME and the profile once.
func (a *App) Home() (home.Home, error) {
	if a.homeVal != nil {
		return *a.homeVal, nil
	}
	h, err := home.Resolve(a.Env, a.Profile)
	if err != nil {
		return home.Home{}, err
	}
	if a.Profile != "" && a.Profile != "default" && !profileInUse(h) {
		// Most likely a typo: say so rather than show an empty world.
		a.warn(fmt.Sprintf("profile %q has no config.yaml or plugins yet (%s): it starts empty; check the name", a.Profile, h.Dir))
	}
	a.homeVal = &h
	return h, nil
}

// profileInUse reports whether the profile directory holds a config or plugins
// (hermes' own caches alone do not count).
func profileInUse(h home.Home) bool {
	for _, p := range []string{h.ConfigPath(), h.PluginsDir()} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			return true
		}
	}
	return false
}

// Color reports whether output to a TTY may use colour.
func (a *App) Color() bool {
	return a.IO.OutTTY && a.Env("NO_COLOR") == "" && a.Env("TERM") != "dumb"
}

// Manager creates a plugin manager for this invocation, already discovered.
func (a *App) Manager() (*plugins.Manager, error) {
	h, err := a.Home()
	if err != nil {
		return nil, err
	}
	if err := a.migrate(context.Background()); err != nil {
		return nil, err
	}
	doc := a.configDoc
	a.configDoc = nil
	opts := plugins.Options{
		Config:      doc,
		Home:        h,
		Env:         a.Env,
		Cwd:         a.Cwd,
		HostVersion: Version,
		Builtins:    builtinPlugins(),
		Sink:        a.pluginLine,
		Logger:      a.logger(),
	}
	if a.approver = a.newApprover(h); a.approver != nil {
		opts.Approver = a.approver
	}
	a.agent = &agentServices{}
	opts.Agent = a.agent
	m := plugins.New(opts)
	if err := m.Discover(); err != nil {
		return nil, err
	}
	if a.approver != nil {
		a.approver.SetHooks(m.Registry().Hooks())
	}
	if err := a.registerBuiltinTools(m, a.approver); err != nil {
		return nil, err
	}
	a.agent.setLLM(a.lazyPluginLLM(m))
	a.warned = 0
	a.flushWarnings(m)
	return m, nil
}

// flushWarnings shows the manager's warnings not shown yet: discovery's, then those
// raised while loading (a tool name clash, a missing dependency, ...).
func (a *App) flushWarnings(m *plugins.Manager) {
	ws := m.Warnings()
	if a.warned > len(ws) {
		a.warned = 0
	}
	for _, w := range ws[a.warned:] {
		a.warn(w)
	}
	a.warned = len(ws)
}

func (a *App) warn(msg string) {
	if strings.HasPrefix(msg, "debug:") {
		return
	}
	a.logMu.Lock() // warnings also come from plugin goroutines (see userLog)
	defer a.logMu.Unlock()
	fmt.Fprintf(a.IO.Err, "warning: %s\n", msg)
}

// logger is hermes' own structured log (see userLog).
func (a *App) logger() *slog.Logger {
	level := slog.LevelWarn
	if truthy(a.Env("HERMES_PLUGINS_DEBUG")) {
		level = slog.LevelDebug
	}
	return slog.New(&userLog{app: a, level: level})
}

func truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// Close releases what the App opened.
func (a *App) Close() {
	a.logMu.Lock()
	defer a.logMu.Unlock()
	if a.logFile != nil {
		a.logFile.Close()
		a.logFile = nil
	}
}

// runWithManager discovers plugins, loads the enabled ones, runs fn, and always stops
// every plugin process before returning.
func (a *App) runWithManager(ctx context.Context, fn func(m *plugins.Manager) error) error {
	m, err := a.Manager()
	if err != nil {
		return err
	}
	defer m.Close(context.Background())
	if err := m.Load(ctx, nil); err != nil {
		return err
	}
	a.flushWarnings(m)
	for _, p := range m.Plugins() {
		if e := p.ErrorText(); e != "" && p.Decision.Starts() {
			fmt.Fprintf(a.IO.Err, "plugin %s failed to load: %s\n", p.Key, e)
		}
	}
	return fn(m)
}
