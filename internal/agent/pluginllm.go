package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// PluginLLM serves ctx.llm (upstream agent.plugin_llm): one bounded completion
// against the user's active model. The plugin never sees credentials; model,
// agent_id and profile overrides are refused unless the operator trusted the
// plugin under plugins.entries.<id>.llm.
type PluginLLM struct {
	Client   llm.Client
	Model    string
	Provider string
	// Trust returns plugins.entries.<id>.llm for a plugin (nil when absent).
	Trust func(pluginID string) map[string]any
	// Log records one audit line per call.
	Log func(pluginID, purpose, model string, usage llm.Usage)
	// AuxTask resolves task=<key>: the auxiliary.<key> block of config.yaml over
	// the task's defaults, or an error saying why the plugin may not use it.
	AuxTask func(pluginID, key string) (AuxRoute, error)
	// ClientFor is a client for another endpoint (an auxiliary task's base_url);
	// nil: such a task is refused.
	ClientFor func(baseURL, apiKey string) (llm.Client, error)
}

// AuxRoute is where an auxiliary task's calls go (upstream's routing fields).
type AuxRoute struct {
	Key       string
	Model     string  // "": the user's model
	BaseURL   string  // "": the user's endpoint
	APIKey    string  // with BaseURL
	Timeout   float64 // seconds; 0: none of the task's own
	ExtraBody map[string]any
}

// Serve implements plugins.PluginLLM.
func (p *PluginLLM) Serve(ctx context.Context, pluginID, method string, kw map[string]any) (map[string]any, error) {
	model, err := p.gate(pluginID, kw)
	if err != nil {
		return nil, err
	}
	client := p.Client
	req := llm.Request{Model: model}
	if task, _ := kw["task"].(string); task != "" {
		if client, err = p.route(pluginID, task, kw, &req); err != nil {
			return nil, err
		}
	}
	if v, ok := kw["temperature"].(float64); ok {
		req.Temperature = &v
	}
	if v, ok := kw["max_tokens"].(float64); ok && v > 0 {
		req.MaxTokens = int(v)
	}
	if v, ok := kw["timeout"].(float64); ok && v > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(v*float64(time.Second)))
		defer cancel()
	}
	purpose, _ := kw["purpose"].(string)
	structured := method == "complete_structured"
	var schema map[string]any
	if structured {
		if err := structuredRequest(&req, kw); err != nil {
			return nil, err
		}
		schema, _ = kw["json_schema"].(map[string]any)
	} else {
		msgs, err := plainMessages(kw["messages"])
		if err != nil {
			return nil, err
		}
		req.Messages = msgs
	}
	resp, err := client.Chat(ctx, req, nil)
	if err != nil {
		return nil, protocol.Errorf(protocol.CodeRuntimeError, "ctx.llm: %v", err)
	}
	used := resp.Model
	if used == "" {
		used = model
	}
	if p.Log != nil {
		p.Log(pluginID, purpose, used, resp.Usage)
	}
	audit := map[string]any{"plugin_id": pluginID, "purpose": purpose, "profile": nil}
	if task, _ := kw["task"].(string); task != "" {
		audit["task"] = task
	}
	out := map[string]any{
		"text": resp.Message.Content, "provider": p.Provider, "model": used, "agent_id": "default",
		"usage": map[string]any{"input_tokens": resp.Usage.PromptTokens, "output_tokens": resp.Usage.CompletionTokens,
			"total_tokens": resp.Usage.TotalTokens, "cache_read_tokens": nil, "cache_write_tokens": nil, "cost_usd": nil},
		"audit": audit,
	}
	if !structured {
		return out, nil
	}
	if name, ok := kw["schema_name"].(string); ok && name != "" {
		audit["schema_name"] = name
	}
	out["parsed"], out["content_type"] = nil, "text"
	parsed, ok := parseJSONText(resp.Message.Content)
	if !ok {
		return out, nil
	}
	if schema != nil {
		if err := validateAgainst(schema, parsed); err != nil {
			return nil, protocol.Errorf(protocol.CodeInvalidArgument, "ctx.llm.complete_structured: the model's JSON does not match json_schema: %v", err)
		}
	}
	out["parsed"], out["content_type"] = parsed, "json"
	return out, nil
}

// route applies auxiliary task key to req: its model (unless the plugin chose one
// it is trusted with), its timeout (unless the call has one), its extra_body, and
// the client of its endpoint.
func (p *PluginLLM) route(pluginID, key string, kw map[string]any, req *llm.Request) (llm.Client, error) {
	if p.AuxTask == nil {
		return nil, protocol.Errorf(protocol.CodeNotAvailable, "ctx.llm: auxiliary tasks are not available here")
	}
	r, err := p.AuxTask(pluginID, key)
	if err != nil {
		return nil, err
	}
	if m, _ := kw["model"].(string); m == "" && r.Model != "" {
		req.Model = r.Model
	}
	if _, ok := kw["timeout"].(float64); !ok && r.Timeout > 0 {
		kw["timeout"] = r.Timeout
	}
	if len(r.ExtraBody) > 0 {
		req.Extra = r.ExtraBody
	}
	if r.BaseURL == "" {
		return p.Client, nil
	}
	if p.ClientFor == nil {
		return nil, protocol.Errorf(protocol.CodeNotAvailable, "ctx.llm: auxiliary.%s.base_url is set but this host cannot reach another endpoint", key)
	}
	c, err := p.ClientFor(r.BaseURL, r.APIKey)
	if err != nil {
		return nil, protocol.Errorf(protocol.CodeInvalidArgument, "ctx.llm: auxiliary.%s: %v", key, err)
	}
	return c, nil
}

