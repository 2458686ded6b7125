package hostapi

import (
	"context"
	"fmt"

	"github.com/hermes-go/hermes/internal/tools"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// ctx.dispatch_tool: a plugin runs a tool through the whole pipeline.

type dispatchDepthKey struct{}

// WithDispatchDepth marks ctx as running under depth nested ctx.dispatch_tool
// calls (what a plugin reported for the tool call dispatching).
func WithDispatchDepth(ctx context.Context, depth int) context.Context {
	return context.WithValue(ctx, dispatchDepthKey{}, max(depth, 0))
}

func dispatchDepth(ctx context.Context) int {
	d, _ := ctx.Value(dispatchDepthKey{}).(int)
	return d
}

func dispatchTool(ctx context.Context, s *Session, dp protocol.DispatchToolParams) (any, error) {
	return s.dispatchTool(WithDispatchDepth(ctx, dp.Depth), dp.ToolName, dp.Args, dp.Kwargs), nil
}

// dispatchTool runs a tool through the whole pipeline (hooks, approval, validation)
// on behalf of the session's plugin, returning the result string the model would
// see. The call's origin is that plugin, whatever the call it runs under: an
// approval prompt names it and does not offer "always".
func (s *Session) dispatchTool(ctx context.Context, name string, args, kwargs map[string]any) string {
	h := s.h
	depth := dispatchDepth(ctx) + 1
	if depth > protocol.MaxDispatchDepth {
		return tools.ErrorResult(fmt.Sprintf("ctx.dispatch_tool(%q) refused: tool calls are nested %d deep through dispatch_tool (the most is %d); is a tool dispatching itself?",
			name, depth, protocol.MaxDispatchDepth), nil)
	}
	if h.opts.Tools == nil {
		return tools.ErrorResult("ctx.dispatch_tool is not available here: this host runs no tool pipeline", nil)
	}
	ctx = context.WithValue(ctx, dispatchDepthKey{}, depth)
	c := tools.Call{Name: name, Args: args, Origin: tools.Origin{Kind: tools.FromPlugin, Plugin: s.p.ID()}}
	if v, ok := kwargs["task_id"].(string); ok {
		c.TaskID = v
	}
	if v, ok := kwargs["session_id"].(string); ok {
		c.SessionID = v
	}
	if v, ok := kwargs["tool_call_id"].(string); ok {
		c.ToolCallID = v
	}
	return h.opts.Tools.Run(ctx, c).Result
}
