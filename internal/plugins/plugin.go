package plugins

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/hermes-go/hermes/internal/plugins/discovery"
	"github.com/hermes-go/hermes/internal/plugins/runtime"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// Plugin is one discovered plugin and, once loaded, what it registered.
type Plugin struct {
	Key       string
	Candidate *discovery.Candidate
	Decision  discovery.Decision
	Status    string // enabled | disabled | not enabled
	Runtime   string // python | exec | builtin

	mu         sync.Mutex
	Loaded     bool
	Error      string
	proc       *runtime.Process
	pending    registrations // collected during register(), committed afterwards
	regs       registrations // committed
	unregs     []func()      // undo committed registrations, in acquisition order
	builtin    *builtinState
	restarting bool
	// earlierCommitted is closed once every plugin before this one in load
	// order has committed its registrations (nil outside Load).
	earlierCommitted <-chan struct{}
	// holdWarns is set while Load runs this plugin's register(): its warnings are
	// kept in heldWarns and recorded at its turn to commit, in load order.
	holdWarns bool
	heldWarns []string
	// cliIn is hermes' standard input while one of the plugin's CLI commands runs.
	cliIn *cliInput
}

// cliInput is hermes' standard input as a plugin CLI command reads it, a line
// per ctx.cli_stdin call. Each call is served on a goroutine of its own, and
// nothing Go can see orders one call after the previous (the order runs
// through the plugin process), so the reader has a lock of its own.
type cliInput struct {
	mu      sync.Mutex
	r       *bufio.Reader
	echoOff func() (restore func()) // nil: not a terminal
}

// readLine returns the next line, with its line break; "" at the end of input.
// A secret line is read with the terminal's echo off.
func (in *cliInput) readLine(secret bool) (string, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if secret && in.echoOff != nil {
		defer in.echoOff()()
	}
	line, err := in.r.ReadString('\n')
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return line, err
}

func (p *Plugin) setCLIInput(in *cliInput) {
	p.mu.Lock()
	p.cliIn = in
	p.mu.Unlock()
}

func (p *Plugin) cliInput() *cliInput {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cliIn
}

// Registered is a snapshot of what a plugin registered, for `plugins show`.
type Registered struct {
	Tools       []string
	Hooks       []HookInfo
	Commands    []CommandInfo
	CLICommands []CLICommandInfo
	Skills      []SkillInfo
	Middleware  []string
	Other       []OtherInfo
	Events      []string
}

// HookInfo names one hook registration.
type HookInfo struct {
	Hook     string `json:"hook"`
	Callback string `json:"callback"`
}

// CommandInfo describes a slash command.
type CommandInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	ArgsHint    string `json:"args_hint"`
}

// CLICommandInfo describes a `hermes <name>` command.
type CLICommandInfo struct {
	Name string `json:"name"`
	Help string `json:"help"`
}

// SkillInfo describes a read-only skill.
type SkillInfo struct {
	Name        string `json:"name"`
	Path        string `json:"path"`
	Description string `json:"description"`
}

// OtherInfo records a registrar this host accepts but does not serve yet.
type OtherInfo struct {
	Registrar string `json:"registrar"`
	Name      string `json:"name"`
	Note      string `json:"note"`
}

// Snapshot returns what the plugin registered.
func (p *Plugin) Snapshot() Registered {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := Registered{}
	for _, t := range p.regs.tools {
		r.Tools = append(r.Tools, t.tool.Name)
	}
	for _, h := range p.regs.hooks {
		r.Hooks = append(r.Hooks, HookInfo{Hook: h.hook, Callback: h.callback})
	}
	for _, c := range p.regs.commands {
		r.Commands = append(r.Commands, CommandInfo{Name: c.Name, Description: c.Description, ArgsHint: c.ArgsHint})
	}
	for _, c := range p.regs.cliCommands {
		r.CLICommands = append(r.CLICommands, CLICommandInfo{Name: c.Name, Help: c.Help})
	}
	for _, s := range p.regs.skills {
		r.Skills = append(r.Skills, s)
	}
	r.Middleware = append(r.Middleware, p.regs.middleware...)
	r.Other = append(r.Other, p.regs.other...)
	r.Events = append(r.Events, p.regs.events...)
	return r
}

// ErrorText is the plugin's load error ("" when none).
func (p *Plugin) ErrorText() string { return p.errorText() }

func (p *Plugin) errorText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.Error
}

func (p *Plugin) setError(msg string) {
	p.mu.Lock()
	p.Error = msg
	p.Loaded = false
	p.mu.Unlock()
}

// IsLoaded reports whether register() succeeded.
func (p *Plugin) IsLoaded() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.Loaded
}

func (p *Plugin) setProcess(proc *runtime.Process) {
	p.mu.Lock()
	p.proc = proc
	p.mu.Unlock()
}

func (p *Plugin) process() *runtime.Process {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.proc
}

// Process exposes the running process (nil for builtins or unloaded plugins).
func (p *Plugin) Process() *runtime.Process { return p.process() }

func (p *Plugin) discardPending() {
	p.mu.Lock()
	p.pending = registrations{}
	p.mu.Unlock()
}

// invoker calls into a plugin: over its process, or directly for builtins.
type invoker func(ctx context.Context, method string, params any) (json.RawMessage, error)

func (p *Plugin) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	p.mu.Lock()
	proc, restarting := p.proc, p.restarting
	p.mu.Unlock()
	if proc == nil {
		if restarting {
			return nil, protocol.Errorf(protocol.CodeNotAvailable, "plugin %s is restarting after it stopped answering; try again in a moment", p.Key)
		}
		return nil, protocol.Errorf(protocol.CodeNotAvailable, "plugin %s is not running", p.Key)
	}
	var raw json.RawMessage
	err := proc.Call(ctx, method, params, &raw)
	return raw, err
}
