// Package registry holds what plugins registered, as typed handles the consumers
// (tool pipeline, agent, CLI, and next the gateway and MCP server) read: tools,
// hooks, slash commands, CLI commands, skills, middleware, system prompt
// sections, event subscriptions and provider slots.
//
// Each plugin's registrations are collected as pending while its register()
// runs and committed in load order; after that, a late registration (from a
// thread, an event) is committed at once. Consumers never see pending ones.
package registry

import (
	"context"
	"io"
	"sync/atomic"

	"github.com/hermes-go/hermes/internal/tools"
)

// Hook is one register_hook callback.
type Hook struct {
	Hook     string
	Callback string // the callback's name, for messages
	Handle   string // the plugin's handle (out-of-process callbacks), for dispose
	Invoke   func(ctx context.Context, payload map[string]any) (any, error)
	// InvokeEncoded is set for out-of-process callbacks (see hooks.Callback).
	InvokeEncoded func(ctx context.Context, payload []byte) (any, error)

	unregister func() // set by commit
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

// MiddlewareKind is one of the chains of upstream §11.4.
type MiddlewareKind string

// The middleware chains.
const (
	ToolRequest   MiddlewareKind = "tool_request"
	ToolExecution MiddlewareKind = "tool_execution"
	LLMRequest    MiddlewareKind = "llm_request"
	LLMExecution  MiddlewareKind = "llm_execution"
)

// Known reports whether k is a chain hermes runs.
func (k MiddlewareKind) Known() bool {
	switch k {
	case ToolRequest, ToolExecution, LLMRequest, LLMExecution:
		return true
	}
	return false
}

// Middleware is one register_middleware callback.
type Middleware struct {
	Kind   MiddlewareKind
	Plugin string
	// Invoke calls the callback with kwargs; next, when non-nil, is what the
	// callback's next_call runs (execution kinds only).
	Invoke func(ctx context.Context, kwargs map[string]any, next func(ctx context.Context, payload any) (any, error)) (any, error)
}

// PromptSection is one register_system_prompt_section.
type PromptSection struct {
	ID       string
	Plugin   string
	Content  string
	Render   func(ctx context.Context, info map[string]any) (string, error) // nil: Content is the text
	MaxChars int
}

// Subscription is one ctx.subscribe callback for "<plugin>:<event>".
type Subscription struct {
	Event   string
	Plugin  string
	Deliver func(ctx context.Context, event string, payload map[string]any) error

	cancelled atomic.Bool
}

// Cancelled reports whether the subscription was withdrawn (a queued delivery is dropped).
func (s *Subscription) Cancelled() bool { return s.cancelled.Load() }

// ProviderKind names a provider slot: the registrars whose objects hermes will
// select by config (memory.provider, context.engine, ...).
type ProviderKind string

// The provider slots.
const (
	MemoryProvider    ProviderKind = "memory_provider"
	ContextEngine     ProviderKind = "context_engine"
	ModelProvider     ProviderKind = "model_provider"
	ApprovalTransport ProviderKind = "approval_transport"
	Platform          ProviderKind = "platform"
)

// providerRegistrars maps upstream's registrar names to their slots.
var providerRegistrars = map[string]ProviderKind{
	"register_memory_provider":    MemoryProvider,
	"register_context_engine":     ContextEngine,
	"register_provider":           ModelProvider,
	"register_approval_transport": ApprovalTransport,
	"register_platform":           Platform,
}

// ProviderKindOf returns the slot of an upstream registrar, if it fills one.
func ProviderKindOf(registrar string) (ProviderKind, bool) {
	k, ok := providerRegistrars[registrar]
	return k, ok
}

// Provider is one object a plugin offered for a provider slot. Hermes records
// it; the consumer of the slot (the agent, the gateway) selects and calls it.
type Provider struct {
	Kind    ProviderKind
	Name    string
	Plugin  string
	Handle  string         // the plugin's handle for the object's callable, if any
	Details map[string]any // the registrar's simple keyword arguments
	// Conn reaches the plugin process holding the object, for slots the host
	// serves through it (context engines, memory providers); nil for
	// record-only slots.
	Conn PlatformConn
	// Bundled: offered by a plugin shipped with hermes; any other plugin's
	// offer of the same name replaces it (model providers).
	Bundled bool
}

// toolReg is a tool and whether it may replace one of another source.
type toolReg struct {
	tool     *tools.Tool
	override bool
}
