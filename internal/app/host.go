package app

import (
	"context"
	"fmt"

	"github.com/hermes-go/hermes/internal/approval"
	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/home"
	"github.com/hermes-go/hermes/internal/install"
	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/memory"
	"github.com/hermes-go/hermes/internal/plugins"
	"github.com/hermes-go/hermes/internal/plugins/registry"
	"github.com/hermes-go/hermes/internal/redact"
	"github.com/hermes-go/hermes/internal/termsafe"
	"github.com/hermes-go/hermes/internal/tools"
)

// Host is the plugin host of one command: the plugins of its HERMES_HOME,
// discovered and gated (started by Load), the registry of what they
// registered, the tool pipeline over it and the agent services plugins reach.
type Host struct {
	f     *Factory
	home  home.Home
	m     *plugins.Manager
	agent *agentServices
	gw    *gatewayServices
	// Registry is what the plugins (and hermes' built-in tools) registered.
	Registry *registry.Registry
	// Approver is the interactive approval prompt, nil when nobody can answer it
	// (stdin or stderr is not a terminal).
	Approver *approval.Approver
	// toolApprover, when set, answers approvals instead of Approver: the
	// gateway's, which asks in the conversation.
	toolApprover tools.Approver
	warned       int // manager warnings already shown
	// tools is the tool set every call through Pipeline is held to.
	tools toolGate
	mcp   hostMCP
	// memory is the built-in memory and the selected provider (memory.go).
	memory *memory.Manager
}

// Host discovers the plugins of this command's HERMES_HOME (it starts none)
// and wires what consumes them.
func (f *Factory) Host(ctx context.Context) (*Host, error) {
	h, err := f.Home()
	if err != nil {
		return nil, err
	}
	if err := f.migrate(ctx); err != nil {
		return nil, err
	}
	doc := f.cfg.doc
	f.cfg.doc = nil
	f.Redactor().Disable(!redactSecrets(doc))
	host := &Host{f: f, home: h, agent: &agentServices{}, gw: &gatewayServices{}}
	host.tools.load = host.configToolsets
	opts := plugins.Options{
		Config:      doc,
		Home:        h,
		Env:         f.Env,
		Environ:     f.Environ,
		Cwd:         f.Cwd,
		HostVersion: f.Version,
		Builtins:    builtinPlugins(),
		Sink:        f.Logs().PluginLine,
		Logger:      f.Logger(),
		Agent:       host.agent,
		Tools:       hostTools{host},
		StallOut:    f.IO.Err,
		Clock:       f.Now,
		Reaper:      f.procs,
		MCP:         lazyMCP{host},
		Gateway:     host.gw,
	}
	if f.toolApprover != nil {
		host.toolApprover = f.toolApprover
	} else if host.Approver = newApprover(f.IO, h, f.Redactor().String, f.approvalRoute(doc, func() *registry.Registry { return host.Registry }),
		approvalTimeout(doc)); host.Approver != nil {
		opts.Approver = host.Approver
	}
	host.m = plugins.New(opts)
	if err := host.m.Discover(); err != nil {
		return nil, err
	}
	host.Registry = host.m.Registry()
	if host.Approver != nil {
		host.Approver.SetHooks(host.Registry.Hooks())
	}
	if err := host.registerBuiltinTools(); err != nil {
		return nil, err
	}
	if err := host.newMemory(); err != nil {
		return nil, err
	}
	host.agent.setLLM(host.lazyPluginLLM())
	host.FlushWarnings()
	return host, nil
}

// WithHost discovers the plugins, loads the enabled ones, runs fn, and always
// stops every plugin process before returning.
func (f *Factory) WithHost(ctx context.Context, fn func(h *Host) error) error {
	h, err := f.Host(ctx)
	if err != nil {
		return err
	}
	defer h.Close()
	if err := h.Load(ctx); err != nil {
		return err
	}
	return fn(h)
}

// Load starts every plugin the gate lets through and shows what went wrong:
// the warnings raised while loading, and each plugin that failed.
func (h *Host) Load(ctx context.Context) error {
	if err := h.LoadQuietly(ctx); err != nil {
		return err
	}
	for _, p := range h.m.Plugins() {
		if e := p.ErrorText(); e != "" && p.Decision.Starts() {
			fmt.Fprintf(h.f.IO.Err, "plugin %s failed to load: %s\n", termsafe.Line(p.Key), termsafe.Text(e))
		}
	}
	return nil
}

