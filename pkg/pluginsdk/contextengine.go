package pluginsdk

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hermes-go/hermes/pkg/protocol"
)

// ContextEngine is upstream's ContextEngine for Go plugins: it decides when
// the conversation is too long and compacts it. context.engine selects it by
// Name(); only one plugin may register one. Embed ContextEngineBase for the
// optional methods' defaults.
type ContextEngine interface {
	Name() string
	// UpdateModel tells the engine the model and its context window, in tokens.
	UpdateModel(ctx context.Context, model string, contextLength int) error
	// UpdateFromResponse records the usage the model reported (prompt_tokens,
	// completion_tokens, total_tokens).
	UpdateFromResponse(ctx context.Context, usage map[string]any) error
	// ShouldCompress says whether a request of promptTokens tokens is due.
	ShouldCompress(ctx context.Context, promptTokens int) (bool, error)
	// Compress returns the compacted transcript (messages with role and
	// content, and tool_calls / tool_call_id / name where they had them).
	Compress(ctx context.Context, messages []map[string]any, o CompressOptions) ([]map[string]any, error)
	GetStatus(ctx context.Context) (map[string]any, error)
	OnSessionStart(ctx context.Context, sessionID string) error
	OnSessionEnd(ctx context.Context, sessionID string, messages []map[string]any) error
	OnSessionReset(ctx context.Context) error
}

// CompressOptions are compress()'s keyword arguments.
type CompressOptions struct {
	CurrentTokens int
	FocusTopic    string
	Force         bool
	MemoryContext string
}

// ContextEngineBase gives the optional ContextEngine methods upstream's defaults.
type ContextEngineBase struct{}

// UpdateModel does nothing.
func (ContextEngineBase) UpdateModel(context.Context, string, int) error { return nil }

// UpdateFromResponse does nothing.
func (ContextEngineBase) UpdateFromResponse(context.Context, map[string]any) error { return nil }

// GetStatus reports nothing.
func (ContextEngineBase) GetStatus(context.Context) (map[string]any, error) {
	return map[string]any{}, nil
}

// OnSessionStart does nothing.
func (ContextEngineBase) OnSessionStart(context.Context, string) error { return nil }

// OnSessionEnd does nothing.
func (ContextEngineBase) OnSessionEnd(context.Context, string, []map[string]any) error { return nil }

// OnSessionReset does nothing.
func (ContextEngineBase) OnSessionReset(context.Context) error { return nil }

// ServeContextEngine runs one context_engine.call method on e, with the
// results' wire shapes (compress: {"messages": [...]}).
func ServeContextEngine(ctx context.Context, e ContextEngine, method string, kwargs map[string]any) (any, error) {
	str := func(k string) string { s, _ := kwargs[k].(string); return s }
	num := func(k string) int {
		switch v := kwargs[k].(type) {
		case float64:
			return int(v)
		case int:
			return v
		}
		return 0
	}
	msgs := func() []map[string]any {
		b, _ := json.Marshal(kwargs["messages"])
		var out []map[string]any
		_ = json.Unmarshal(b, &out)
		return out
	}
	switch method {
	case "update_model":
		return nil, e.UpdateModel(ctx, str("model"), num("context_length"))
	case "update_from_response":
		u, _ := kwargs["usage"].(map[string]any)
		return nil, e.UpdateFromResponse(ctx, u)
	case "should_compress":
		return e.ShouldCompress(ctx, num("prompt_tokens"))
	case "compress":
		force, _ := kwargs["force"].(bool)
		out, err := e.Compress(ctx, msgs(), CompressOptions{CurrentTokens: num("current_tokens"), FocusTopic: str("focus_topic"),
			Force: force, MemoryContext: str("memory_context")})
		if err != nil {
			return nil, err
		}
		for i, m := range out {
			if _, ok := m["role"].(string); !ok {
				return nil, fmt.Errorf("%s.Compress returned message %d without a role", e.Name(), i)
			}
		}
		if out == nil {
			out = []map[string]any{}
		}
		return map[string]any{"messages": out}, nil
	case "get_status":
		st, err := e.GetStatus(ctx)
		if st == nil {
			st = map[string]any{}
		}
		return st, err
	case "on_session_start":
		return nil, e.OnSessionStart(ctx, str("session_id"))
	case "on_session_end":
		return nil, e.OnSessionEnd(ctx, str("session_id"), msgs())
	case "on_session_reset":
		return nil, e.OnSessionReset(ctx)
	}
	return nil, protocol.Errorf(protocol.CodeInvalidParams, "context engine method %q is not one the host calls", method)
}

// RegisterContextEngine (remote): the engine is served by this process.
func (c *remoteContext) RegisterContextEngine(e ContextEngine) error {
	if e == nil || e.Name() == "" {
		return fmt.Errorf("RegisterContextEngine: the engine needs a name")
	}
	c.s.mu.Lock()
	if c.s.engines == nil {
		c.s.engines = map[string]ContextEngine{}
	}
	c.s.engines[e.Name()] = e
	c.s.mu.Unlock()
	var res protocol.RegisterResult
	if err := c.call(protocol.MethodRegisterOther, protocol.RegisterOtherParams{Registrar: "register_context_engine", Name: e.Name()}, &res); err != nil {
		return err
	}
	if !res.Registered {
		return fmt.Errorf("context engine %s was not registered: %s", e.Name(), res.Warning)
	}
	return nil
}

func (s *server) serveContextEngine(ctx context.Context, params json.RawMessage) (any, error) {
	var p protocol.ContextEngineCallParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, protocol.Errorf(protocol.CodeInvalidParams, "%v", err)
	}
	s.mu.Lock()
	e := s.engines[p.Name]
	s.mu.Unlock()
	if e == nil {
		return nil, protocol.Errorf(protocol.CodeNotFound, "this plugin registered no context engine %q", p.Name)
	}
	out, err := ServeContextEngine(ctx, e, p.Method, p.Kwargs)
	if err != nil {
		return nil, handlerErr(err, "ContextEngineError")
	}
	return out, nil
}
