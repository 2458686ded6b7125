package registry

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hermes-go/hermes/internal/hooks"
	"github.com/hermes-go/hermes/internal/tools"
)

// Options configure a Registry.
type Options struct {
	// Tools is the tool table plugin tools are committed into (built-in tools
	// are registered there directly). Default: a new one.
	Tools *tools.Registry
	// Hooks receives committed hook callbacks. Default: a dispatcher without a
	// callback timeout.
	Hooks *hooks.Dispatcher
	// Warn reports a registration that was skipped at commit (a tool name
	// clash, a CLI command taken). Default: the logger.
	Warn   func(format string, args ...any)
	Logger *slog.Logger
}

// Registry is what every plugin registered. It is safe for concurrent use.
type Registry struct {
	tools *tools.Registry
	hooks *hooks.Dispatcher
	warn  func(format string, args ...any)
	log   *slog.Logger

	mu       sync.Mutex
	entries  map[string]*entry
	keys     []string // entries' plugin keys, sorted: the order chains and sections run in
	commands map[string]*Command
	cliCmds  map[string]*CLICommand
	subs     map[string][]*Subscription // by qualified event name
	mwCount  atomic.Int32               // committed middleware; 0 keeps tool calls off the chain code
	// receivers route platform plugins' events to the gateway's adapters.
	receivers map[string]*PlatformReceiver
}

// set is what one plugin registered, pending or committed.
type set struct {
	tools       []toolReg
	hooks       []*Hook
	commands    []*Command
	cliCommands []*CLICommand
	skills      []Skill
	middleware  []*Middleware
	sections    []*PromptSection
	other       []Other
	providers   []Provider
	subs        []*Subscription
	redactions  []string
	ctxRefs     []*ContextRef
	auxTasks    []*AuxTask
	platforms   []*PlatformEntry
	transports  []*TransportEntry
	// wire is every registering message the plugin sent, in order. A restarted
	// process that sends the same ones has the same handles, so the committed
	// registrations can stay as they are (see SameAsCommitted).
	wire []string
}

func (a *set) merge(b set) {
	a.tools = append(a.tools, b.tools...)
	a.hooks = append(a.hooks, b.hooks...)
	a.commands = append(a.commands, b.commands...)
	a.cliCommands = append(a.cliCommands, b.cliCommands...)
	a.skills = append(a.skills, b.skills...)
	a.middleware = append(a.middleware, b.middleware...)
	a.sections = append(a.sections, b.sections...)
	a.other = append(a.other, b.other...)
	a.providers = append(a.providers, b.providers...)
	a.subs = append(a.subs, b.subs...)
	a.redactions = append(a.redactions, b.redactions...)
	a.ctxRefs = append(a.ctxRefs, b.ctxRefs...)
	a.auxTasks = append(a.auxTasks, b.auxTasks...)
	a.platforms = append(a.platforms, b.platforms...)
	a.transports = append(a.transports, b.transports...)
	a.wire = append(a.wire, b.wire...)
}

// entry is one plugin's registrations.
type entry struct {
	pending   set
	committed set
	unregs    []func() // undo committed registrations, in acquisition order
	loaded    bool     // committed at least once since the last Withdraw
	live      bool     // new registrations are committed at once
}

