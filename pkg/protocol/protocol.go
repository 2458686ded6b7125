// Package protocol defines the wire contract between the hermes host and out-of-process
// plugins: JSON-RPC 2.0, one JSON object per line, in both directions, on two dedicated
// pipes (never the plugin's stdout, which stays free for print()).
//
// The host starts the plugin with the read end of the host→plugin pipe as file
// descriptor EnvFDIn and the write end of the plugin→host pipe as EnvFDOut, and with
// EnvMagicCookie set. The first exchange is MethodInitialize, which carries the
// protocol version; the host then calls MethodRegister, during which the plugin calls
// back the ctx.* methods to record what it registers.
package protocol

import (
	"encoding/json"
	"fmt"

	"github.com/hermes-go/hermes/internal/jsonx"
)

// Version is the protocol version both sides must agree on in MethodInitialize.
const Version = 1

// Environment variables the host sets for a plugin process.
const (
	EnvMagicCookie   = "HERMES_PLUGIN_MAGIC_COOKIE"
	MagicCookieValue = "hermes-plugin-v1-7d3f0b2a"
	EnvFDIn          = "HERMES_PLUGIN_FD_IN"  // the plugin reads host messages here
	EnvFDOut         = "HERMES_PLUGIN_FD_OUT" // the plugin writes its messages here
)

// DefaultMaxMessageBytes caps one protocol line; a bigger message fails the connection.
const DefaultMaxMessageBytes = 16 << 20

// Methods the host calls on a plugin.
const (
	MethodInitialize = "initialize"
	MethodRegister   = "register"
	MethodShutdown   = "shutdown"
	MethodPing       = "ping"
	MethodToolCall   = "tool.call"
	MethodHookCall   = "hook.call"
	MethodCommand    = "command.call"
	MethodCheck      = "check.call"
	MethodEvent      = "event.deliver"
	MethodCLIRun     = "cli.run"
	// MethodMiddlewareCall calls a register_middleware callback with kwargs; with a
	// next_token its next_call calls back MethodMiddlewareNext.
	MethodMiddlewareCall = "middleware.call"
	// MethodPromptSection renders a callable system prompt section.
	MethodPromptSection = "prompt_section.render"
	// MethodContextRefExpand asks a register_context_reference provider to
	// expand one `@prefix:target` ({"handle", "target"} → a string or null).
	MethodContextRefExpand = "context_ref.expand"
	MethodCancel           = "$/cancelRequest" // notification, both directions
)

// Methods a plugin calls on the host (the ctx facade).
const (
	MethodLog                = "log" // notification
	MethodRegisterTool       = "ctx.register_tool"
	MethodRegisterHook       = "ctx.register_hook"
	MethodRegisterCommand    = "ctx.register_command"
	MethodRegisterCLICommand = "ctx.register_cli_command"
	MethodRegisterSkill      = "ctx.register_skill"
	MethodRegisterMiddleware = "ctx.register_middleware"
	MethodRegisterOther      = "ctx.register_other" // registrars this host records but does not serve yet
	MethodGetConfig          = "ctx.get_config"
	MethodSetConfig          = "ctx.set_config"
	MethodStateGet           = "ctx.state_get"
	MethodStateSet           = "ctx.state_set"
	MethodHasPlugin          = "ctx.has_plugin"
	MethodHasCapability      = "ctx.has_capability"
	MethodDispatchTool       = "ctx.dispatch_tool"
	MethodEmit               = "ctx.emit"
	MethodSubscribe          = "ctx.subscribe"
	MethodOnUnload           = "ctx.on_unload"
	MethodFacade             = "ctx.facade" // llm, call_mcp, inject_message, platform_actions, ...
	MethodMiddlewareNext     = "ctx.middleware_next"
	// MethodCLIStdin reads one line of hermes' standard input for the plugin CLI
	// command running now (input() in a setup wizard); "" at end of input. Params:
	// CLIStdinParams (may be absent).
	MethodCLIStdin = "ctx.cli_stdin"
)

// CLIStdinParams are the params of MethodCLIStdin. Secret reads with the
// terminal's echo off (getpass), when hermes' standard input is a terminal.
type CLIStdinParams struct {
	Secret bool `json:"secret,omitempty"`
}

