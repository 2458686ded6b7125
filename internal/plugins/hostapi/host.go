// Package hostapi serves the ctx.* call-backs plugins make into hermes: every
// protocol method is one row of the table in table.go, decoded once by a
// generic helper and served by a typed handler in the file of its facade
// (registrations, config, state, capabilities, dispatch_tool, events, the
// agent's facades, ...). In-process Go plugins reach the same handlers
// through LocalContext.
package hostapi

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/home"
	"github.com/hermes-go/hermes/internal/plugins/manifest"
	"github.com/hermes-go/hermes/internal/plugins/registry"
	"github.com/hermes-go/hermes/internal/plugins/runtime"
	"github.com/hermes-go/hermes/internal/tools"
)

// Caller is the plugin making ctx calls, as the plugin manager runs it.
type Caller interface {
	ID() string // the plugin key
	Manifest() *manifest.Manifest
	Bundled() bool // shipped with hermes: trusted for tools.override
	Python() bool  // runs through the Python bridge (stall reports ask it for its threads)
	// Call calls into the plugin's process; it fails while none runs.
	Call(ctx context.Context, method string, params any) (json.RawMessage, error)
	Process() *runtime.Process // nil while none runs
	// Restart stops the plugin's process for real and starts it again (a call it
	// did not answer in time is still running there).
	Restart(reason string)
	// Warnf reports a problem with what the plugin registered, in load order.
	Warnf(format string, args ...any)
	// WaitEarlierCommitted returns once the plugins before this one in load
	// order have committed their registrations (at once after the load).
	WaitEarlierCommitted(ctx context.Context)
}

// Directory answers questions about the other plugins.
type Directory interface {
	// HasPlugin reports whether a plugin is loaded and enabled (or loading), by key or name.
	HasPlugin(name string) bool
	// Loading reports whether key is a plugin of the load in progress.
	Loading(key string) bool
}

// ToolRunner runs a tool call through the whole pipeline (ctx.dispatch_tool).
type ToolRunner interface {
	Run(ctx context.Context, c tools.Call) tools.Outcome
}

// AgentServices are the facades only a running agent can serve.
type AgentServices interface {
	// InjectMessage hands text to the agent's conversation; ok=false when no
	// agent here takes messages.
	InjectMessage(text, role string) (accepted, ok bool)
	// CompleteLLM serves ctx.llm.complete / complete_structured (method
	// "complete" or "complete_structured"); ok=false when no model is configured.
	CompleteLLM(ctx context.Context, pluginID, method string, kwargs map[string]any) (res map[string]any, ok bool, err error)
}

// MCPCaller is the one MCP client's call path (internal/mcp), the same one the
// model's mcp__* tools use: same connection, trust gate and circuit breaker.
type MCPCaller interface {
	// CallTool calls tool on the configured server and returns the tool-result
	// JSON text the model's handler returns: {"result": ...} (with
	// "structuredContent" when the server gave it) or {"error": ...}. err is
	// for a call that never reached a result (unknown server, breaker open,
	// transport down, timeout) and reads as an error a model or plugin can act on.
	CallTool(ctx context.Context, server, tool string, args map[string]any, timeout time.Duration) (string, error)
}

// Options configure a Host.
type Options struct {
	Registry *registry.Registry
	Store    config.Store
	Home     home.Home
	Logger   *slog.Logger
	// Sink receives the plugin's ctx log records (see runtime.LineSink).
	Sink    runtime.LineSink
	Plugins Directory
	Tools   ToolRunner    // nil: dispatch_tool fails
	Agent   AgentServices // nil: inject_message and ctx.llm are unavailable
	MCP     MCPCaller     // nil: ctx.call_mcp answers that no MCP server is configured
	// Gateway is the gateway runner of this process (nil: none, ever):
	// ctx.platform_actions and inject_message's gateway mode.
	Gateway GatewayServices
	Stalls  *runtime.StallReporter
	// ToolCallTimeout is plugins.tool_call_timeout, read at each call.
	ToolCallTimeout func() time.Duration
	// Warn reports a problem that is no plugin's registration (a dropped event).
	Warn func(format string, args ...any)
}

// Host serves the ctx calls of every plugin of one manager.
type Host struct {
	opts   Options
	config *config.Snapshot // opts.Store for the read-only call-backs
	reg    *registry.Registry
	log    *slog.Logger
	events *eventBus
	nexts  nextTable
}

// New returns a host; Close it to deliver pending events.
func New(opts Options) *Host {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.ToolCallTimeout == nil {
		opts.ToolCallTimeout = func() time.Duration { return 0 }
	}
	if opts.Stalls == nil {
		opts.Stalls = &runtime.StallReporter{}
	}
	if opts.Warn == nil {
		opts.Warn = func(format string, args ...any) { opts.Logger.Warn(fmt.Sprintf(format, args...)) }
	}
	h := &Host{opts: opts, config: &config.Snapshot{Store: opts.Store}, reg: opts.Registry, log: opts.Logger}
	h.events = newEventBus(h)
	return h
}

// eventDrainTimeout bounds how long Close waits for pending event deliveries.
const eventDrainTimeout = 10 * time.Second

// Close delivers the events already emitted (bounded), then drops later ones.
func (h *Host) Close() { h.events.close(eventDrainTimeout) }

// Session is one plugin's side of the host.
type Session struct {
	h     *Host
	p     Caller
	cliIn cliInputSlot
}

// Session returns the ctx server of plugin p.
func (h *Host) Session(p Caller) *Session { return &Session{h: h, p: p} }