// New returns an empty registry.
func New(opts Options) *Registry {
	r := &Registry{
		tools: opts.Tools, hooks: opts.Hooks, warn: opts.Warn, log: opts.Logger,
		entries: map[string]*entry{}, commands: map[string]*Command{},
		cliCmds: map[string]*CLICommand{}, subs: map[string][]*Subscription{},
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if r.tools == nil {
		r.tools = tools.NewRegistry()
	}
	if r.hooks == nil {
		r.hooks = hooks.New(hooks.Options{Logger: r.log})
	}
	if r.warn == nil {
		r.warn = func(format string, args ...any) { r.log.Warn(fmt.Sprintf(format, args...)) }
	}
	return r
}

// Tools is the tool table (plugin and built-in tools).
func (r *Registry) Tools() *tools.Registry { return r.tools }

// Hooks is the dispatcher committed hook callbacks fire through.
func (r *Registry) Hooks() *hooks.Dispatcher { return r.hooks }

// entryLocked returns plugin's entry, creating it; r.mu must be held.
func (r *Registry) entryLocked(plugin string) *entry {
	e := r.entries[plugin]
	if e == nil {
		e = &entry{}
		r.entries[plugin] = e
		i, _ := slices.BinarySearch(r.keys, plugin)
		r.keys = slices.Insert(r.keys, i, plugin)
	}
	return e
}

// add records a registration of plugin: pending until the plugin commits, or
// committed at once once it has (a registration made late, from a thread or
// an event handler).
func (r *Registry) add(plugin string, fn func(s *set)) {
	r.mu.Lock()
	e := r.entryLocked(plugin)
	fn(&e.pending)
	live := e.live
	r.mu.Unlock()
	if live {
		r.Commit(plugin)
	}
}

// AddTool records a tool; override lets it replace a tool of another source.
func (r *Registry) AddTool(plugin string, t *tools.Tool, override bool) {
	r.add(plugin, func(s *set) { s.tools = append(s.tools, toolReg{tool: t, override: override}) })
}

// AddHook records a hook callback.
func (r *Registry) AddHook(plugin string, h *Hook) {
	r.add(plugin, func(s *set) { s.hooks = append(s.hooks, h) })
}

// AddCommand records a slash command.
func (r *Registry) AddCommand(plugin string, c *Command) {
	r.add(plugin, func(s *set) { s.commands = append(s.commands, c) })
}

// AddCLICommand records a `hermes <name>` command.
func (r *Registry) AddCLICommand(plugin string, c *CLICommand) {
	r.add(plugin, func(s *set) { s.cliCommands = append(s.cliCommands, c) })
}

// AddSkill records a read-only skill.
func (r *Registry) AddSkill(plugin string, sk Skill) {
	r.add(plugin, func(s *set) { s.skills = append(s.skills, sk) })
}

// AddMiddleware records a middleware callback (an unknown kind is kept, as
// upstream keeps it, and never runs).
func (r *Registry) AddMiddleware(plugin string, mw *Middleware) {
	r.add(plugin, func(s *set) { s.middleware = append(s.middleware, mw) })
}

// AddPromptSection records a system prompt section (listed with the other
// registrations as note).
func (r *Registry) AddPromptSection(plugin string, sec *PromptSection, registrar, note string) {
	r.add(plugin, func(s *set) {
		s.sections = append(s.sections, sec)
		s.other = append(s.other, Other{Registrar: registrar, Name: sec.ID, Note: note})
	})
}

// AddOther records a registrar hermes accepts but does not serve yet; one
// that fills a provider slot is kept in the slot too.
func (r *Registry) AddOther(plugin string, o Other, handle string, details map[string]any) {
	r.add(plugin, func(s *set) {
		s.other = append(s.other, o)
		if kind, ok := ProviderKindOf(o.Registrar); ok {
			s.providers = append(s.providers, Provider{Kind: kind, Name: o.Name, Plugin: plugin, Handle: handle, Details: details})
		}
	})
}

// AddProvider records a provider registration whose object is called through
// the plugin's process (p.Conn), beside its Other row.
func (r *Registry) AddProvider(plugin string, o Other, p Provider) {
	p.Plugin = plugin
	r.add(plugin, func(s *set) {
		s.other = append(s.other, o)
		s.providers = append(s.providers, p)
	})
}

// AddSubscription records a ctx.subscribe callback.
func (r *Registry) AddSubscription(plugin string, sub *Subscription) {
	r.add(plugin, func(s *set) { s.subs = append(s.subs, sub) })
}

// RecordWire notes a registering protocol message of plugin, in order.
func (r *Registry) RecordWire(plugin, method string, params []byte) {
	r.mu.Lock()
	e := r.entryLocked(plugin)
	e.pending.wire = append(e.pending.wire, method+" "+string(params))
	r.mu.Unlock()
}

// Begin starts collecting plugin's registrations as pending again (a restart):
// what it committed stays in force until Commit or Withdraw.
func (r *Registry) Begin(plugin string) {
	r.mu.Lock()
	e := r.entryLocked(plugin)
	e.pending = set{}
	e.live = false
	r.mu.Unlock()
}

// DiscardPending drops what plugin registered since its last commit.
func (r *Registry) DiscardPending(plugin string) {
	r.mu.Lock()
	if e := r.entries[plugin]; e != nil {
		e.pending = set{}
	}
	r.mu.Unlock()
}

// Resume drops the pending registrations of a restarted plugin that repeated
// what it had committed (see SameAsCommitted) and goes live again.
func (r *Registry) Resume(plugin string) {
	r.mu.Lock()
	if e := r.entries[plugin]; e != nil {
		e.pending = set{}
		e.live = e.loaded
	}
	r.mu.Unlock()
}

// SameAsCommitted reports whether the pending registrations, made by a
// restarted process, repeat exactly what the committed ones were made of.
func (r *Registry) SameAsCommitted(plugin string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.entries[plugin]
	return e != nil && e.loaded && slices.Equal(e.pending.wire, e.committed.wire)
}

// Commit moves plugin's pending registrations into the shared tables, in the
// order they were made; from then on its new registrations are committed at
// once. Plugins committed earlier keep their tool names and CLI commands.
func (r *Registry) Commit(plugin string) {
	r.mu.Lock()
	e := r.entryLocked(plugin)
	pend := e.pending
	e.pending = set{}
	r.mu.Unlock()

	var kept set
	var unregs []func()
	for _, tr := range pend.tools {
		if err := r.tools.Register(tr.tool, tr.override); err != nil {
			var se *tools.ShadowError
			if errors.As(err, &se) {
				r.warn("plugin %s tried to shadow tool '%s' (registered by %s) without override=True; skipped", plugin, tr.tool.Name, se.Existing)
			} else {
				r.warn("plugin %s: %v", plugin, err)
			}
			continue
		}
		if prob := tr.tool.SchemaProblem(); prob != "" {
			r.warn("plugin %s: tool '%s' has a parameters schema hermes cannot check (%s); its arguments are passed on unchecked", plugin, tr.tool.Name, prob)
		}
		name, src := tr.tool.Name, tr.tool.Source
		unregs = append(unregs, func() { r.tools.Remove(name, src) })
		kept.tools = append(kept.tools, tr)
	}
	for _, h := range pend.hooks {
		// An unknown hook name is warned about by the dispatcher, in upstream's words.
		h.unregister = r.hooks.Register(h.Hook, hooks.Callback{PluginID: plugin, Name: h.Callback, Invoke: h.Invoke, InvokeEncoded: h.InvokeEncoded})
		unregs = append(unregs, h.unregister)
		kept.hooks = append(kept.hooks, h)
	}
	var clashes []string
	r.mu.Lock()
	for _, c := range pend.commands {
		prev := r.commands[c.Name]
		r.commands[c.Name] = c
		unregs = append(unregs, func() {
			r.mu.Lock()
			if r.commands[c.Name] == c {
				if prev != nil {
					r.commands[c.Name] = prev
				} else {
					delete(r.commands, c.Name)
				}
			}
			r.mu.Unlock()
		})
		kept.commands = append(kept.commands, c)
	}
	for _, c := range pend.cliCommands {
		if other, ok := r.cliCmds[c.Name]; ok && other.Plugin != plugin {
			clashes = append(clashes, fmt.Sprintf("plugin %s: CLI command '%s' is already provided by plugin %s; skipped", plugin, c.Name, other.Plugin))
			continue
		}
		r.cliCmds[c.Name] = c
		unregs = append(unregs, func() {
			r.mu.Lock()
			if r.cliCmds[c.Name] == c {
				delete(r.cliCmds, c.Name)
			}
			r.mu.Unlock()
		})
		kept.cliCommands = append(kept.cliCommands, c)
	}
	for _, s := range pend.subs {
		r.subs[s.Event] = append(r.subs[s.Event], s)
		unregs = append(unregs, func() { r.unsubscribe(s) })
	}
	r.mu.Unlock()
	for _, msg := range clashes {
		r.warn("%s", msg)
	}
	if n := int32(len(pend.middleware)); n > 0 {
		r.mwCount.Add(n)
		unregs = append(unregs, func() { r.mwCount.Add(-n) })
	}
	kept.skills = pend.skills
	kept.middleware = pend.middleware
	kept.sections = pend.sections
	kept.other = pend.other
	kept.providers = pend.providers
	kept.subs = pend.subs
	kept.redactions = pend.redactions
	kept.ctxRefs = pend.ctxRefs
	kept.auxTasks = pend.auxTasks
	kept.platforms = pend.platforms
	kept.transports = pend.transports
	kept.wire = pend.wire

	r.mu.Lock()
	e.committed.merge(kept)
	e.unregs = append(e.unregs, unregs...)
	e.loaded = true
	e.live = true
	r.mu.Unlock()
}

func (r *Registry) unsubscribe(s *Subscription) {
	s.cancelled.Store(true)
	r.mu.Lock()
	defer r.mu.Unlock()
	list := r.subs[s.Event]
	for i, x := range list {
		if x == s {
			r.subs[s.Event] = append(list[:i:i], list[i+1:]...)
			break
		}
	}
}

// Withdraw undoes every committed registration of plugin, newest first.
func (r *Registry) Withdraw(plugin string) {
	r.mu.Lock()
	e := r.entries[plugin]
	if e == nil {
		r.mu.Unlock()
		return
	}
	unregs := e.unregs
	e.unregs = nil
	e.committed = set{}
	e.loaded, e.live = false, false
	r.mu.Unlock()
	for i := len(unregs) - 1; i >= 0; i-- {
		unregs[i]()
	}
}

// NormalizeCommandName is upstream's slash command name rule: lower case,
// no leading '/', spaces as '-'.
func NormalizeCommandName(name string) string {
	return strings.ReplaceAll(strings.TrimLeft(strings.TrimSpace(strings.ToLower(name)), "/"), " ", "-")
}

// Dispose withdraws one registration (PluginRegistration.dispose()): a tool
// by name, a hook callback by its handle, a slash or CLI command by name.
// Disposing what is already gone does nothing, as upstream's dispose is
// idempotent.
func (r *Registry) Dispose(plugin, kind, key, handle string) error {
	switch kind {
	case "tool":
		r.mu.Lock()
		if e := r.entries[plugin]; e != nil {
			drop := func(t toolReg) bool { return t.tool.Name == key }
			e.pending.tools = slices.DeleteFunc(e.pending.tools, drop)
			e.committed.tools = slices.DeleteFunc(e.committed.tools, drop)
		}
		r.mu.Unlock()
		r.tools.Remove(key, plugin)
		return nil
	case "hook":
		if handle == "" {
			return errors.New("dispose of a hook registration needs its handle; this one stays active until the plugin unloads")
		}
		var gone []*Hook
		r.mu.Lock()
		if e := r.entries[plugin]; e != nil {
			match := func(h *Hook) bool {
				if h.Hook == key && h.Handle == handle {
					gone = append(gone, h)
					return true
				}
				return false
			}
			e.pending.hooks = slices.DeleteFunc(e.pending.hooks, match)
			e.committed.hooks = slices.DeleteFunc(e.committed.hooks, match)
		}
		r.mu.Unlock()
		for _, h := range gone {
			if h.unregister != nil {
				h.unregister()
			}
		}
		return nil
	case "command":
		name := NormalizeCommandName(key)
		r.mu.Lock()
		if e := r.entries[plugin]; e != nil {
			drop := func(c *Command) bool { return c.Name == name }
			e.pending.commands = slices.DeleteFunc(e.pending.commands, drop)
			e.committed.commands = slices.DeleteFunc(e.committed.commands, drop)
		}
		if c := r.commands[name]; c != nil && c.Plugin == plugin {
			delete(r.commands, name)
		}
		r.mu.Unlock()
		return nil
	case "platform":
		r.disposePlatform(plugin, key)
		return nil
	case "cli_command":
		r.mu.Lock()
		if e := r.entries[plugin]; e != nil {
			drop := func(c *CLICommand) bool { return c.Name == key }
			e.pending.cliCommands = slices.DeleteFunc(e.pending.cliCommands, drop)
			e.committed.cliCommands = slices.DeleteFunc(e.committed.cliCommands, drop)
		}
		if c := r.cliCmds[key]; c != nil && c.Plugin == plugin {
			delete(r.cliCmds, key)
		}
		r.mu.Unlock()
		return nil
	}
	return fmt.Errorf("dispose of a %s registration is not supported yet; it stays active until the plugin unloads", kind)
}

// ---- views ---------------------------------------------------------------------------

// Commands returns the slash commands, sorted by name.
func (r *Registry) Commands() []*Command {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*Command, 0, len(r.commands))
	for _, c := range r.commands {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// CLICommand returns the plugin CLI command called name.
func (r *Registry) CLICommand(name string) (*CLICommand, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.cliCmds[name]
	return c, ok
}

// CLICommands returns every plugin CLI command, sorted by name.
func (r *Registry) CLICommands() []*CLICommand {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*CLICommand, 0, len(r.cliCmds))
	for _, c := range r.cliCmds {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// committed calls fn with the committed set of every loaded plugin, in plugin
// key order, under the registry's lock.
func (r *Registry) committed(fn func(plugin string, s *set)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range r.keys {
		if e := r.entries[k]; e.loaded {
			fn(k, &e.committed)
		}
	}
}

// Middlewares returns the committed callbacks of kind, in plugin key order.
func (r *Registry) Middlewares(kind MiddlewareKind) []*Middleware {
	if r.mwCount.Load() == 0 {
		return nil
	}
	var out []*Middleware
	r.committed(func(_ string, s *set) {
		for _, mw := range s.middleware {
			if mw.Kind == kind {
				out = append(out, mw)
			}
		}
	})
	return out
}

// HasMiddleware reports whether any loaded plugin registered middleware of kind.
func (r *Registry) HasMiddleware(kind MiddlewareKind) bool { return len(r.Middlewares(kind)) > 0 }

// Skills returns every committed skill, in plugin key order.
func (r *Registry) Skills() []Skill {
	var out []Skill
	r.committed(func(_ string, s *set) { out = append(out, s.skills...) })
	return out
}

// Providers returns what loaded plugins offered for the slot kind, in plugin
// key order.
func (r *Registry) Providers(kind ProviderKind) []Provider {
	var out []Provider
	r.committed(func(_ string, s *set) {
		for _, p := range s.providers {
			if p.Kind == kind {
				out = append(out, p)
			}
		}
	})
	return out
}

// PromptSectionOwner returns the plugin holding section id, pending or
// committed ("" when none).
func (r *Registry) PromptSectionOwner(id string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range r.keys {
		e := r.entries[k]
		for _, list := range [][]*PromptSection{e.committed.sections, e.pending.sections} {
			for _, s := range list {
				if s.ID == id {
					return k
				}
			}
		}
	}
	return ""
}

// Subscribers returns the committed subscriptions to a qualified event, and
// those plugin made earlier in its own pending register() (a plugin hears its
// own event at once, as upstream's subscriptions are live at once).
func (r *Registry) Subscribers(event, plugin string) []*Subscription {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]*Subscription(nil), r.subs[event]...)
	if e := r.entries[plugin]; e != nil {
		for _, s := range e.pending.subs {
			if s.Event == event {
				out = append(out, s)
			}
		}
	}
	return out
}
