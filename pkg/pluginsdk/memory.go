package pluginsdk

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hermes-go/hermes/pkg/protocol"
)

// MemoryProvider is upstream's MemoryProvider for Go plugins: an external
// memory backend hermes calls around each turn when memory.provider names it.
// Embed MemoryProviderBase for the optional methods' defaults. Any and string
// results are checked by hermes: a wrong type is ignored with a warning.
type MemoryProvider interface {
	Name() string
	Initialize(ctx context.Context, sessionID string, kwargs map[string]any) error
	IsAvailable(ctx context.Context) (bool, error)
	SystemPromptBlock(ctx context.Context) (any, error)
	Prefetch(ctx context.Context, query, sessionID string) (any, error)
	QueuePrefetch(ctx context.Context, query, sessionID string) error
	SyncTurn(ctx context.Context, user, assistant, sessionID string) error
	ToolSchemas(ctx context.Context) ([]map[string]any, error)
	HandleToolCall(ctx context.Context, tool string, args map[string]any) (string, error)
	OnTurnStart(ctx context.Context, turn int, message string, kwargs map[string]any) error
	OnSessionEnd(ctx context.Context, messages []map[string]any) error
	OnSessionSwitch(ctx context.Context, newSessionID, parentSessionID string, reset bool) error
	OnPreCompress(ctx context.Context, messages []map[string]any) (string, error)
	OnMemoryWrite(ctx context.Context, action, target, content string) error
	ConfigSchema(ctx context.Context) ([]map[string]any, error)
	SaveConfig(ctx context.Context, values map[string]any, hermesHome string) error
	Shutdown(ctx context.Context) error
}

// MemoryProviderBase gives the optional MemoryProvider methods upstream's defaults.
type MemoryProviderBase struct{}

// IsAvailable reports true.
func (MemoryProviderBase) IsAvailable(context.Context) (bool, error) { return true, nil }

// SystemPromptBlock adds nothing.
func (MemoryProviderBase) SystemPromptBlock(context.Context) (any, error) { return "", nil }

// Prefetch recalls nothing.
func (MemoryProviderBase) Prefetch(context.Context, string, string) (any, error) { return "", nil }

// QueuePrefetch does nothing.
func (MemoryProviderBase) QueuePrefetch(context.Context, string, string) error { return nil }

// SyncTurn does nothing.
func (MemoryProviderBase) SyncTurn(context.Context, string, string, string) error { return nil }

// ToolSchemas offers no tools.
func (MemoryProviderBase) ToolSchemas(context.Context) ([]map[string]any, error) { return nil, nil }

// HandleToolCall answers upstream's unknown-tool error.
func (MemoryProviderBase) HandleToolCall(_ context.Context, tool string, _ map[string]any) (string, error) {
	return Error("Unknown memory tool: " + tool), nil
}

// OnTurnStart does nothing.
func (MemoryProviderBase) OnTurnStart(context.Context, int, string, map[string]any) error { return nil }

// OnSessionEnd does nothing.
func (MemoryProviderBase) OnSessionEnd(context.Context, []map[string]any) error { return nil }

// OnSessionSwitch does nothing.
func (MemoryProviderBase) OnSessionSwitch(context.Context, string, string, bool) error { return nil }

// OnPreCompress adds nothing to the compression prompt.
func (MemoryProviderBase) OnPreCompress(context.Context, []map[string]any) (string, error) {
	return "", nil
}

// OnMemoryWrite does nothing.
func (MemoryProviderBase) OnMemoryWrite(context.Context, string, string, string) error { return nil }

// ConfigSchema asks nothing.
func (MemoryProviderBase) ConfigSchema(context.Context) ([]map[string]any, error) { return nil, nil }

// SaveConfig does nothing.
func (MemoryProviderBase) SaveConfig(context.Context, map[string]any, string) error { return nil }

// Shutdown does nothing.
func (MemoryProviderBase) Shutdown(context.Context) error { return nil }