// LoadQuietly is Load for a command that reports failed plugins itself.
func (h *Host) LoadQuietly(ctx context.Context) error {
	if err := h.m.Load(ctx, nil); err != nil {
		return err
	}
	h.f.Redactor().Set(redact.New(h.Registry.RedactionPatterns()))
	h.FlushWarnings()
	return nil
}

// Redact masks secrets in text this command shows (a tool's result, an error).
func (h *Host) Redact(s string) string { return h.f.Redactor().String(s) }

// redactSecrets reads security.redact_secrets (default on; yes/no as YAML 1.1).
func redactSecrets(doc *config.Doc) bool {
	if doc == nil {
		return true
	}
	v, ok := doc.Get("security.redact_secrets")
	if !ok {
		return true
	}
	b, ok := config.Bool(v)
	return !ok || b
}

// Settle waits until no plugin is being restarted after a crash or a
// timeout, so what is shown next is how that ended.
func (h *Host) Settle(ctx context.Context) { h.m.Settle(ctx) }

// FlushWarnings shows the manager's warnings not shown yet: discovery's, then
// those raised while loading (a tool name clash, a missing dependency, ...).
func (h *Host) FlushWarnings() {
	ws := h.m.Warnings()
	if h.warned > len(ws) {
		h.warned = 0
	}
	for _, w := range ws[h.warned:] {
		h.f.Warn(w)
	}
	h.warned = len(ws)
}

// Close stops every plugin process.
func (h *Host) Close() {
	h.closeMCP()
	h.m.Close(context.Background())
}

// Home is the HERMES_HOME the plugins belong to.
func (h *Host) Home() home.Home { return h.home }

// Store is config.yaml.
func (h *Host) Store() config.Store { return h.m.Store() }

// Plugins returns every discovered plugin, sorted by key.
func (h *Host) Plugins() []*plugins.Plugin { return h.m.Plugins() }

// Resolve finds a plugin by key, manifest name or unique leaf name.
func (h *Host) Resolve(name string) (*plugins.Plugin, error) { return h.m.Resolve(name) }

// InstallMetadata returns the install metadata files discovery already read, by
// path (nil: missing or unreadable), so a verb that shows them parses none twice.
func (h *Host) InstallMetadata() map[string]*install.Metadata { return h.m.InstallMetadata() }

// SafeMode reports whether HERMES_SAFE_MODE keeps every plugin from loading.
func (h *Host) SafeMode() bool { return h.m.SafeMode() }

// CachedToolNames lists the plugin tools known without starting a plugin (what
// they registered at their last load).
func (h *Host) CachedToolNames() []string { return h.m.CachedToolNames() }

// CachedCLICommands lists the plugin CLI commands known without starting a plugin.
func (h *Host) CachedCLICommands() ([]plugins.CachedCLICommand, []string) {
	return h.m.CachedCLICommands()
}

// Pipeline is the tool pipeline over the registry, with the approval prompt
// when a human can answer it, held to the command's tool set (toolsets.go).
func (h *Host) Pipeline() *tools.Pipeline {
	p := &tools.Pipeline{Registry: h.Registry.Tools(), Hooks: h.Registry.Hooks(), Middleware: h.Registry.ToolMiddleware(),
		Enabled: h.tools.allows}
	switch {
	case h.toolApprover != nil:
		p.Approver = h.toolApprover
	case h.Approver != nil:
		p.Approver = h.Approver
	}
	return p
}

// Chat makes a chat session the agent the plugins talk to: ctx.llm uses its
// model, ctx.inject_message reaches its conversation. The returned func ends
// that (inject_message is refused again).
func (h *Host) Chat(client llm.Client, cfg llm.Config, inject func(text, role string) bool) (end func()) {
	h.agent.setLLM(h.pluginLLM(client, cfg).Serve)
	h.agent.setInjector(inject)
	return func() { h.agent.setInjector(nil) }
}
