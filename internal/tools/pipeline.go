package tools

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hermes-go/hermes/internal/hooks"
)

// HookFirer is the part of the hook dispatcher the pipeline needs.
type HookFirer interface {
	Fire(ctx context.Context, hook hooks.Name, payload map[string]any) []any
	Has(hook hooks.Name) bool
}

// ApprovalRequest asks a human whether a tool call may run.
type ApprovalRequest struct {
	ToolName   string
	Args       map[string]any
	Message    string // why approval is needed (from the plugin's directive)
	RuleKey    string
	ToolCallID string
	TurnID     string
}

// Approver answers approval requests with "once", "session", "always" or "deny".
// A nil Approver means nobody can be asked, and approval-gated calls are blocked.
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest) (string, error)
}

// Call is one tool invocation.
type Call struct {
	Name       string
	Args       map[string]any
	TaskID     string
	SessionID  string
	ToolCallID string
	TurnID     string
}

// Outcome is what a call produced.
type Outcome struct {
	Result       string         // JSON string handed to the model (after transforms)
	Status       string         // "ok" | "error" | "blocked"
	ErrorType    string         // set when Status != "ok"
	ErrorMessage string         // set when Status != "ok"
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

// Pipeline runs tool calls through hooks, approval and validation.
type Pipeline struct {
	Registry   *Registry
	Hooks      HookFirer  // may be nil
	Approver   Approver   // may be nil
	Middleware Middleware // may be nil
}

// Run executes c. It never returns a Go error for tool-level failures: those become
// an error JSON result, as the model sees them.
func (p *Pipeline) Run(ctx context.Context, c Call) Outcome {
	start := time.Now()
	args := c.Args
	if args == nil {
		args = map[string]any{}
	}
	out := p.run(ctx, c, args)
	out.Duration = time.Since(start)
	p.after(ctx, c, &out)
	return out
}

func (p *Pipeline) run(ctx context.Context, c Call, args map[string]any) Outcome {
	tool, ok := p.Registry.Get(c.Name)
	if !ok {
		msg := "Unknown tool: " + c.Name
		return Outcome{Result: ErrorResult(msg, nil), Status: "error", ErrorType: "unknown_tool", ErrorMessage: msg, Args: args}
	}
	if depthOver(args, MaxArgsDepth) {
		// Python plugins decode every call (and every hook payload carrying the
		// arguments) with a recursion limit of ~1000 levels; deeper arguments would
		// crash the plugin processes, hooks included, instead of failing one call.
		// The post_tool_call hooks get no arguments either, for the same reason.
		msg := fmt.Sprintf("Invalid arguments for %s: nested more than %d levels deep", c.Name, MaxArgsDepth)
		return Outcome{Result: ErrorResult(msg, nil), Status: "error", ErrorType: "invalid_arguments", ErrorMessage: msg, Args: map[string]any{}}
	}
	trace := []any{}
	if p.Middleware != nil {
		var t []any
		args, t = p.Middleware.ToolRequest(ctx, c, args)
		trace = append(trace, t...)
	}
	if p.Hooks != nil && p.Hooks.Has(hooks.HookPreToolCall) {
		results := p.Hooks.Fire(ctx, hooks.HookPreToolCall, map[string]any{
			"tool_name": c.Name, "args": args, "task_id": c.TaskID, "session_id": c.SessionID,
			"tool_call_id": c.ToolCallID, "turn_id": c.TurnID, "api_request_id": "", "middleware_trace": trace,
		})
		if ctx.Err() != nil {
			// Interrupted while the guards ran: the call did not happen, and no guard
			// "timed out".
			msg := "Tool " + c.Name + " was interrupted"
			return Outcome{Result: ErrorResult(msg, nil), Status: "error", ErrorType: "cancelled", ErrorMessage: msg, Args: args}
		}
		directive, modified := hooks.PreToolCall(results, args)
		if modified != nil {
			args = modified
		}
		switch directive.Action {
		case "block":
			return blocked(directive.Message, args)
		case "approve":
			if msg := p.approve(ctx, c, args, directive); msg != "" {
				return blocked(msg, args)
			}
		}
	}
	if ok, err := tool.Available(ctx); !ok {
		msg := fmt.Sprintf("Tool %s is not available right now (its availability check failed)", c.Name)
		if err != nil {
			msg = fmt.Sprintf("Tool %s is not available right now: its check_fn raised %v", c.Name, err)
		}
		return Outcome{Result: ErrorResult(msg, nil), Status: "error", ErrorType: "unavailable", ErrorMessage: msg, Args: args}
	}
	if err := tool.ValidateArgs(args); err != nil {
		msg := fmt.Sprintf("Invalid arguments for %s: %v", c.Name, err)
		return Outcome{Result: ErrorResult(msg, nil), Status: "error", ErrorType: "invalid_arguments", ErrorMessage: msg, Args: args}
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
			return Outcome{Result: ErrorResult(te.Message, nil), Status: "error", ErrorType: te.Type, ErrorMessage: te.Message, Args: args}
		}
		msg := err.Error()
		return Outcome{Result: ErrorResult(msg, nil), Status: "error", ErrorType: "tool_error", ErrorMessage: msg, Args: args}
	}
	return Outcome{Result: res, Status: "ok", Args: args}
}