// Error codes. The standard JSON-RPC ones, then ours; the Python bridge maps ours to
// the exception classes upstream plugins expect (PermissionError, ValueError, ...).
const (
	CodeParseError      = -32700
	CodeInvalidRequest  = -32600
	CodeMethodNotFound  = -32601
	CodeInvalidParams   = -32602
	CodeInternal        = -32603
	CodeHandlerError    = -32000 // the plugin's handler raised; Data is HandlerErrorData
	CodePermission      = -32001 // maps to PermissionError
	CodeInvalidArgument = -32002 // maps to ValueError
	CodeNotAvailable    = -32003 // the host does not offer this API yet
	CodeCancelled       = -32004 // the caller gave up (timeout, interrupt)
	CodeNotFound        = -32005 // maps to LookupError / FileNotFoundError
	CodeTypeError       = -32006 // maps to TypeError
	CodeRuntimeError    = -32007 // maps to RuntimeError
)

// Message is one JSON-RPC 2.0 object: a request (Method+ID), a notification (Method, no
// ID) or a response (ID with Result or Error).
type Message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// Error is a JSON-RPC error object; it is also a Go error.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string { return e.Message }

// Errorf builds an *Error with a formatted message.
func Errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// HandlerErrorData describes an exception raised by plugin code.
type HandlerErrorData struct {
	Type      string `json:"type"`                // exception class, e.g. "KeyError"
	Traceback string `json:"traceback,omitempty"` // formatted traceback, for logs
	Module    string `json:"module,omitempty"`    // ModuleNotFoundError: the missing module
}

// PluginInfo tells a plugin process who it is.
type PluginInfo struct {
	ID     string `json:"id"` // registry key: manifest name or "<category>/<name>"
	Name   string `json:"name"`
	Dir    string `json:"dir"`
	Source string `json:"source"` // bundled | user | project | entrypoint
	Kind   string `json:"kind"`
	Module string `json:"module,omitempty"` // python: import name (entry points: module path)
	// Category is the provider sub-category the plugin was found in (memory,
	// context_engine, model-providers); "" for a general plugin.
	Category string         `json:"category,omitempty"`
	Manifest map[string]any `json:"manifest"`
}

// InitializeParams is the host's half of the handshake.
type InitializeParams struct {
	ProtocolVersion int        `json:"protocol_version"`
	HostVersion     string     `json:"host_version"`
	Plugin          PluginInfo `json:"plugin"`
	HermesHome      string     `json:"hermes_home"`
	ProfileName     string     `json:"profile_name"`
}

// RegisterParams are the params of MethodRegister. Entry empty runs the plugin's
// register(ctx); RegisterEntryTools runs only its tools module's
// register_tools(ctx) (a bundled platform plugin whose platform is loaded later,
// by a gateway, but whose tools the CLI must see now). Plugins that are not
// Python receive it empty.
type RegisterParams struct {
	Entry string `json:"entry,omitempty"`
}

// RegisterEntryTools asks a Python plugin for the registrations of its tools.py only.
const RegisterEntryTools = "tools"

// InitializeResult is the plugin's half of the handshake.
type InitializeResult struct {
	ProtocolVersion int    `json:"protocol_version"`
	Runtime         string `json:"runtime"`                   // "python", "go", ...
	RuntimeVersion  string `json:"runtime_version,omitempty"` // e.g. "3.11.7"
	Executable      string `json:"executable,omitempty"`      // the interpreter actually running
}

// ToolCallParams invokes a registered tool handler: handler(args, **kwargs).
type ToolCallParams struct {
	Handle string         `json:"handle"`
	Args   map[string]any `json:"args"`
	Kwargs map[string]any `json:"kwargs,omitempty"`
	// DispatchDepth: how many ctx.dispatch_tool calls this call runs under (0: the
	// model or the user called it). The plugin passes it back in
	// DispatchToolParams.Depth when the handler dispatches a tool.
	DispatchDepth int `json:"dispatch_depth,omitempty"`
}

// RawParams are params the caller already encoded as one valid JSON object; the
// connection sends them as they are (a hook payload encoded once for every plugin).
type RawParams []byte

// HookCallParams invokes a hook callback with the hook's payload as keyword arguments.
type HookCallParams struct {
	Handle string         `json:"handle"`
	Hook   string         `json:"hook"`
	Kwargs map[string]any `json:"kwargs"`
}

// CommandCallParams invokes a slash-command handler: handler(raw_args).
type CommandCallParams struct {
	Handle  string `json:"handle"`
	RawArgs string `json:"raw_args"`
}

// CheckCallParams invokes a zero-argument availability check (check_fn).
type CheckCallParams struct {
	Handle string `json:"handle"`
}

