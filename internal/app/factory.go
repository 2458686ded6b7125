// Package app wires hermes together for one command: the terminal, the
// environment and HERMES_HOME (Factory), config.yaml with its migration, the
// log, and the plugin host (manager, registry, tool pipeline, approver, agent
// services). The verbs in internal/cli are built from a Factory and reach
// everything through it, as the GitHub CLI's commands reach theirs through
// cmdutil.Factory.
package app

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/hermes-go/hermes/internal/clock"
	"github.com/hermes-go/hermes/internal/home"
	"github.com/hermes-go/hermes/internal/logs"
	"github.com/hermes-go/hermes/internal/reaper"
	"github.com/hermes-go/hermes/internal/redact"
	"github.com/hermes-go/hermes/internal/tools"
)

// IOStreams is the terminal: the streams and whether they are TTYs.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	Err    io.Writer
	InTTY  bool
	OutTTY bool
	ErrTTY bool

	// lines is the read of In a prompt left pending (see ReadLine); In must not
	// change once a prompt has read it (WithStdin makes a copy with another).
	lines *lineSource
}

// CanPrompt reports whether a human can answer prompts (stdin and stdout are TTYs).
func (s *IOStreams) CanPrompt() bool { return s.InTTY && s.OutTTY }

// Factory is what every command is built from. Its inputs (IO, Env, Cwd, Clock,
// Version) are set once, by New for the real process or by a test; Profile is
// the --profile flag, set while the root's flags are parsed, before any verb
// runs. What derives from them (HERMES_HOME, config.yaml, the log) is resolved
// on first use and kept for the command.
type Factory struct {
	IO      *IOStreams
	Env     func(string) string
	Environ func() []string
	Cwd     string
	Clock   func() time.Time // nil: clock.Now
	Version string
	Profile string
	// AcceptHooks is --accept-hooks: consent to every shell hook of config.yaml
	// without asking (and record it).
	AcceptHooks bool
	// ArmInterrupts makes SIGINT/SIGTERM cancel the command's context (nil in
	// tests that run commands directly); the root arms it for commands that can
	// run long.
	ArmInterrupts func()

	home *home.Home
	out  *logs.Output
	// closers release what the command opened on the way (a database pool).
	closers []func()
	redact  *redact.Live // shared by copies (WithStdin), as the log is
	cfg     configState
	// procs contains every process the command starts (nil in tests that build
	// a Factory themselves: process groups only); the Factory New made owns it
	// and kills what is left of them in Close.
	procs     *reaper.Reaper
	ownsProcs bool
	// toolApprover replaces the terminal prompt for the Host (the gateway's
	// approvals in chat).
	toolApprover tools.Approver
}

// Home resolves HERMES_HOME and the profile once.
func (f *Factory) Home() (home.Home, error) {
	if f.home != nil {
		return *f.home, nil
	}
	h, err := home.Resolve(f.Env, f.Profile)
	if err != nil {
		return home.Home{}, err
	}
	if f.Profile != "" && f.Profile != "default" && !profileInUse(h) {
		// Most likely a typo: say so rather than show an empty world.
		f.Warn(fmt.Sprintf("profile %q has no config.yaml or plugins yet (%s): it starts empty; check the name", f.Profile, h.Dir))
	}
	f.home = &h
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

// environ is the process environment (none when the Factory has no Environ).
func (f *Factory) environ() []string {
	if f.Environ == nil {
		return nil
	}
	return f.Environ()
}

// Now is the command's current time.
func (f *Factory) Now() time.Time {
	if f.Clock == nil {
		return clock.Now()
	}
	return f.Clock()
}

// Color reports whether output to a TTY may use colour.
func (f *Factory) Color() bool {
	return f.IO.OutTTY && f.Env("NO_COLOR") == "" && f.Env("TERM") != "dumb"
}

// Logs is the command's log: hermes' warnings and plugin output, on stderr
// and in plugins.log.
func (f *Factory) Logs() *logs.Output {
	if f.out == nil {
		f.out = logs.New(logs.Options{
			Err:    f.IO.Err,
			Debug:  Truthy(f.Env("HERMES_PLUGINS_DEBUG")),
			Now:    f.Now,
			Redact: f.Redactor().String,
			Path: func() (string, error) {
				h, err := f.Home()
				if err != nil {
					return "", err
				}
				return h.PluginLogPath(), nil
			},
		})
	}
	return f.out
}

// Redactor masks secrets in what this command shows and logs: the built-in
// rules from the start, the plugins' patterns once they have loaded (Host.Load),
// none at all with security.redact_secrets: false (read by Host).
func (f *Factory) Redactor() *redact.Live {
	if f.redact == nil {
		f.redact = &redact.Live{}
	}
	return f.redact
}

// Warn shows a warning on stderr ("warning: msg").
func (f *Factory) Warn(msg string) { f.Logs().Warn(msg) }

// Logger is hermes' own structured log (see logs.Output.Logger).
func (f *Factory) Logger() *slog.Logger { return f.Logs().Logger() }

// Close releases what the command opened (plugins.log) and, for the process's
// own Factory, kills every process hermes started that is still running, and
// whatever those left behind.
func (f *Factory) Close() {
	for _, c := range f.closers {
		c()
	}
	f.closers = nil
	if f.ownsProcs {
		f.procs.Close()
	}
	if f.out != nil {
		f.out.Close()
	}
}

// Reaper is what every process of this hermes starts in (see package reaper);
// nil (process groups only) unless the Factory came from New.
func (f *Factory) Reaper() *reaper.Reaper { return f.procs }

// KillProcesses kills every process hermes started and what they left, at once:
// for an exit that cannot wait for plugins to stop (a second Ctrl-C).
func (f *Factory) KillProcesses() { f.procs.Close() }

// Truthy is how hermes reads an on/off environment variable.
func Truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// WithStdin is f with r as its standard input (the chat's line pump, which the
// prompt loop and the approval prompt share). Use it instead of f from then on:
// what f resolved so far (home, config, log) carries over.
func (f *Factory) WithStdin(r io.Reader) *Factory {
	c := *f
	c.ownsProcs = false
	streams := *f.IO
	streams.In = r
	streams.lines = nil
	c.IO = &streams
	return &c
}

// ForHome is a Factory like f for another HERMES_HOME (a scratch one, as `hermes
// demo` uses); Close it when done.
func (f *Factory) ForHome(h home.Home) *Factory {
	return &Factory{IO: f.IO, Env: f.Env, Environ: f.Environ, Cwd: f.Cwd, Clock: f.Clock, Version: f.Version,
		Profile: h.Profile, AcceptHooks: f.AcceptHooks, ArmInterrupts: f.ArmInterrupts, home: &h, procs: f.procs}
}
