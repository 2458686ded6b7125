package plugins

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/hermes-go/hermes/internal/hooks"
	"github.com/hermes-go/hermes/internal/tools"
)

// registrations is what one plugin registered (pending during register(), then committed).
type registrations struct {
	tools       []toolReg
	hooks       []hookReg
	commands    []*Command
	cliCommands []*CLICommand
	skills      []SkillInfo
	middleware  []string
	mws         []*middlewareReg
	sections    []*promptSection
	other       []OtherInfo
	events      []string
	subs        []*subscription
	// wire is every registering message the plugin sent, in order. A restarted
	// process that sends the same ones has the same handles, so the committed
	// registrations stay as they are (see restartAsync).
	wire []string
}

type toolReg struct {
	tool     *tools.Tool
	override bool
}

type hookReg struct {
	hook     string
	callback string
	handle   string // the plugin's handle (out-of-process callbacks), for dispose
	// unregister removes the committed callback (set by commit).
	unregister func()
	invoke     func(ctx context.Context, payload map[string]any) (any, error)
	// invokeEncoded is set for out-of-process callbacks (see hooks.Callback).
	invokeEncoded func(ctx context.Context, payload []byte) (any, error)
}

// Command is a plugin slash command (/name) for chat sessions.
type Command struct {
	Name         string
	Description  string
	ArgsHint     string
	ArgumentMode string
	Plugin       string
	IsAsync      bool
	// Run calls the handler with the raw argument text; ok=false when it returned None.
	Run func(ctx context.Context, rawArgs string) (out string, ok bool, err error)
}

// CLICommand is a plugin command run as `hermes <name> ...`.
type CLICommand struct {
	Name        string
	Help        string
	Description string
	Plugin      string
	Run         func(ctx context.Context, argv []string, stdout, stderr io.Writer) (int, error)
}

// builtinSlashCommands are the session commands plugins may not take over.
var builtinSlashCommands = map[string]bool{
	"help": true, "plugins": true, "tools": true, "new": true, "quit": true, "exit": true,
	"reset": true, "clear": true, "model": true, "resume": true, "sessions": true, "stop": true,
	"approve": true, "deny": true, "retry": true, "undo": true, "config": true, "skills": true,
	"toolsets": true, "compress": true, "usage": true, "status": true, "verbose": true,
}

// builtinCLIVerbs are the top-level `hermes` commands plugins may not take over.
var builtinCLIVerbs = map[string]bool{
	"plugins": true, "tools": true, "config": true, "chat": true, "sessions": true, "help": true,
	"version": true, "completion": true, "demo": true, "gateway": true, "mcp": true, "open-url": true,
	"setup": true, "update": true, "doctor": true, "model": true, "skills": true, "cron": true,
}

// commit moves a plugin's pending registrations into the shared registries, in the
// order they were made. Later plugins in load order see earlier ones' tools.
func (m *Manager) commit(p *Plugin) {
	p.mu.Lock()
	pend := p.pending
	p.pending = registrations{}
	p.mu.Unlock()

	var kept registrations
	var unregs []func()
	for _, tr := range pend.tools {
		if err := m.Tools.Register(tr.tool, tr.override); err != nil {
			var se *tools.ShadowError
			if errors.As(err, &se) {
				m.warn("plugin %s tried to shadow tool '%s' (registered by %s) without override=True; skipped", p.Key, tr.tool.Name, se.Existing)
			} else {
				m.warn("plugin %s: %v", p.Key, err)
			}
			continue
		}
		if prob := tr.tool.SchemaProblem(); prob != "" {
			m.warn("plugin %s: tool '%s' has a parameters schema hermes cannot check (%s); its arguments are passed on unchecked", p.Key, tr.tool.Name, prob)
		}
		name, src := tr.tool.Name, tr.tool.Source
		unregs = append(unregs, func() { m.Tools.Remove(name, src) })
		kept.tools = append(kept.tools, tr)
	}
	for _, hr := range pend.hooks {
		// An unknown hook name is warned about by the dispatcher, in upstream's words.
		hr.unregister = m.Hooks.Register(hr.hook, hooks.Callback{PluginID: p.Key, Name: hr.callback, Invoke: hr.invoke, InvokeEncoded: hr.invokeEncoded})
		unregs = append(unregs, hr.unregister)
		kept.hooks = append(kept.hooks, hr)
	}
	m.mu.Lock()
	for _, c := range pend.commands {
		prev := m.commands[c.Name]
		m.commands[c.Name] = c
		c := c
		unregs = append(unregs, func() {
			m.mu.Lock()
			if m.commands[c.Name] == c {
				if prev != nil {
					m.commands[c.Name] = prev
				} else {
					delete(m.commands, c.Name)
				}
			}
			m.mu.Unlock()
		})
		kept.commands = append(kept.commands, c)
	}
	for _, c := range pend.cliCommands {
		if other, ok := m.cliCmds[c.Name]; ok && other.Plugin != p.Key {
			m.mu.Unlock()
			m.warn("plugin %s: CLI command '%s' is already provided by plugin %s; skipped", p.Key, c.Name, other.Plugin)
			m.mu.Lock()
			continue
		}
		m.cliCmds[c.Name] = c
		c := c
		unregs = append(unregs, func() {
			m.mu.Lock()
			if m.cliCmds[c.Name] == c {
				delete(m.cliCmds, c.Name)
			}
			m.mu.Unlock()
		})
		kept.cliCommands = append(kept.cliCommands, c)
	}
	m.mu.Unlock()
	for _, s := range pend.subs {
		unregs = append(unregs, m.bus.subscribe(s))
	}
	kept.skills = pend.skills
	kept.middleware = pend.middleware
	kept.mws = pend.mws
	if n := int32(len(pend.mws)); n > 0 {
		m.mwCount.Add(n)
		unregs = append(unregs, func() { m.mwCount.Add(-n) })
	}
	kept.sections = pend.sections
	kept.other = pend.other
	kept.events = pend.events
	kept.subs = pend.subs
	kept.wire = pend.wire

	p.mu.Lock()
	p.regs = mergeRegs(p.regs, kept)
	p.unregs = append(p.unregs, unregs...)
	p.Loaded = true
	p.Error = ""
	p.mu.Unlock()
}