// EventParams delivers an event-bus message to a subscriber.
type EventParams struct {
	Handle  string         `json:"handle"`
	Event   string         `json:"event"`
	Payload map[string]any `json:"payload"`
}

// CLIRunParams runs a plugin CLI command (`hermes <name> ...`).
type CLIRunParams struct {
	Name          string   `json:"name"`
	Prog          string   `json:"prog"`
	Argv          []string `json:"argv"`
	SetupHandle   string   `json:"setup_handle,omitempty"`
	HandlerHandle string   `json:"handler_handle,omitempty"`
	Help          string   `json:"help,omitempty"`
	Description   string   `json:"description,omitempty"`
}

// CLIRunResult is the exit code of a plugin CLI command.
type CLIRunResult struct {
	ExitCode int `json:"exit_code"`
}

// CancelParams names the request id to cancel.
type CancelParams struct {
	ID json.RawMessage `json:"id"`
}

// LogParams is a log record from the plugin.
type LogParams struct {
	Level   string `json:"level"` // debug | info | warning | error
	Message string `json:"message"`
	Logger  string `json:"logger,omitempty"`
}

// RegisterToolParams mirrors ctx.register_tool.
type RegisterToolParams struct {
	Name        string         `json:"name"`
	Toolset     string         `json:"toolset"`
	Schema      map[string]any `json:"schema"`
	Handle      string         `json:"handle"`
	CheckHandle string         `json:"check_handle,omitempty"`
	RequiresEnv []string       `json:"requires_env,omitempty"`
	IsAsync     bool           `json:"is_async,omitempty"`
	Description string         `json:"description,omitempty"`
	Emoji       string         `json:"emoji,omitempty"`
	Override    bool           `json:"override,omitempty"`
}

// RegisterHookParams mirrors ctx.register_hook.
type RegisterHookParams struct {
	Hook     string `json:"hook"`
	Handle   string `json:"handle"`
	Callback string `json:"callback,omitempty"` // qualified function name, for messages
}

// RegisterCommandParams mirrors ctx.register_command.
type RegisterCommandParams struct {
	Name         string `json:"name"`
	Handle       string `json:"handle"`
	Description  string `json:"description,omitempty"`
	ArgsHint     string `json:"args_hint,omitempty"`
	ArgumentMode string `json:"argument_mode,omitempty"`
	IsAsync      bool   `json:"is_async,omitempty"`
}

// RegisterCLICommandParams mirrors ctx.register_cli_command.
type RegisterCLICommandParams struct {
	Name          string `json:"name"`
	Help          string `json:"help,omitempty"`
	Description   string `json:"description,omitempty"`
	SetupHandle   string `json:"setup_handle,omitempty"`
	HandlerHandle string `json:"handler_handle,omitempty"`
}

// RegisterSkillParams mirrors ctx.register_skill.
type RegisterSkillParams struct {
	Name        string         `json:"name"`
	Path        string         `json:"path"`
	Description string         `json:"description,omitempty"`
	Frontmatter map[string]any `json:"frontmatter,omitempty"`
}

// RegisterMiddlewareParams mirrors ctx.register_middleware.
type RegisterMiddlewareParams struct {
	Kind   string `json:"kind"`
	Handle string `json:"handle"`
}

// RegisterOtherParams records a registrar this host accepts but does not serve yet
// (register_platform, register_approval_transport, providers, ...).
type RegisterOtherParams struct {
	Registrar string         `json:"registrar"`
	Name      string         `json:"name,omitempty"`
	Handle    string         `json:"handle,omitempty"`
	Details   map[string]any `json:"details,omitempty"`
}

// AuxiliaryTaskParams is the register_other request of
// register_auxiliary_task, as every SDK sends it.
func AuxiliaryTaskParams(key, displayName, description string, defaults map[string]any) RegisterOtherParams {
	details := map[string]any{"key": key, "display_name": displayName, "description": description}
	if defaults != nil {
		details["defaults"] = defaults
	}
	return RegisterOtherParams{Registrar: "register_auxiliary_task", Name: key, Details: details}
}

// RegisterResult answers a ctx.register_* call.
type RegisterResult struct {
	Registered bool   `json:"registered"`
	Warning    string `json:"warning,omitempty"`
}

// ConfigGetParams mirrors ctx.get_config(key, default).
type ConfigGetParams struct {
	Key     string `json:"key"`
	Default any    `json:"default,omitempty"`
}

// ConfigSetParams mirrors ctx.set_config(key, value).
type ConfigSetParams struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

