package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hermes-go/hermes/internal/lazyre"
	"github.com/hermes-go/hermes/internal/tools"
)

// The built-in memory tool and the toolset provider tools join (upstream's names).
const (
	ToolName = "memory"
	Toolset  = "memory"
)

// The description is ours; the name, actions and parameters are upstream's.
var toolSchema = map[string]any{
	"name": ToolName,
	"description": "Save durable facts to your persistent memory, which is shown to you at the start of every later session. " +
		"target 'memory' holds your own notes (environment facts, project conventions, lessons learned); target 'user' holds what you know " +
		"about the user (preferences, style, habits). Actions: add (content), replace (old_text: a short unique substring of the entry, content), " +
		"remove (old_text). Keep entries short; both stores have a character limit.",
	"parameters": map[string]any{
		"type": "object",
		"properties": map[string]any{
			"action":   map[string]any{"type": "string", "enum": []any{"add", "replace", "remove"}, "description": "What to do"},
			"target":   map[string]any{"type": "string", "enum": []any{"memory", "user"}, "description": "Which store (default memory)"},
			"content":  map[string]any{"type": "string", "description": "The entry text (add, replace)"},
			"old_text": map[string]any{"type": "string", "description": "A short unique substring of the entry to replace or remove"},
		},
		"required": []any{"action"},
	},
}

// RegisterTool adds the built-in `memory` tool (toolset memory) writing m's
// store; each successful write is mirrored to the provider (on_memory_write).
func RegisterTool(reg *tools.Registry, m *Manager) error {
	t := &tools.Tool{Name: ToolName, Toolset: Toolset, Emoji: "🧠", Schema: toolSchema, Source: tools.SourceBuiltin,
		Handler: func(ctx context.Context, args, _ map[string]any) (string, error) {
			str := func(k string) string { s, _ := args[k].(string); return s }
			target := str("target")
			if target == "" {
				target = TargetMemory
			}
			if (target == TargetMemory && !m.o.Settings.MemoryEnabled) || (target == TargetUser && !m.o.Settings.UserProfileEnabled) {
				return tools.ErrorResult(fmt.Sprintf("The %s store is disabled in config.yaml (memory.%s: false).", target,
					map[string]string{TargetMemory: "memory_enabled", TargetUser: "user_profile_enabled"}[target]), map[string]any{"success": false}), nil
			}
			res, err := m.o.Store.Apply(ctx, str("action"), target, str("content"), str("old_text"))
			if err != nil {
				return tools.ErrorResult(err.Error(), map[string]any{"success": false}), nil
			}
			if ok, _ := res["success"].(bool); ok {
				m.MemoryWrite(ctx, str("action"), target, str("content"))
			}
			b, _ := json.Marshal(res)
			return string(b), nil
		}}
	if err := reg.Register(t, false); err != nil {
		return fmt.Errorf("register built-in tool memory: %w", err)
	}
	return nil
}

var toolNameRE = lazyre.New(`^[A-Za-z0-9_-]{1,64}$`)

// ProviderTools are the provider's tools (get_tool_schemas), in toolset
// memory, each calling handle_tool_call. Schemas may be bare or wrapped as
// {"type":"function","function":{...}}; nameless or badly named ones are dropped.
func (m *Manager) ProviderTools(ctx context.Context) []*tools.Tool {
	if m.o.External == nil {
		return nil
	}
	var schemas []map[string]any
	if !m.bounded(ctx, m.o.CallTimeout, "get_tool_schemas", func(ctx context.Context) error {
		var err error
		schemas, err = m.o.External.ToolSchemas(ctx)
		return err
	}) {
		return nil
	}
	var out []*tools.Tool
	for _, s := range schemas {
		if fn, ok := s["function"].(map[string]any); ok && s["type"] == "function" {
			s = fn
		}
		name, _ := s["name"].(string)
		if !toolNameRE.MatchString(name) || name == ToolName {
			m.fail("get_tool_schemas", fmt.Errorf("a tool schema has no usable name (%q); it is dropped", clipRunes(name, 40)))
			continue
		}
		desc, _ := s["description"].(string)
		params, _ := s["parameters"].(map[string]any)
		if params == nil {
			params = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		schema := map[string]any{"name": name, "description": clipRunes(strings.TrimSpace(desc), 4000), "parameters": params}
		tool := name
		out = append(out, &tools.Tool{Name: name, Toolset: Toolset, Emoji: "🧠", Schema: schema, Source: "memory:" + m.o.External.Name(),
			Handler: func(ctx context.Context, args, _ map[string]any) (string, error) {
				var res string
				if !m.bounded(ctx, m.o.CallTimeout, "handle_tool_call", func(ctx context.Context) error {
					var err error
					res, err = m.o.External.HandleToolCall(ctx, tool, args)
					return err
				}) {
					return tools.ErrorResult(fmt.Sprintf("memory provider %s could not run %s", m.o.External.Name(), tool), nil), nil
				}
				return res, nil
			}})
	}
	return out
}