// ToolError is a handler failure with a type the hooks and the model can see.
type ToolError struct {
	Type    string // e.g. the plugin's exception class, "timeout"
	Message string // full text for the model, e.g. "Tool execution failed: KeyError: 'x'"
}

func (e *ToolError) Error() string { return e.Message }

func blocked(msg string, args map[string]any) Outcome {
	return Outcome{Result: ErrorResult(msg, nil), Status: "blocked", ErrorType: "blocked", ErrorMessage: msg, Args: args}
}

// approve asks the Approver; it returns "" when the call may go on, else the block message.
func (p *Pipeline) approve(ctx context.Context, c Call, args map[string]any, d hooks.Directive) string {
	if p.Approver == nil {
		reason := d.Message
		if reason == "" {
			reason = "a plugin asked for approval"
		}
		return fmt.Sprintf("BLOCKED: plugin approval required for %s (%s), and no one is here to approve it: run interactively to answer the prompt", c.Name, reason)
	}
	rule := d.RuleKey
	if rule == "" {
		rule = c.Name
	}
	choice, err := p.Approver.Approve(ctx, ApprovalRequest{ToolName: c.Name, Args: args, Message: d.Message, RuleKey: rule, ToolCallID: c.ToolCallID, TurnID: c.TurnID})
	if err != nil {
		return "BLOCKED: plugin approval gate failed for " + c.Name
	}
	switch choice {
	case "once", "session", "always":
		return ""
	}
	return "BLOCKED: plugin approval required for " + c.Name
}

func (p *Pipeline) after(ctx context.Context, c Call, out *Outcome) {
	if p.Hooks == nil {
		return
	}
	payload := map[string]any{
		"tool_name": c.Name, "args": out.Args, "result": out.Result, "task_id": c.TaskID,
		"session_id": c.SessionID, "tool_call_id": c.ToolCallID, "turn_id": c.TurnID, "api_request_id": "",
		"duration_ms": out.Duration.Milliseconds(), "status": out.Status,
		"error_type": nilIfEmpty(out.ErrorType), "error_message": nilIfEmpty(out.ErrorMessage),
	}
	if p.Hooks.Has(hooks.HookPostToolCall) {
		post := copyMap(payload)
		post["middleware_trace"] = []any{}
		p.Hooks.Fire(ctx, hooks.HookPostToolCall, post)
	}
	if p.Hooks.Has(hooks.HookTransformToolResult) {
		if s, ok := hooks.FirstString(p.Hooks.Fire(ctx, hooks.HookTransformToolResult, payload), false); ok {
			out.Result = s
		}
	}
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

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
