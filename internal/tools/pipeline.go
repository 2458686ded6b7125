package tools

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hermes-go/hermes/internal/clock"
	"github.com/hermes-go/hermes/internal/hooks"
)

// HookFirer is the part of the hook dispatcher the pipeline needs.
type HookFirer interface {
	Fire(ctx context.Context, hook hooks.Name, payload map[string]any) []any
	Has(hook hooks.Name) bool
}

// Lookup finds tools by name: all the pipeline needs of a registry.
type Lookup interface {
	Get(name string) (*Tool, bool)
}

// ApprovalRequest asks a human whether a tool call may run.
type ApprovalRequest struct {
	ToolName   string
	Args       map[string]any
	Message    string // why approval is needed (from the plugin's directive)
	RuleKey    string
	ToolCallID string
	TurnID     string
	Origin     Origin // who asked for the call
}

// OriginKind says who asked for a tool call.
type OriginKind uint8

const (
	FromModel     OriginKind = iota // the model, in a turn (the zero value)
	FromUser                        // the user, on the command line (hermes tools call)
	FromPlugin                      // a plugin, through ctx.dispatch_tool
	FromMCPClient                   // another program's MCP client (hermes mcp serve)
)

// Origin is who asked for a tool call, for the approval prompt: a plugin's
// request is shown as the plugin's and is never offered "always".
type Origin struct {
	Kind   OriginKind
	Plugin string // the plugin's key, for FromPlugin
	Facade string // for FromPlugin, the ctx call it made (default ctx.dispatch_tool)
}

// ByPlugin reports whether a plugin asked for the call.
func (o Origin) ByPlugin() bool { return o.Kind == FromPlugin }

// String says who asked, for a prompt ("the model", "plugin `x` through
// ctx.dispatch_tool"). The plugin's key is as it came: sanitise before printing.
func (o Origin) String() string {
	switch o.Kind {
	case FromUser:
		return "you (hermes tools call)"
	case FromPlugin:
		facade := o.Facade
		if facade == "" {
			facade = "ctx.dispatch_tool"
		}
		return "plugin `" + o.Plugin + "` through " + facade
	case FromMCPClient:
		return "an MCP client (hermes mcp serve)"
	}
	return "the model"
}

type originKey struct{}

// WithOrigin returns ctx carrying o, the origin of the tool call running under
// it: how a tool handler (the terminal's approval) learns who asked.
func WithOrigin(ctx context.Context, o Origin) context.Context {
	return context.WithValue(ctx, originKey{}, o)
}

// OriginOf is the origin WithOrigin put on ctx (the model when none).
func OriginOf(ctx context.Context) Origin {
	o, _ := ctx.Value(originKey{}).(Origin)
	return o
}

// ApprovalChoice is a human's answer to an approval request, as upstream names it.
type ApprovalChoice string

const (
	ChoiceOnce    ApprovalChoice = "once"    // this call
	ChoiceSession ApprovalChoice = "session" // and the same again until hermes exits
	ChoiceAlways  ApprovalChoice = "always"  // and from now on (saved to command_allowlist)
	ChoiceDeny    ApprovalChoice = "deny"
)

// Approves reports whether c lets the call run; any other answer is a refusal.
func (c ApprovalChoice) Approves() bool {
	return c == ChoiceOnce || c == ChoiceSession || c == ChoiceAlways
}

// Approver answers approval requests. A nil Approver means nobody can be asked,
// and approval-gated calls are blocked.
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest) (ApprovalChoice, error)
}

// Call is one tool invocation.
type Call struct {
	Name       string
	Args       map[string]any
	TaskID     string
	SessionID  string
	ToolCallID string
	TurnID     string
	Origin     Origin // who asked: the model (zero), the user, a plugin

	// Set when the core has prepared the call (see preparer).
	tool  *Tool
	trace []any // what the tool_request middleware reported, for pre_tool_call
}

// Status is how a tool call ended, in the words hooks, session records and
// --json output use.
type Status string

