package memory

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hermes-go/hermes/pkg/pluginsdk"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// Provider is an external memory provider: upstream's MemoryProvider, method
// for method. Remote implements it over a plugin's process; a Go plugin
// implements the same interface from the SDK (one definition: what hermes
// calls is what a Go plugin writes).
type Provider = pluginsdk.MemoryProvider

// Conn calls the plugin process a Remote provider lives in.
type Conn interface {
	Call(ctx context.Context, method string, params any) (json.RawMessage, error)
}

// Remote is a provider object in a plugin's process, called through the
// protocol's memory.* methods.
type Remote struct {
	ProviderName string
	Conn         Conn
	// Inherited are the per-turn hooks (upstream's method names) the
	// provider's class does not override: their defaults do nothing, so they
	// are answered here without a round trip.
	Inherited map[string]bool
	// AfterTurnCall: the provider's process serves memory.after_turn.
	AfterTurnCall bool
}

// BatchesAfterTurn reports whether AfterTurn saves a round trip: the process
// serves it and the provider overrides both of its hooks.
func (r *Remote) BatchesAfterTurn() bool {
	return r.AfterTurnCall && !r.Inherited["sync_turn"] && !r.Inherited["queue_prefetch"]
}

// AfterTurn is sync_turn then queue_prefetch in one round trip
// (memory.after_turn); err is the call's own failure, the others each method's.
func (r *Remote) AfterTurn(ctx context.Context, user, assistant, sessionID string) (syncErr, queueErr, err error) {
	raw, err := r.call(ctx, protocol.MethodMemoryAfterTurn, map[string]any{
		"sync_turn":      map[string]any{"user_content": user, "assistant_content": assistant, "session_id": sessionID},
		"queue_prefetch": map[string]any{"query": user, "session_id": sessionID},
	})
	if err != nil {
		return nil, nil, err
	}
	var res map[string]*string
	if jerr := json.Unmarshal(raw, &res); jerr != nil {
		return nil, nil, fmt.Errorf("memory provider %s: after_turn: the answer is not the expected shape", r.ProviderName)
	}
	fail := func(method string) error {
		if msg := res[method]; msg != nil {
			return fmt.Errorf("memory provider %s: %s: %s", r.ProviderName, method, *msg)
		}
		return nil
	}
	return fail("sync_turn"), fail("queue_prefetch"), nil
}

var _ Provider = (*Remote)(nil)

// Name is the registered name.
func (r *Remote) Name() string { return r.ProviderName }

func (r *Remote) call(ctx context.Context, method string, args map[string]any) (json.RawMessage, error) {
	raw, err := r.Conn.Call(ctx, method, protocol.MemoryParams{Provider: r.ProviderName, Args: args})
	if err != nil {
		return nil, fmt.Errorf("memory provider %s: %s: %w", r.ProviderName, method, err)
	}
	return raw, nil
}

func (r *Remote) do(ctx context.Context, method string, args map[string]any) error {
	_, err := r.call(ctx, method, args)
	return err
}

func decode[T any](raw json.RawMessage, err error, what string) (T, error) {
	var v T
	if err != nil {
		return v, err
	}
	if len(raw) == 0 || string(raw) == "null" {
		return v, nil
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, fmt.Errorf("%s: the provider returned %s, not the expected shape", what, kindOfJSON(raw))
	}
	return v, nil
}

func kindOfJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "invalid JSON"
	}
	switch v.(type) {
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return "null"
}

// Initialize is initialize(session_id, **kwargs).
func (r *Remote) Initialize(ctx context.Context, sessionID string, kwargs map[string]any) error {
	args := map[string]any{"session_id": sessionID}
	for k, v := range kwargs {
		args[k] = v
	}
	return r.do(ctx, protocol.MethodMemoryInitialize, args)
}

// IsAvailable is is_available().
func (r *Remote) IsAvailable(ctx context.Context) (bool, error) {
	raw, err := r.call(ctx, protocol.MethodMemoryIsAvailable, nil)
	return decode[bool](raw, err, "is_available")
}

// SystemPromptBlock is system_prompt_block().
func (r *Remote) SystemPromptBlock(ctx context.Context) (any, error) {
	raw, err := r.call(ctx, protocol.MethodMemorySystemPromptBlock, nil)
	return decode[any](raw, err, "system_prompt_block")
}