// StateGetParams mirrors ctx.state.get(key, default).
type StateGetParams struct {
	Key     string `json:"key"`
	Default any    `json:"default,omitempty"`
}

// StateSetParams mirrors ctx.state.set(key, value).
type StateSetParams struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

// NameParams carries one name (has_plugin, has_capability).
type NameParams struct {
	Name string `json:"name"`
}

// DispatchToolParams mirrors ctx.dispatch_tool(tool_name, args, **kwargs).
type DispatchToolParams struct {
	ToolName string         `json:"tool_name"`
	Args     map[string]any `json:"args"`
	Kwargs   map[string]any `json:"kwargs,omitempty"`
	// Depth is the DispatchDepth of the tool call making this dispatch.
	Depth int `json:"depth,omitempty"`
}

// MaxDispatchDepth bounds nested ctx.dispatch_tool calls (a tool dispatching
// itself): deeper ones are refused with an error result instead of growing
// until the tool call timeout.
const MaxDispatchDepth = 32

// EmitParams mirrors ctx.emit(event, payload).
type EmitParams struct {
	Event   string         `json:"event"`
	Payload map[string]any `json:"payload,omitempty"`
}

// SubscribeParams mirrors ctx.subscribe(event, callback).
type SubscribeParams struct {
	Event  string `json:"event"`
	Handle string `json:"handle"`
}

// OnUnloadParams registers a cleanup callback run at shutdown.
type OnUnloadParams struct {
	Handle string `json:"handle"`
}

// FacadeParams calls a runtime facade by dotted name, e.g. "call_mcp", "llm.complete",
// "platform_actions.add_reaction", "inject_message".
type FacadeParams struct {
	Name   string         `json:"name"`
	Args   []any          `json:"args,omitempty"`
	Kwargs map[string]any `json:"kwargs,omitempty"`
}

// MethodDispose withdraws one registration (PluginRegistration.dispose()).
const MethodDispose = "ctx.dispose"

// PromptMark ends a line a plugin writes to its stdout as a prompt (the text
// before an input()): while a CLI command runs, hermes shows it without the
// line break, in order with the command's other output.
const PromptMark = "\x00hermes-prompt"

// DisposeParams names the registration to withdraw.
type DisposeParams struct {
	Kind string `json:"kind"`
	Key  string `json:"key"`
	// Handle tells apart several callbacks of one plugin on one hook.
	Handle string `json:"handle,omitempty"`
}

// MiddlewareNextParams is a middleware's next_call(payload).
type MiddlewareNextParams struct {
	Token   string `json:"token"`
	Payload any    `json:"payload"`
}

// EncodeHookCall encodes HookCallParams around a payload already encoded as a JSON
// object, without decoding it again.
func EncodeHookCall(handle, hook string, kwargs []byte) RawParams {
	b := make([]byte, 0, len(kwargs)+len(handle)+len(hook)+40)
	b = append(b, `{"handle":`...)
	b = jsonx.AppendString(b, handle)
	b = append(b, `,"hook":`...)
	b = jsonx.AppendString(b, hook)
	b = append(b, `,"kwargs":`...)
	b = append(b, kwargs...)
	return append(b, '}')
}

// Platform plugins (ctx.register_platform). The adapter object lives in the
// plugin's process; the host's gateway asks for it by the registered name.
const (
	// MethodPlatformStart creates the platform's adapter (adapter_factory with a
	// PlatformConfig) and connects it: PlatformStartParams → PlatformStartResult.
	MethodPlatformStart = "platform.start"
	// MethodPlatformSend is the adapter's send(): PlatformSendParams → PlatformSendResult.
	MethodPlatformSend = "platform.send"
	// MethodPlatformEdit is its edit_message(): PlatformEditParams → PlatformSendResult.
	MethodPlatformEdit = "platform.edit"
	// MethodPlatformTyping is its send_typing(): PlatformTypingParams.
	MethodPlatformTyping = "platform.typing"
	// MethodPlatformStop disconnects the adapter: PlatformNameParams.
	MethodPlatformStop = "platform.stop"

	// MethodPlatformEvent is the adapter's handle_message(event), a plugin →
	// host request: PlatformEventParams.
	MethodPlatformEvent = "ctx.platform_event"
	// MethodPlatformStatus is a notification of a connection change
	// (_mark_connected, _mark_disconnected, _set_fatal_error): PlatformStatusParams.
	MethodPlatformStatus = "ctx.platform_status"
)

