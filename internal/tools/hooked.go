package tools

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hermes-go/hermes/internal/clock"
	"github.com/hermes-go/hermes/internal/hooks"
)

// Hooked runs the tool hooks around the executor it wraps: pre_tool_call's
// directives (block, approve, modify) before the call, post_tool_call and
// transform_tool_result after it, for every outcome, failed and blocked ones too.
type Hooked struct {
	Next     Executor
	Hooks    HookFirer
	Approver Approver // may be nil: nobody to ask, approval-gated calls are blocked
}

// Execute runs c through the hooks and Next. The outcome's Duration covers the
// guards and the call, not the post hooks, which see it.
func (h Hooked) Execute(ctx context.Context, c Call) Outcome {
	if h.Hooks == nil {
		return h.Next.Execute(ctx, c)
	}
	start := clock.Now()
	out := h.run(ctx, c)
	out.Duration = time.Since(start)
	h.after(ctx, c, &out)
	return out
}

func (h Hooked) run(ctx context.Context, c Call) Outcome {
	if p, ok := h.Next.(preparer); ok {
		var out Outcome
		if c, out, ok = p.prepare(ctx, c); !ok {
			return out
		}
	} else if c.Args == nil {
		c.Args = map[string]any{}
	}
	if !h.Hooks.Has(hooks.HookPreToolCall) {
		return h.Next.Execute(ctx, c)
	}
	trace := c.trace
	if trace == nil {
		trace = []any{}
	}
	results := h.Hooks.Fire(ctx, hooks.HookPreToolCall, map[string]any{
		"tool_name": c.Name, "args": c.Args, "task_id": c.TaskID, "session_id": c.SessionID,
		"tool_call_id": c.ToolCallID, "turn_id": c.TurnID, "api_request_id": "", "middleware_trace": trace,
	})
	if ctx.Err() != nil {
		// Interrupted while the guards ran: the call did not happen, and no guard
		// "timed out".
		msg := "Tool " + c.Name + " was interrupted"
		return Outcome{Result: ErrorResult(msg, nil), Status: StatusError, ErrorType: "cancelled", ErrorMessage: msg, Args: c.Args}
	}
	directive, modified := hooks.PreToolCall(results, c.Args)
	if modified != nil {
		c.Args = modified
	}
	switch directive.Action {
	case "block":
		return blocked(directive.Message, c.Args)
	case "approve":
		if msg := h.approve(ctx, c, directive); msg != "" {
			return blocked(msg, c.Args)
		}
	}
	return h.Next.Execute(ctx, c)
}

func blocked(msg string, args map[string]any) Outcome {
	return Outcome{Result: ErrorResult(msg, nil), Status: StatusBlocked, ErrorType: "blocked", ErrorMessage: msg, Args: args}
}

// approve asks the Approver; it returns "" when the call may go on, else the block message.
func (h Hooked) approve(ctx context.Context, c Call, d hooks.Directive) string {
	if h.Approver == nil {
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
	choice, err := h.Approver.Approve(ctx, ApprovalRequest{ToolName: c.Name, Args: c.Args, Message: d.Message, RuleKey: rule, ToolCallID: c.ToolCallID, TurnID: c.TurnID, Origin: c.Origin})
	if err != nil {
		if msg, ok := BlockMessage(err); ok {
			return msg
		}
		return "BLOCKED: plugin approval gate failed for " + c.Name
	}
	if choice.Approves() {
		return ""
	}
	return "BLOCKED: plugin approval required for " + c.Name
}

// after fires the post hooks; they see the outcome's final Args and Duration.
func (h Hooked) after(ctx context.Context, c Call, out *Outcome) {
	post, transform := h.Hooks.Has(hooks.HookPostToolCall), h.Hooks.Has(hooks.HookTransformToolResult)
	if !post && !transform {
		return // and no payload to build
	}
	payload := map[string]any{
		"tool_name": c.Name, "args": out.Args, "result": out.Result, "task_id": c.TaskID,
		"session_id": c.SessionID, "tool_call_id": c.ToolCallID, "turn_id": c.TurnID, "api_request_id": "",
		"duration_ms": out.Duration.Milliseconds(), "status": string(out.Status), // plain data, as every payload value
		"error_type": nilIfEmpty(out.ErrorType), "error_message": nilIfEmpty(out.ErrorMessage),
	}
	if post {
		p := payload
		if transform {
			p = copyMap(payload) // transform_tool_result has no middleware_trace
		}
		p["middleware_trace"] = []any{}
		h.Hooks.Fire(ctx, hooks.HookPostToolCall, p)
	}
	if transform {
		if s, ok := hooks.FirstString(h.Hooks.Fire(ctx, hooks.HookTransformToolResult, payload), false); ok {
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

// BlockMessage returns the message err carries for the model, when it is an
// approver's deny that says more than "denied" (a failed approval transport).
func BlockMessage(err error) (string, bool) {
	var b interface{ BlockMessage() string }
	if errors.As(err, &b) {
		return b.BlockMessage(), true
	}
	return "", false
}