// Prefetch is prefetch(query, session_id=...).
func (r *Remote) Prefetch(ctx context.Context, query, sessionID string) (any, error) {
	if r.Inherited["prefetch"] {
		return "", nil
	}
	raw, err := r.call(ctx, protocol.MethodMemoryPrefetch, map[string]any{"query": query, "session_id": sessionID})
	return decode[any](raw, err, "prefetch")
}

// QueuePrefetch is queue_prefetch(query, session_id=...).
func (r *Remote) QueuePrefetch(ctx context.Context, query, sessionID string) error {
	if r.Inherited["queue_prefetch"] {
		return nil
	}
	return r.do(ctx, protocol.MethodMemoryQueuePrefetch, map[string]any{"query": query, "session_id": sessionID})
}

// SyncTurn is sync_turn(user_content, assistant_content, session_id=...).
func (r *Remote) SyncTurn(ctx context.Context, user, assistant, sessionID string) error {
	if r.Inherited["sync_turn"] {
		return nil
	}
	return r.do(ctx, protocol.MethodMemorySyncTurn, map[string]any{"user_content": user, "assistant_content": assistant, "session_id": sessionID})
}

// ToolSchemas is get_tool_schemas().
func (r *Remote) ToolSchemas(ctx context.Context) ([]map[string]any, error) {
	raw, err := r.call(ctx, protocol.MethodMemoryToolSchemas, nil)
	return decode[[]map[string]any](raw, err, "get_tool_schemas")
}

// HandleToolCall is handle_tool_call(tool_name, args).
func (r *Remote) HandleToolCall(ctx context.Context, tool string, args map[string]any) (string, error) {
	raw, err := r.call(ctx, protocol.MethodMemoryToolCall, map[string]any{"tool_name": tool, "args": args})
	if err != nil {
		return "", err
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	return string(raw), nil // a dict: handed on as JSON
}

// OnTurnStart is on_turn_start(turn_number, message, **kw).
func (r *Remote) OnTurnStart(ctx context.Context, turn int, message string, kwargs map[string]any) error {
	if r.Inherited["on_turn_start"] {
		return nil
	}
	args := map[string]any{"turn_number": turn, "message": message}
	for k, v := range kwargs {
		args[k] = v
	}
	return r.do(ctx, protocol.MethodMemoryTurnStart, args)
}

// OnSessionEnd is on_session_end(messages).
func (r *Remote) OnSessionEnd(ctx context.Context, messages []map[string]any) error {
	return r.do(ctx, protocol.MethodMemorySessionEnd, map[string]any{"messages": messages})
}

// OnSessionSwitch is on_session_switch(new_session_id, parent_session_id=..., reset=...).
func (r *Remote) OnSessionSwitch(ctx context.Context, newSessionID, parentSessionID string, reset bool) error {
	if r.Inherited["on_session_switch"] {
		return nil
	}
	return r.do(ctx, protocol.MethodMemorySessionSwitch, map[string]any{"new_session_id": newSessionID,
		"parent_session_id": parentSessionID, "reset": reset, "rewound": false})
}

// OnPreCompress is on_pre_compress(messages) -> str.
func (r *Remote) OnPreCompress(ctx context.Context, messages []map[string]any) (string, error) {
	if r.Inherited["on_pre_compress"] {
		return "", nil
	}
	raw, err := r.call(ctx, protocol.MethodMemoryPreCompress, map[string]any{"messages": messages})
	return decode[string](raw, err, "on_pre_compress")
}

// OnMemoryWrite is on_memory_write(action, target, content).
func (r *Remote) OnMemoryWrite(ctx context.Context, action, target, content string) error {
	if r.Inherited["on_memory_write"] {
		return nil
	}
	return r.do(ctx, protocol.MethodMemoryWrite, map[string]any{"action": action, "target": target, "content": content, "metadata": nil})
}

// ConfigSchema is get_config_schema().
func (r *Remote) ConfigSchema(ctx context.Context) ([]map[string]any, error) {
	raw, err := r.call(ctx, protocol.MethodMemoryConfigSchema, nil)
	return decode[[]map[string]any](raw, err, "get_config_schema")
}

// SaveConfig is save_config(values, hermes_home).
func (r *Remote) SaveConfig(ctx context.Context, values map[string]any, hermesHome string) error {
	return r.do(ctx, protocol.MethodMemorySaveConfig, map[string]any{"values": values, "hermes_home": hermesHome})
}

// Shutdown is shutdown().
func (r *Remote) Shutdown(ctx context.Context) error {
	return r.do(ctx, protocol.MethodMemoryShutdown, nil)
}
