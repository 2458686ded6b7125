package pluginsdk

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hermes-go/hermes/pkg/protocol"
)

// ProviderProfile is upstream's ProviderProfile for Go plugins: a model
// provider hermes can talk to (model.provider, --provider, /model
// provider:model select it by Name or one of Aliases). The fields travel once
// at registration; the hooks are optional, and hermes calls only those that
// are set (model_provider.call), so a profile without hooks costs no round
// trip per request.
type ProviderProfile struct {
	Name           string
	Aliases        []string
	DisplayName    string
	Description    string
	BaseURL        string
	ModelsURL      string
	EnvVars        []string // the key variable, and "<X>_BASE_URL" to override BaseURL
	APIMode        string   // "" or "chat_completions", the only mode hermes speaks
	DefaultHeaders map[string]string
	FallbackModels []string

	// PrepareMessages rewrites the messages of every request.
	PrepareMessages func(ctx context.Context, messages []map[string]any) ([]map[string]any, error)
	// BuildExtraBody returns fields merged into every request's body.
	BuildExtraBody func(ctx context.Context, sessionID, model string) (map[string]any, error)
	// FetchModels lists the provider's models for `hermes model list`; nil
	// ids (and no error) fall back to GET {ModelsURL or BaseURL}/models.
	FetchModels func(ctx context.Context, apiKey, baseURL string, timeout time.Duration) ([]string, error)
}

// Hooks names the hooks p sets, by upstream's method names.
func (p *ProviderProfile) Hooks() []string {
	var out []string
	if p.PrepareMessages != nil {
		out = append(out, "prepare_messages")
	}
	if p.BuildExtraBody != nil {
		out = append(out, "build_extra_body")
	}
	if p.FetchModels != nil {
		out = append(out, "fetch_models")
	}
	return out
}

// Details are the registration's fields as the Python bridge sends them.
func (p *ProviderProfile) Details() map[string]any {
	strs := func(v []string) []any {
		out := make([]any, len(v))
		for i, s := range v {
			out[i] = s
		}
		return out
	}
	headers := make(map[string]any, len(p.DefaultHeaders))
	for k, v := range p.DefaultHeaders {
		headers[k] = v
	}
	return map[string]any{
		"base_url": p.BaseURL, "models_url": p.ModelsURL, "api_mode": p.APIMode,
		"display_name": p.DisplayName, "description": p.Description,
		"env_vars": strs(p.EnvVars), "aliases": strs(p.Aliases), "fallback_models": strs(p.FallbackModels),
		"default_headers": headers, "hooks": strs(p.Hooks()),
	}
}

// ServeModelProvider runs one model_provider.call hook on p (the SDK's server
// and hermes' compiled-in plugins both use it). Results have the wire shapes
// of protocol.MethodModelProviderCall.
func ServeModelProvider(ctx context.Context, p *ProviderProfile, method string, kwargs map[string]any) (any, error) {
	str := func(k string) string { s, _ := kwargs[k].(string); return s }
	switch method {
	case "prepare_messages":
		if p.PrepareMessages == nil {
			break
		}
		b, _ := json.Marshal(kwargs["messages"])
		var msgs []map[string]any
		_ = json.Unmarshal(b, &msgs)
		out, err := p.PrepareMessages(ctx, msgs)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = []map[string]any{}
		}
		return map[string]any{"messages": out}, nil
	case "build_extra_body":
		if p.BuildExtraBody == nil {
			break
		}
		out, err := p.BuildExtraBody(ctx, str("session_id"), str("model"))
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = map[string]any{}
		}
		return out, nil
	case "fetch_models":
		if p.FetchModels == nil {
			break
		}
		secs, _ := kwargs["timeout"].(float64)
		if secs <= 0 {
			secs = 8
		}
		ids, err := p.FetchModels(ctx, str("api_key"), str("base_url"), time.Duration(secs*float64(time.Second)))
		if err != nil || ids == nil {
			return nil, err
		}
		return ids, nil
	default:
		return nil, protocol.Errorf(protocol.CodeInvalidParams, "model provider hook %q is not one the host calls", method)
	}
	return nil, protocol.Errorf(protocol.CodeNotFound, "model provider %s does not set %s", p.Name, method)
}

// RegisterProvider (remote): the profile's hooks are served by this process.
func (c *remoteContext) RegisterProvider(p ProviderProfile) error {
	if p.Name == "" {
		return fmt.Errorf("RegisterProvider: the profile needs a name")
	}
	// Before the host hears of it: it may call a hook at once.
	c.s.mu.Lock()
	if c.s.providers == nil {
		c.s.providers = map[string]*ProviderProfile{}
	}
	c.s.providers[p.Name] = &p
	c.s.mu.Unlock()
	var res protocol.RegisterResult
	if err := c.call(protocol.MethodRegisterOther, protocol.RegisterOtherParams{Registrar: "register_provider", Name: p.Name, Details: p.Details()}, &res); err != nil {
		return err
	}
	if !res.Registered {
		return fmt.Errorf("model provider %s was not registered: %s", p.Name, res.Warning)
	}
	return nil
}

func (s *server) serveModelProvider(ctx context.Context, params json.RawMessage) (any, error) {
	var p protocol.ModelProviderCallParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, protocol.Errorf(protocol.CodeInvalidParams, "%v", err)
	}
	s.mu.Lock()
	prof := s.providers[p.Name]
	s.mu.Unlock()
	if prof == nil {
		return nil, protocol.Errorf(protocol.CodeNotFound, "this plugin registered no model provider %q", p.Name)
	}
	out, err := ServeModelProvider(ctx, prof, p.Method, p.Kwargs)
	if err != nil {
		return nil, handlerErr(err, "ProviderError")
	}
	return out, nil
}