func mergeRegs(a, b registrations) registrations {
	a.tools = append(a.tools, b.tools...)
	a.hooks = append(a.hooks, b.hooks...)
	a.commands = append(a.commands, b.commands...)
	a.cliCommands = append(a.cliCommands, b.cliCommands...)
	a.skills = append(a.skills, b.skills...)
	a.middleware = append(a.middleware, b.middleware...)
	a.mws = append(a.mws, b.mws...)
	a.sections = append(a.sections, b.sections...)
	a.other = append(a.other, b.other...)
	a.events = append(a.events, b.events...)
	a.subs = append(a.subs, b.subs...)
	a.wire = append(a.wire, b.wire...)
	return a
}

// recordWire notes a registering message of p in its pending registrations.
func (p *Plugin) recordWire(method string, params []byte) {
	p.mu.Lock()
	p.pending.wire = append(p.pending.wire, method+" "+string(params))
	p.mu.Unlock()
}

// sameAsCommitted reports whether the pending registrations, made by a
// restarted process, repeat exactly what the committed ones were made of.
func (p *Plugin) sameAsCommitted() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.Loaded && slices.Equal(p.pending.wire, p.regs.wire)
}

// withdraw undoes every committed registration of p (reverse acquisition order).
func (m *Manager) withdraw(p *Plugin) {
	p.mu.Lock()
	unregs := p.unregs
	p.unregs = nil
	p.regs = registrations{}
	p.Loaded = false
	p.mu.Unlock()
	for i := len(unregs) - 1; i >= 0; i-- {
		unregs[i]()
	}
}

// addPending records a registration made by p; after p is loaded (a plugin
// registering late, from a thread or an event) it is committed at once.
func (m *Manager) addPending(p *Plugin, add func(r *registrations)) {
	p.mu.Lock()
	add(&p.pending)
	// A restarting plugin's registrations wait for restartAsync to compare them.
	loaded := p.Loaded && !p.restarting
	p.mu.Unlock()
	if loaded {
		m.commit(p)
	}
}

// dispose withdraws one registration (PluginRegistration.dispose()): a tool
// by name, a hook callback by its handle, a slash or CLI command by name.
// Disposing what is already gone does nothing, as upstream's dispose is
// idempotent.
func (m *Manager) dispose(p *Plugin, kind, key, handle string) error {
	switch kind {
	case "tool":
		p.mu.Lock()
		p.pending.tools = slices.DeleteFunc(p.pending.tools, func(t toolReg) bool { return t.tool.Name == key })
		p.regs.tools = slices.DeleteFunc(p.regs.tools, func(t toolReg) bool { return t.tool.Name == key })
		p.mu.Unlock()
		m.Tools.Remove(key, p.Key)
		return nil
	case "hook":
		if handle == "" {
			return fmt.Errorf("dispose of a hook registration needs its handle; this one stays active until the plugin unloads")
		}
		var gone []hookReg
		p.mu.Lock()
		match := func(h hookReg) bool {
			if h.hook == key && h.handle == handle {
				gone = append(gone, h)
				return true
			}
			return false
		}
		p.pending.hooks = slices.DeleteFunc(p.pending.hooks, match)
		p.regs.hooks = slices.DeleteFunc(p.regs.hooks, match)
		p.mu.Unlock()
		for _, h := range gone {
			if h.unregister != nil {
				h.unregister()
			}
		}
		return nil
	case "command", "cli_command":
		name := key
		if kind == "command" {
			name = strings.ReplaceAll(strings.TrimLeft(strings.TrimSpace(strings.ToLower(key)), "/"), " ", "-")
		}
		p.mu.Lock()
		p.pending.commands = slices.DeleteFunc(p.pending.commands, func(c *Command) bool { return kind == "command" && c.Name == name })
		p.regs.commands = slices.DeleteFunc(p.regs.commands, func(c *Command) bool { return kind == "command" && c.Name == name })
		p.pending.cliCommands = slices.DeleteFunc(p.pending.cliCommands, func(c *CLICommand) bool { return kind == "cli_command" && c.Name == name })
		p.regs.cliCommands = slices.DeleteFunc(p.regs.cliCommands, func(c *CLICommand) bool { return kind == "cli_command" && c.Name == name })
		p.mu.Unlock()
		m.mu.Lock()
		if c := m.commands[name]; kind == "command" && c != nil && c.Plugin == p.Key {
			delete(m.commands, name)
		}
		if c := m.cliCmds[name]; kind == "cli_command" && c != nil && c.Plugin == p.Key {
			delete(m.cliCmds, name)
		}
		m.mu.Unlock()
		return nil
	}
	return fmt.Errorf("dispose of a %s registration is not supported yet; it stays active until the plugin unloads", kind)
}