const (
	StatusOK      Status = "ok"
	StatusError   Status = "error"   // the call failed or could not run
	StatusBlocked Status = "blocked" // a guard or the approval refused it
)

// Outcome is what a call produced.
type Outcome struct {
	Result       string // JSON string handed to the model (after transforms)
	Status       Status
	ErrorType    string         // set when Status != StatusOK
	ErrorMessage string         // set when Status != StatusOK
	Args         map[string]any // the arguments actually used (after modify directives)
	Duration     time.Duration
}

// Middleware is the plugin middleware around tool calls (upstream §11.4): the
// tool_request chain may rewrite the arguments before pre_tool_call sees them, and
// the tool_execution chain wraps the handler.
type Middleware interface {
	ToolRequest(ctx context.Context, c Call, args map[string]any) (map[string]any, []any)
	ToolExecution(ctx context.Context, c Call, args map[string]any, run func(ctx context.Context, args map[string]any) (string, error)) (string, error)
}

// Executor runs one tool call. It never returns a Go error for tool-level
// failures: those become an error JSON result, as the model sees them.
type Executor interface {
	Execute(ctx context.Context, c Call) Outcome
}

// ExecutorFunc lets a function be an Executor.
type ExecutorFunc func(ctx context.Context, c Call) Outcome

// Execute calls f.
func (f ExecutorFunc) Execute(ctx context.Context, c Call) Outcome { return f(ctx, c) }

// preparer is an Executor that resolves a call in a step of its own. Hooked
// prepares first when the executor it wraps can, so its guards see the call as it
// will run (the arguments rewritten by the tool_request middleware, with its
// trace) and a call that cannot run at all fails before any guard is asked.
type preparer interface {
	Executor
	// prepare returns c ready for Execute, or false and the outcome of a call
	// that cannot run.
	prepare(ctx context.Context, c Call) (Call, Outcome, bool)
}

// Pipeline runs tool calls: the core execution (lookup, argument checks,
// middleware, handler) wrapped in the tool hooks (Hooked).
type Pipeline struct {
	Registry   Lookup
	Hooks      HookFirer  // may be nil
	Approver   Approver   // may be nil
	Middleware Middleware // may be nil
	// Enabled is the tool set the user chose (the enabled toolsets): a tool it
	// refuses is an unknown tool to every caller, the model and ctx.dispatch_tool
	// alike, as if it were not registered. nil enables every tool.
	Enabled func(*Tool) bool
}

// Allows reports whether t is in the tool set the pipeline runs.
func (p *Pipeline) Allows(t *Tool) bool { return p.Enabled == nil || p.Enabled(t) }

// Run executes c through the hooks and the core.
func (p *Pipeline) Run(ctx context.Context, c Call) Outcome {
	if p.Hooks == nil {
		return (*core)(p).Execute(ctx, c)
	}
	return Hooked{Next: (*core)(p), Hooks: p.Hooks, Approver: p.Approver}.Execute(ctx, c)
}

// core is the pipeline without its hooks. It is a view of the Pipeline rather
// than a struct of its own so that assembling the stack for a call allocates
// nothing.
type core Pipeline

// prepare looks the tool up, checks how deeply the arguments nest and runs the
// tool_request middleware: what must happen before pre_tool_call.
func (p *core) prepare(ctx context.Context, c Call) (Call, Outcome, bool) {
	if c.Args == nil {
		c.Args = map[string]any{}
	}
	tool, ok := p.Registry.Get(c.Name)
	if ok && !(*Pipeline)(p).Allows(tool) {
		// Hidden from the model, so refused the same way: a model (or a plugin) that
		// names a tool outside the chosen toolsets must not get to run it.
		ok = false
	}
	if !ok {
		msg := "Unknown tool: " + c.Name
		return c, Outcome{Result: ErrorResult(msg, nil), Status: StatusError, ErrorType: "unknown_tool", ErrorMessage: msg, Args: c.Args}, false
	}
	if depthOver(c.Args, MaxArgsDepth) {
		// Python plugins decode every call (and every hook payload carrying the
		// arguments) with a recursion limit of ~1000 levels; deeper arguments would
		// crash the plugin processes, hooks included, instead of failing one call.
		// The post_tool_call hooks get no arguments either, for the same reason.
		msg := fmt.Sprintf("Invalid arguments for %s: nested more than %d levels deep", c.Name, MaxArgsDepth)
		return c, Outcome{Result: ErrorResult(msg, nil), Status: StatusError, ErrorType: "invalid_arguments", ErrorMessage: msg, Args: map[string]any{}}, false
	}
	c.tool, c.trace = tool, []any{}
	if p.Middleware != nil {
		args, t := p.Middleware.ToolRequest(ctx, c, c.Args)
		c.Args, c.trace = args, append(c.trace, t...)
	}
	return c, Outcome{}, true
}