// ServeMemory runs one memory.* protocol call on p (the SDK's server and
// hermes' compiled-in plugins both use it).
func ServeMemory(ctx context.Context, p MemoryProvider, method string, args map[string]any) (any, error) {
	str := func(k string) string { s, _ := args[k].(string); return s }
	msgs := func() []map[string]any {
		b, _ := json.Marshal(args["messages"])
		var out []map[string]any
		_ = json.Unmarshal(b, &out)
		return out
	}
	switch method {
	case protocol.MethodMemoryInitialize:
		kw := map[string]any{}
		for k, v := range args {
			if k != "session_id" {
				kw[k] = v
			}
		}
		return nil, p.Initialize(ctx, str("session_id"), kw)
	case protocol.MethodMemoryIsAvailable:
		return p.IsAvailable(ctx)
	case protocol.MethodMemorySystemPromptBlock:
		return p.SystemPromptBlock(ctx)
	case protocol.MethodMemoryPrefetch:
		return p.Prefetch(ctx, str("query"), str("session_id"))
	case protocol.MethodMemoryQueuePrefetch:
		return nil, p.QueuePrefetch(ctx, str("query"), str("session_id"))
	case protocol.MethodMemorySyncTurn:
		return nil, p.SyncTurn(ctx, str("user_content"), str("assistant_content"), str("session_id"))
	case protocol.MethodMemoryToolSchemas:
		return p.ToolSchemas(ctx)
	case protocol.MethodMemoryToolCall:
		a, _ := args["args"].(map[string]any)
		return p.HandleToolCall(ctx, str("tool_name"), a)
	case protocol.MethodMemoryTurnStart:
		n, _ := args["turn_number"].(float64)
		if i, ok := args["turn_number"].(int); ok {
			n = float64(i)
		}
		return nil, p.OnTurnStart(ctx, int(n), str("message"), args)
	case protocol.MethodMemorySessionEnd:
		return nil, p.OnSessionEnd(ctx, msgs())
	case protocol.MethodMemorySessionSwitch:
		reset, _ := args["reset"].(bool)
		return nil, p.OnSessionSwitch(ctx, str("new_session_id"), str("parent_session_id"), reset)
	case protocol.MethodMemoryPreCompress:
		return p.OnPreCompress(ctx, msgs())
	case protocol.MethodMemoryWrite:
		return nil, p.OnMemoryWrite(ctx, str("action"), str("target"), str("content"))
	case protocol.MethodMemoryConfigSchema:
		return p.ConfigSchema(ctx)
	case protocol.MethodMemorySaveConfig:
		v, _ := args["values"].(map[string]any)
		return nil, p.SaveConfig(ctx, v, str("hermes_home"))
	case protocol.MethodMemoryUnavailable:
		return "", nil
	case protocol.MethodMemoryShutdown:
		return nil, p.Shutdown(ctx)
	}
	return nil, protocol.Errorf(protocol.CodeMethodNotFound, "unknown memory method %s", method)
}

// RegisterMemoryProvider (remote): the provider is served by this process.
func (c *remoteContext) RegisterMemoryProvider(p MemoryProvider) error {
	if p == nil || p.Name() == "" {
		return fmt.Errorf("RegisterMemoryProvider: the provider needs a name")
	}
	c.s.mu.Lock()
	if c.s.memory == nil {
		c.s.memory = map[string]MemoryProvider{}
	}
	c.s.memory[p.Name()] = p
	c.s.mu.Unlock()
	var res protocol.RegisterResult
	if err := c.call(protocol.MethodRegisterOther, protocol.RegisterOtherParams{Registrar: "register_memory_provider", Name: p.Name()}, &res); err != nil {
		return err
	}
	if !res.Registered {
		return fmt.Errorf("memory provider %s was not registered: %s", p.Name(), res.Warning)
	}
	return nil
}

func (s *server) serveMemory(ctx context.Context, method string, params json.RawMessage) (any, error) {
	var p protocol.MemoryParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, protocol.Errorf(protocol.CodeInvalidParams, "%v", err)
	}
	s.mu.Lock()
	prov := s.memory[p.Provider]
	s.mu.Unlock()
	if prov == nil {
		return nil, protocol.Errorf(protocol.CodeNotFound, "this plugin registered no memory provider %q", p.Provider)
	}
	out, err := ServeMemory(ctx, prov, method, p.Args)
	if err != nil {
		return nil, handlerErr(err, "MemoryProviderError")
	}
	return out, nil
}
