package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sync/atomic"

	"github.com/hermes-go/hermes/internal/tools"
)

// The middleware chains of upstream §11.4, run over the committed callbacks.

const (
	middlewareSchemaVersion = "hermes.middleware.v1"
	observerSchemaVersion   = "hermes.observer.v1"
)

// RequestMiddleware runs the tool_request or llm_request chain. field is "args"
// or "request": each callback may return {field: {...}} to replace it for the
// callbacks after it. The trace lists who changed what.
func (r *Registry) RequestMiddleware(ctx context.Context, kind MiddlewareKind, field string, value map[string]any, meta map[string]any) (map[string]any, []any) {
	chain := r.Middlewares(kind)
	if len(chain) == 0 {
		return value, nil
	}
	original := deepCopy(value)
	var trace []any
	for _, mw := range chain {
		kw := maps.Clone(meta)
		kw[field] = deepCopy(value)
		kw["original_"+field] = deepCopy(original)
		kw["telemetry_schema_version"] = observerSchemaVersion
		kw["middleware_schema_version"] = middlewareSchemaVersion
		res, err := mw.Invoke(ctx, kw, nil)
		if err != nil {
			r.log.Warn("middleware failed; skipped", "kind", string(kind), "plugin", mw.Plugin, "error", err)
			continue
		}
		out, ok := res.(map[string]any)
		if !ok {
			continue
		}
		repl, ok := out[field].(map[string]any)
		if !ok {
			continue
		}
		value = repl
		entry := map[string]any{"source": "plugin", "plugin": mw.Plugin}
		for _, k := range []string{"source", "reason", "name"} {
			if s, ok := out[k].(string); ok && s != "" {
				entry[k] = s
			}
		}
		trace = append(trace, entry)
	}
	return value, trace
}

// ExecutionMiddleware runs the tool_execution or llm_execution chain around
// final. field names what next_call takes ("args" or "request"). A callback that
// fails before calling next_call is skipped; once next_call has run, its result
// stands and downstream errors propagate unchanged.
func (r *Registry) ExecutionMiddleware(ctx context.Context, kind MiddlewareKind, field string, value map[string]any, meta map[string]any,
	final func(ctx context.Context, value map[string]any) (any, error)) (any, error) {
	chain := r.Middlewares(kind)
	var run func(ctx context.Context, i int, value map[string]any) (any, error)
	run = func(ctx context.Context, i int, value map[string]any) (any, error) {
		if i == len(chain) {
			return final(ctx, value)
		}
		mw := chain[i]
		var called atomic.Bool
		var downstreamErr error
		next := func(ctx context.Context, payload any) (any, error) {
			called.Store(true)
			v := value
			if pm, ok := payload.(map[string]any); ok {
				v = pm
			}
			res, err := run(ctx, i+1, v)
			if err != nil {
				downstreamErr = err
				return nil, err
			}
			return jsonable(res), nil
		}
		kw := maps.Clone(meta)
		kw[field] = deepCopy(value)
		kw["telemetry_schema_version"] = observerSchemaVersion
		kw["middleware_schema_version"] = middlewareSchemaVersion
		res, err := mw.Invoke(ctx, kw, next)
		if err != nil {
			if downstreamErr != nil {
				return nil, downstreamErr
			}
			if !called.Load() {
				r.log.Warn("middleware failed before next_call; skipped", "kind", string(kind), "plugin", mw.Plugin, "error", err)
				return run(ctx, i+1, value)
			}
			return nil, err
		}
		return res, nil
	}
	return run(ctx, 0, value)
}

// jsonable turns a Go result into the plain JSON value a plugin's next_call returns.
func jsonable(v any) any {
	switch v.(type) {
	case nil, string, bool, float64, map[string]any, []any:
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func deepCopy(v map[string]any) map[string]any {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return maps.Clone(v)
	}
	var out map[string]any
	if json.Unmarshal(b, &out) != nil {
		return maps.Clone(v)
	}
	return out
}

// ToolMiddleware is the tool chains as the tool pipeline calls them.
func (r *Registry) ToolMiddleware() tools.Middleware { return toolChains{r} }

type toolChains struct{ r *Registry }

func toolMeta(c tools.Call) map[string]any {
	return map[string]any{"tool_name": c.Name, "task_id": c.TaskID, "session_id": c.SessionID,
		"tool_call_id": c.ToolCallID, "turn_id": c.TurnID, "api_request_id": ""}
}

func (t toolChains) ToolRequest(ctx context.Context, c tools.Call, args map[string]any) (map[string]any, []any) {
	return t.r.RequestMiddleware(ctx, ToolRequest, "args", args, toolMeta(c))
}

func (t toolChains) ToolExecution(ctx context.Context, c tools.Call, args map[string]any,
	run func(context.Context, map[string]any) (string, error)) (string, error) {
	if !t.r.HasMiddleware(ToolExecution) {
		return run(ctx, args)
	}
	res, err := t.r.ExecutionMiddleware(ctx, ToolExecution, "args", args, toolMeta(c),
		func(ctx context.Context, v map[string]any) (any, error) { return run(ctx, v) })
	if err != nil {
		return "", err
	}
	switch v := res.(type) {
	case string:
		return v, nil
	case nil:
		return "", nil
	}
	b, err := json.Marshal(res)
	if err != nil {
		return "", fmt.Errorf("tool_execution middleware returned a value that is not JSON: %w", err)
	}
	return string(b), nil
}

// LLMChains is the llm_request / llm_execution chains as the agent calls them.
func (r *Registry) LLMChains() LLMChains { return LLMChains{r} }

// LLMChains adapts the registry's chains to the agent.
type LLMChains struct{ r *Registry }

// Request runs llm_request: each callback may return {"request": {...}}.
func (c LLMChains) Request(ctx context.Context, req, meta map[string]any) map[string]any {
	if !c.r.HasMiddleware(LLMRequest) {
		return nil
	}
	out, _ := c.r.RequestMiddleware(ctx, LLMRequest, "request", req, meta)
	return out
}

// Active reports which chains have a member: the agent builds the request
// as a JSON map only for a chain that will see it.
func (c LLMChains) Active() (request, execution bool) {
	return c.r.HasMiddleware(LLMRequest), c.r.HasMiddleware(LLMExecution)
}

// Execute runs llm_execution around next.
func (c LLMChains) Execute(ctx context.Context, req, meta map[string]any, next func(map[string]any) (any, error)) (any, error) {
	if !c.r.HasMiddleware(LLMExecution) {
		return next(req)
	}
	return c.r.ExecutionMiddleware(ctx, LLMExecution, "request", req, meta,
		func(ctx context.Context, v map[string]any) (any, error) { return next(v) })
}