// gate applies the trust rules; it returns the model to use.
func (p *PluginLLM) gate(pluginID string, kw map[string]any) (string, error) {
	var trust map[string]any
	if p.Trust != nil {
		trust = p.Trust(pluginID)
	}
	allowed := func(key string) bool { b, _ := config.Bool(trust[key]); return b } // yes/on too, as PyYAML reads them
	deny := func(what, key string) error {
		return protocol.Errorf(protocol.CodePermission,
			"plugin %s may not choose the %s for ctx.llm: set plugins.entries.%s.llm.%s: true in config.yaml to trust it", pluginID, what, pluginID, key)
	}
	if s, _ := kw["agent_id"].(string); s != "" && !allowed("allow_agent_id_override") {
		return "", deny("agent", "allow_agent_id_override")
	}
	if s, _ := kw["profile"].(string); s != "" && !allowed("allow_profile_override") {
		return "", deny("auth profile", "allow_profile_override")
	}
	model, _ := kw["model"].(string)
	if model == "" {
		return p.Model, nil
	}
	if at := strings.LastIndex(model, "@"); at > 0 {
		if !allowed("allow_profile_override") {
			return "", deny("auth profile", "allow_profile_override")
		}
		model = model[:at]
	}
	if !allowed("allow_model_override") {
		return "", deny("model", "allow_model_override")
	}
	if list, ok := trust["allowed_models"].([]any); ok {
		for _, m := range list {
			if s, _ := m.(string); s == "*" || s == model {
				return model, nil
			}
		}
		return "", protocol.Errorf(protocol.CodePermission, "plugin %s may not use model %q: it is not in plugins.entries.%s.llm.allowed_models", pluginID, model, pluginID)
	}
	return model, nil
}

func plainMessages(v any) ([]llm.Message, error) {
	list, _ := v.([]any)
	if len(list) == 0 {
		return nil, protocol.Errorf(protocol.CodeInvalidArgument, "ctx.llm.complete: messages must be a non-empty list of {\"role\", \"content\"}")
	}
	b, _ := json.Marshal(list)
	var msgs []llm.Message
	if err := json.Unmarshal(b, &msgs); err != nil {
		return nil, protocol.Errorf(protocol.CodeInvalidArgument, "ctx.llm.complete: messages are not in the OpenAI shape: %v", err)
	}
	return msgs, nil
}

func structuredRequest(req *llm.Request, kw map[string]any) error {
	instructions, _ := kw["instructions"].(string)
	var parts []string
	if strings.TrimSpace(instructions) != "" {
		parts = append(parts, instructions)
	}
	blocks, _ := kw["input"].([]any)
	for i, b := range blocks {
		blk, _ := b.(map[string]any)
		switch blk["type"] {
		case "text":
			if s, _ := blk["text"].(string); s != "" {
				parts = append(parts, s)
			}
		case "image":
			return protocol.Errorf(protocol.CodeInvalidArgument, "ctx.llm.complete_structured: input block %d is an image; this host sends text only so far", i)
		default:
			return protocol.Errorf(protocol.CodeInvalidArgument, "ctx.llm.complete_structured: input block %d has type %v (want \"text\" or \"image\")", i, blk["type"])
		}
	}
	if len(parts) == 0 {
		return protocol.Errorf(protocol.CodeInvalidArgument, "ctx.llm.complete_structured: instructions and input are empty")
	}
	if s, _ := kw["system_prompt"].(string); s != "" {
		req.Messages = append(req.Messages, llm.Message{Role: "system", Content: s})
	}
	req.Messages = append(req.Messages, llm.Message{Role: "user", Content: strings.Join(parts, "\n\n")})
	if schema, ok := kw["json_schema"].(map[string]any); ok {
		name, _ := kw["schema_name"].(string)
		if name == "" {
			name = "result"
		}
		req.ResponseFormat = map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": sanitizeSchemaName(name), "schema": schema}}
	} else if jm, _ := kw["json_mode"].(bool); jm {
		req.ResponseFormat = map[string]any{"type": "json_object"}
	}
	return nil
}

func sanitizeSchemaName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, s)
}

// parseJSONText reads the model's JSON, also from inside a ``` fence.
func parseJSONText(s string) (any, bool) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "```") {
		s = strings.TrimPrefix(s, "```")
		if nl := strings.IndexByte(s, '\n'); nl >= 0 {
			s = s[nl+1:]
		}
		s = strings.TrimSuffix(strings.TrimSpace(s), "```")
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return nil, false
	}
	return v, true
}

func validateAgainst(schema map[string]any, v any) error {
	b, err := json.Marshal(schema)
	if err != nil {
		return err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("json_schema is not a JSON schema: %w", err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return fmt.Errorf("json_schema cannot be used: %w", err)
	}
	return rs.Validate(v)
}