// PlatformStartParams carry the PlatformConfig of platforms.<name>.
type PlatformStartParams struct {
	Name        string         `json:"name"`
	Extra       map[string]any `json:"extra,omitempty"`
	Token       string         `json:"token,omitempty"`
	APIKey      string         `json:"api_key,omitempty"`
	IsReconnect bool           `json:"is_reconnect,omitempty"`
	// FromEnv: enabled by its required_env rather than by config.yaml (the
	// entry's env_enablement_fn then seeds Extra).
	FromEnv bool `json:"from_env,omitempty"`
}

// PlatformStartResult says whether connect() succeeded.
type PlatformStartResult struct {
	Connected bool   `json:"connected"`
	ErrorCode string `json:"error_code,omitempty"`
	Error     string `json:"error,omitempty"`
	Retryable bool   `json:"retryable,omitempty"`
}

// PlatformSendParams is send(chat_id, content, reply_to, metadata).
type PlatformSendParams struct {
	Name     string         `json:"name"`
	ChatID   string         `json:"chat_id"`
	Content  string         `json:"content"`
	ReplyTo  string         `json:"reply_to,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// PlatformEditParams is edit_message(chat_id, message_id, content).
type PlatformEditParams struct {
	Name      string `json:"name"`
	ChatID    string `json:"chat_id"`
	MessageID string `json:"message_id"`
	Content   string `json:"content"`
}

// PlatformTypingParams is send_typing(chat_id, metadata).
type PlatformTypingParams struct {
	Name     string         `json:"name"`
	ChatID   string         `json:"chat_id"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// PlatformNameParams names one registered platform.
type PlatformNameParams struct {
	Name string `json:"name"`
}

// PlatformSendResult is upstream's SendResult.
type PlatformSendResult struct {
	Success    bool    `json:"success"`
	MessageID  string  `json:"message_id,omitempty"`
	Error      string  `json:"error,omitempty"`
	Retryable  bool    `json:"retryable,omitempty"`
	RetryAfter float64 `json:"retry_after,omitempty"` // seconds
}

// PlatformEventParams is one MessageEvent the adapter handed to handle_message.
type PlatformEventParams struct {
	Platform         string         `json:"platform"`
	Text             string         `json:"text"`
	MessageType      string         `json:"message_type,omitempty"` // MessageType value: text, photo, command, ...
	Source           PlatformSource `json:"source"`
	MessageID        string         `json:"message_id,omitempty"`
	ReplyToMessageID string         `json:"reply_to_message_id,omitempty"`
	Internal         bool           `json:"internal,omitempty"`
	Timestamp        float64        `json:"timestamp,omitempty"` // Unix seconds
}

// PlatformSource is the event's SessionSource (its platform is the event's).
type PlatformSource struct {
	ChatID    string `json:"chat_id"`
	ChatName  string `json:"chat_name,omitempty"`
	ChatType  string `json:"chat_type,omitempty"`
	UserID    string `json:"user_id,omitempty"`
	UserName  string `json:"user_name,omitempty"`
	ThreadID  string `json:"thread_id,omitempty"`
	ChatTopic string `json:"chat_topic,omitempty"`
	UserIDAlt string `json:"user_id_alt,omitempty"`
	ChatIDAlt string `json:"chat_id_alt,omitempty"`
	ScopeID   string `json:"scope_id,omitempty"`
	IsBot     bool   `json:"is_bot,omitempty"`
}

// PlatformStatusParams is a connection change the adapter reported.
type PlatformStatusParams struct {
	Platform  string `json:"platform"`
	Connected bool   `json:"connected"`
	ErrorCode string `json:"error_code,omitempty"`
	Error     string `json:"error,omitempty"`
	Retryable bool   `json:"retryable,omitempty"`
}

// Approval transports (ctx.register_approval_transport): the host asks the
// plugin's present(request) when security.approval.transport selects it.
const MethodApprovalPresent = "approval.present"

// ApprovalRequest is upstream's frozen ApprovalRequest, as the host builds it.
type ApprovalRequest struct {
	SchemaVersion  int      `json:"schema_version"`
	RequestID      string   `json:"request_id"`
	Digest         string   `json:"digest"`
	Command        string   `json:"command"`
	Description    string   `json:"description"`
	PatternKey     string   `json:"pattern_key"`
	PatternKeys    []string `json:"pattern_keys"`
	Surface        string   `json:"surface"` // presentation class: "cli" or "gateway"
	TimeoutSeconds int      `json:"timeout_seconds"`
	AllowedChoices []string `json:"allowed_choices"`
}

// ApprovalPresentParams calls the transport's present with request.
type ApprovalPresentParams struct {
	Handle  string          `json:"handle"`
	Request ApprovalRequest `json:"request"`
}

// ApprovalDecision is what present returned: an ApprovalDecision's fields, or
// Invalid naming the type it returned instead (a plain dict, None, ...).
type ApprovalDecision struct {
	RequestID     string `json:"request_id,omitempty"`
	RequestDigest string `json:"request_digest,omitempty"`
	Choice        string `json:"choice,omitempty"`
	Invalid       string `json:"invalid,omitempty"`
}

// Context engines (ctx.register_context_engine). The engine object lives in
// the plugin's process; the host calls its methods by the registered name.
const (
	// MethodContextEngineCall calls one method of a context engine
	// (update_model, update_from_response, should_compress, compress,
	// get_status, on_session_start, on_session_end, on_session_reset) with the
	// keyword arguments its signature takes: ContextEngineCallParams → the
	// method's result (compress: {"messages": [...]}).
	MethodContextEngineCall = "context_engine.call"
)

// ContextEngineCallParams name the engine, the method and its keyword arguments.
type ContextEngineCallParams struct {
	Name   string         `json:"name"`
	Method string         `json:"method"`
	Kwargs map[string]any `json:"kwargs,omitempty"`
}

// Model providers (register_provider(ProviderProfile(...))). The profile lives
// in the plugin's process; its fields travel once in the registration's
// details, and the hooks a subclass overrides (details "hooks") are called by
// name: prepare_messages(messages) → {"messages": [...]},
// build_extra_body(session_id, model) → {...}, fetch_models(api_key,
// base_url, timeout) → [ids] or null.
const MethodModelProviderCall = "model_provider.call"

// ModelProviderCallParams name the provider, the hook and its keyword arguments.
type ModelProviderCallParams struct {
	Name   string         `json:"name"`
	Method string         `json:"method"`
	Kwargs map[string]any `json:"kwargs,omitempty"`
}

// Memory providers (ctx.register_memory_provider). The provider object lives in
// the plugin's process; the host's agent calls its methods by these names, with
// MemoryParams: Provider is the registered name, Args the method's keyword
// arguments by upstream's names (the plugin passes those its method takes).
const (
	MethodMemoryInitialize        = "memory.initialize"          // initialize(session_id, **kwargs)
	MethodMemoryIsAvailable       = "memory.is_available"        // is_available() -> bool
	MethodMemorySystemPromptBlock = "memory.system_prompt_block" // system_prompt_block() -> str
	MethodMemoryPrefetch          = "memory.prefetch"            // prefetch(query, session_id) -> str
	MethodMemoryQueuePrefetch     = "memory.queue_prefetch"      // queue_prefetch(query, session_id)
	MethodMemorySyncTurn          = "memory.sync_turn"           // sync_turn(user_content, assistant_content, session_id, messages)
	MethodMemoryToolSchemas       = "memory.tool_schemas"        // get_tool_schemas() -> [schema]
	MethodMemoryToolCall          = "memory.tool_call"           // handle_tool_call(tool_name, args, **kw) -> str
	MethodMemoryTurnStart         = "memory.turn_start"          // on_turn_start(turn_number, message, **kw)
	MethodMemorySessionEnd        = "memory.session_end"         // on_session_end(messages)
	MethodMemorySessionSwitch     = "memory.session_switch"      // on_session_switch(new_session_id, parent_session_id, reset, rewound)
	MethodMemoryPreCompress       = "memory.pre_compress"        // on_pre_compress(messages) -> str
	MethodMemoryWrite             = "memory.memory_write"        // on_memory_write(action, target, content, metadata)
	MethodMemoryConfigSchema      = "memory.config_schema"       // get_config_schema() -> [field]
	MethodMemorySaveConfig        = "memory.save_config"         // save_config(values, hermes_home)
	MethodMemoryUnavailable       = "memory.unavailable_reason"  // unavailable_reason() -> str
	MethodMemoryShutdown          = "memory.shutdown"            // shutdown()
	// MethodMemoryAfterTurn is sync_turn then queue_prefetch in one round trip,
	// for a provider that announced it ("after_turn" in its registration's
	// details): args {"sync_turn": {...}, "queue_prefetch": {...}} → each
	// method's exception as "Type: message", or null.
	MethodMemoryAfterTurn = "memory.after_turn"
)

// MemoryParams address one call to a memory provider.
type MemoryParams struct {
	Provider string         `json:"provider"`
	Args     map[string]any `json:"args,omitempty"`
}