// Execute runs c, preparing it first unless that was done.
func (p *core) Execute(ctx context.Context, c Call) Outcome {
	start := clock.Now()
	out := p.execute(ctx, c)
	out.Duration = time.Since(start)
	return out
}

func (p *core) execute(ctx context.Context, c Call) Outcome {
	if c.tool == nil {
		var out Outcome
		var ok bool
		if c, out, ok = p.prepare(ctx, c); !ok {
			return out
		}
	}
	tool, args := c.tool, c.Args
	if ok, err := tool.Available(ctx); !ok {
		msg := fmt.Sprintf("Tool %s is not available right now (its availability check failed)", c.Name)
		if err != nil {
			msg = fmt.Sprintf("Tool %s is not available right now: its check_fn raised %v", c.Name, err)
		}
		return Outcome{Result: ErrorResult(msg, nil), Status: StatusError, ErrorType: "unavailable", ErrorMessage: msg, Args: args}
	}
	if err := tool.ValidateArgs(args); err != nil {
		msg := fmt.Sprintf("Invalid arguments for %s: %v", c.Name, err)
		return Outcome{Result: ErrorResult(msg, nil), Status: StatusError, ErrorType: "invalid_arguments", ErrorMessage: msg, Args: args}
	}
	if c.Origin != OriginOf(ctx) {
		// Set whenever it differs, so a call never inherits the origin of the
		// call it runs under (a plugin's tool that the model called).
		ctx = WithOrigin(ctx, c.Origin)
	}
	kwargs := map[string]any{"task_id": c.TaskID}
	if c.SessionID != "" {
		kwargs["session_id"] = c.SessionID
	}
	if c.ToolCallID != "" {
		kwargs["tool_call_id"] = c.ToolCallID
	}
	var res string
	var err error
	if p.Middleware != nil {
		res, err = p.Middleware.ToolExecution(ctx, c, args, func(ctx context.Context, a map[string]any) (string, error) {
			if a != nil {
				args = a
			}
			return tool.Handler(ctx, args, kwargs)
		})
	} else {
		res, err = tool.Handler(ctx, args, kwargs)
	}
	if err != nil {
		var te *ToolError
		if errors.As(err, &te) {
			return Outcome{Result: ErrorResult(te.Message, nil), Status: StatusError, ErrorType: te.Type, ErrorMessage: te.Message, Args: args}
		}
		msg := err.Error()
		return Outcome{Result: ErrorResult(msg, nil), Status: StatusError, ErrorType: "tool_error", ErrorMessage: msg, Args: args}
	}
	return Outcome{Result: res, Status: StatusOK, Args: args}
}

// ToolError is a handler failure with a type the hooks and the model can see.
type ToolError struct {
	Type    string // e.g. the plugin's exception class, "timeout"
	Message string // full text for the model, e.g. "Tool execution failed: KeyError: 'x'"
}

func (e *ToolError) Error() string { return e.Message }

// MaxArgsDepth is how deeply tool arguments may nest (objects and arrays).
const MaxArgsDepth = 512

// depthOver reports whether v nests objects and arrays more than limit levels deep.
func depthOver(v any, limit int) bool {
	if limit < 0 {
		return true
	}
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			if depthOver(e, limit-1) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if depthOver(e, limit-1) {
				return true
			}
		}
	}
	return false
}
