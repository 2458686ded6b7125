// Package pluginsdk is the public Go SDK for hermes plugins. A Go plugin is a small
// program: it implements Register and calls Serve from main. hermes starts it as its
// own process (runtime: exec in plugin.yaml) and talks pkg/protocol with it.
//
//	func main() {
//		pluginsdk.Serve(pluginsdk.PluginFunc(func(ctx pluginsdk.Context) error {
//			return ctx.RegisterTool(pluginsdk.Tool{
//				Name: "shout", Toolset: "shout", Description: "Upper-cases text.",
//				Parameters: pluginsdk.Object(pluginsdk.Props{"text": pluginsdk.String("text to shout")}, "text"),
//				Handler: func(ctx context.Context, call pluginsdk.ToolCall) (string, error) {
//					return pluginsdk.JSON(map[string]any{"text": strings.ToUpper(call.String("text"))}), nil
//				},
//			})
//		}))
//	}
package pluginsdk

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"time"
)

// Plugin is what a Go plugin implements.
type Plugin interface {
	Register(ctx Context) error
}

// PluginFunc adapts a function to Plugin.
type PluginFunc func(ctx Context) error

// Register calls f.
func (f PluginFunc) Register(ctx Context) error { return f(ctx) }

// Context is the Go face of upstream's PluginContext: what a plugin can register and
// the host services it can use. The same interface serves compiled-in plugins (called
// in-process) and plugin programs (over the protocol).
type Context interface {
	PluginID() string
	ProfileName() string
	Manifest() map[string]any
	Logger() *slog.Logger

	RegisterTool(t Tool) error
	RegisterHook(hook string, fn HookFunc) error
	RegisterCommand(c Command) error
	RegisterCLICommand(c CLICommand) error
	Subscribe(event string, fn EventFunc) error
	OnUnload(fn func())

	GetConfig(key string, def any) (any, error)
	SetConfig(key string, value any) error
	StateGet(key string, def any) (any, error)
	StateSet(key string, value any) error
	HasPlugin(id string) bool
	HasCapability(id string) bool
	DispatchTool(ctx context.Context, name string, args map[string]any) (string, error)
	// CallMCP calls tool on the user's MCP server through hermes' MCP client
	// (upstream's ctx.call_mcp). The server must be listed in
	// plugins.entries.<id>.mcp_allowlist, else the error is *MCPNotAllowedError.
	// timeout is clamped to [1 s, 600 s] (zero: 30 s); a tool's failure, a
	// timeout or an unreachable server is an MCPResult with OK false.
	CallMCP(ctx context.Context, server, tool string, args map[string]any, timeout time.Duration) (MCPResult, error)
	Emit(event string, payload map[string]any) (int, error)
	// RegisterRedactionPatterns adds secret patterns (RE2, each starting with
	// at least 2 literal characters) to hermes' redaction; it returns how many
	// were accepted (the host warns about the others) and never fails.
	RegisterRedactionPatterns(patterns []string) int
	// RegisterAuxiliaryTask declares a task configured under auxiliary.<key>
	// (upstream's register_auxiliary_task).
	RegisterAuxiliaryTask(t AuxiliaryTask) error
	// RegisterContextReference makes @<Prefix>:<target> in a user's message
	// expand to what ref.Expand returns (upstream's register_context_reference).
	RegisterContextReference(ref ContextReference) error
	// RegisterMemoryProvider offers p as a memory provider (upstream's
	// register_memory_provider); memory.provider selects it by p.Name().
	RegisterMemoryProvider(p MemoryProvider) error
	// RegisterProvider offers a model provider profile (upstream's
	// register_provider); model.provider or --provider selects it by name.
	RegisterProvider(p ProviderProfile) error
	// RegisterContextEngine offers e as the context engine (upstream's
	// register_context_engine); context.engine selects it by e.Name().
	RegisterContextEngine(e ContextEngine) error
}

// ContextReference is a provider of @<Prefix>:<target> references. Expand
// returns the text to attach, ok false for "nothing to attach", or an error
// the user is shown as a context warning.
type ContextReference struct {
	Prefix      string
	Description string
	Expand      func(ctx context.Context, target string) (text string, ok bool, err error)
}

// AuxiliaryTask is a plugin's auxiliary task: a model choice the user sets
// under auxiliary.<Key> (Defaults are merged over provider auto, timeout 60).
type AuxiliaryTask struct {
	Key         string // letters, digits and _
	DisplayName string
	Description string
	Defaults    map[string]any
}

// Tool describes one tool the model can call.
type Tool struct {
	Name        string
	Toolset     string
	Description string         // what the model is told
	Parameters  map[string]any // JSON schema of the arguments
	Emoji       string
	RequiresEnv []string
	Override    bool // replace a built-in tool (needs the tools.override capability)
	Handler     ToolFunc
	// Check hides the tool while it returns false.
	Check func(ctx context.Context) bool
}

// ToolCall is one invocation: the arguments and the call's context.
type ToolCall struct {
	Args       map[string]any
	TaskID     string
	SessionID  string
	ToolCallID string
}

// String returns a string argument ("" when absent or not a string).
func (c ToolCall) String(name string) string {
	s, _ := c.Args[name].(string)
	return s
}

// ToolFunc runs a tool and returns its JSON result string.
type ToolFunc func(ctx context.Context, call ToolCall) (string, error)

// HookFunc observes or steers a lifecycle event; payload holds the hook's fields.
// Return nil for "no opinion", or the hook's directive (e.g. {"action": "block", ...}).
type HookFunc func(ctx context.Context, payload map[string]any) (any, error)

// EventFunc receives an inter-plugin event ("<plugin>:<event>").
type EventFunc func(ctx context.Context, event string, payload map[string]any) error

// Command is an in-session slash command (/name).
type Command struct {
	Name        string
	Description string
	ArgsHint    string
	Handler     func(ctx context.Context, rawArgs string) (string, error)
}

// CLICommand is run as `hermes <name> args...`; its output is the command's output.
type CLICommand struct {
	Name        string
	Help        string
	Description string
	Run         func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

// JSON encodes v as a tool result string (errors become an {"error": ...} result).
func JSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"error": "result not encodable: " + err.Error()})
	}
	return string(b)
}

// Error returns upstream's tool error shape: {"error": message}.
func Error(message string) string { return JSON(map[string]string{"error": message}) }

// Props maps property names to their schemas.
type Props map[string]map[string]any

// Object builds an object schema with the given properties and required names.
func Object(props Props, required ...string) map[string]any {
	p := map[string]any{}
	for k, v := range props {
		p[k] = v
	}
	s := map[string]any{"type": "object", "properties": p}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// String is a string property schema with a description.
func String(description string) map[string]any {
	return map[string]any{"type": "string", "description": description}
}

// Integer is an integer property schema with a description.
func Integer(description string) map[string]any {
	return map[string]any{"type": "integer", "description": description}
}
