package app

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/plugins/registry"
	"github.com/hermes-go/hermes/internal/termsafe"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// providerHookTimeout bounds one prepare_messages / build_extra_body call: a
// hung plugin fails the request instead of holding the turn forever.
const providerHookTimeout = 10 * time.Second

// pluginProviders are the loaded register_provider profiles (the bundled
// ones and the plugins') as llm.Providers, by name and by alias, each as
// pluginProvider resolves it.
func (h *Host) pluginProviders() map[string]llm.Provider {
	if h.Registry == nil {
		return nil
	}
	regs := h.Registry.Providers(registry.ModelProvider)
	out := make(map[string]llm.Provider, 2*len(regs))
	for _, p := range regs {
		for _, n := range append([]string{p.Name}, detailStrs(p.Details, "aliases")...) {
			if _, done := out[n]; done {
				continue
			}
			if w, ok := pickProvider(regs, n); ok {
				out[n] = asLLMProvider(w)
			}
		}
	}
	return out
}

func asLLMProvider(p registry.Provider) llm.Provider {
	lp := llm.Provider{Name: p.Name, BaseURL: detailStr(p.Details, "base_url")}
	for _, v := range detailStrs(p.Details, "env_vars") {
		switch {
		case strings.HasSuffix(v, "_BASE_URL"):
			lp.BaseURLEnv = v
		case lp.KeyEnv == "":
			lp.KeyEnv = v
		}
	}
	if hd, ok := p.Details["default_headers"].(map[string]any); ok && len(hd) > 0 {
		lp.Headers = map[string]string{}
		for k, v := range hd {
			if s, ok := v.(string); ok {
				lp.Headers[k] = s
			}
		}
	}
	return lp
}

// pluginProvider finds the registration behind a provider name or alias
// (any case).
func (h *Host) pluginProvider(name string) (registry.Provider, bool) {
	if h.Registry == nil || name == "" {
		return registry.Provider{}, false
	}
	return pickProvider(h.Registry.Providers(registry.ModelProvider), strings.ToLower(name))
}

// pickProvider resolves name over regs: a plugin's profile beats a bundled
// one (the seed: a user provider replaces a bundled one of the same name),
// then an exact name beats an alias, then the last registration of a name
// wins (upstream's register_provider) and the first of an alias.
func pickProvider(regs []registry.Provider, name string) (registry.Provider, bool) {
	var best registry.Provider
	rank := 0 // 4 plugin name, 3 plugin alias, 2 bundled name, 1 bundled alias
	for _, p := range regs {
		r := 0
		if p.Name == name {
			r = 2
		} else if slices.Contains(detailStrs(p.Details, "aliases"), name) {
			r = 1
		}
		if r == 0 {
			continue
		}
		if !p.Bundled {
			r += 2
		}
		if r > rank || (r == rank && r%2 == 0) {
			best, rank = p, r
		}
	}
	return best, rank > 0
}

// llmConfig is llm.FromConfig over the bundled and the plugins'
// providers, with the plugin profile's hooks when it selects one.
func (h *Host) llmConfig(ctx context.Context, section map[string]any, dotenv map[string]string) (llm.Config, error) {
	cfg, err := llm.FromConfig(ctx, section, h.f.Env, dotenv, h.pluginProviders())
	if err != nil {
		return cfg, err
	}
	if p, ok := h.pluginProvider(cfg.Provider); ok {
		if mode := detailStr(p.Details, "api_mode"); mode != "" && mode != "chat_completions" {
			return cfg, fmt.Errorf("provider %s (plugin %s) has api_mode %q; hermes speaks chat_completions only", p.Name, p.Plugin, termsafe.Line(mode))
		}
		if hooks := detailStrs(p.Details, "hooks"); len(hooks) > 0 && p.Conn != nil {
			cfg.Profile = &pluginProfile{p: p, hooks: hooks}
		}
	}
	return cfg, nil
}

// pluginProfile calls a plugin profile's overridden hooks through its
// process; hooks it does not override cost no round trip.
type pluginProfile struct {
	p     registry.Provider
	hooks []string
}

func (pp *pluginProfile) has(hook string) bool {
	for _, h := range pp.hooks {
		if h == hook {
			return true
		}
	}
	return false
}

func (pp *pluginProfile) call(ctx context.Context, hook string, kwargs map[string]any) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, providerHookTimeout)
	defer cancel()
	raw, err := pp.p.Conn.Call(ctx, protocol.MethodModelProviderCall, protocol.ModelProviderCallParams{Name: pp.p.Name, Method: hook, Kwargs: kwargs})
	if err != nil {
		return nil, fmt.Errorf("%s() of plugin %s failed: %s", hook, pp.p.Plugin, termsafe.Line(err.Error()))
	}
	return raw, nil
}

func (pp *pluginProfile) PrepareMessages(ctx context.Context, msgs []llm.Message) ([]llm.Message, error) {
	if !pp.has("prepare_messages") {
		return msgs, nil
	}
	raw, err := pp.call(ctx, "prepare_messages", map[string]any{"messages": msgs})
	if err != nil {
		return nil, err
	}
	var res struct {
		Messages []llm.Message `json:"messages"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("prepare_messages() of plugin %s returned something that is not a list of messages: %w", pp.p.Plugin, err)
	}
	return res.Messages, nil
}

func (pp *pluginProfile) ExtraBody(ctx context.Context, model string) (map[string]any, error) {
	if !pp.has("build_extra_body") {
		return nil, nil
	}
	raw, err := pp.call(ctx, "build_extra_body", map[string]any{"model": model})
	if err != nil {
		return nil, err
	}
	var extra map[string]any
	if err := json.Unmarshal(raw, &extra); err != nil {
		return nil, fmt.Errorf("build_extra_body() of plugin %s returned something that is not a dict: %w", pp.p.Plugin, err)
	}
	return extra, nil
}

func detailStr(d map[string]any, key string) string {
	s, _ := d[key].(string)
	return strings.TrimSpace(s)
}

func detailStrs(d map[string]any, key string) []string {
	var out []string
	switch v := d[key].(type) {
	case []any:
		for _, x := range v {
			if s, ok := x.(string); ok && s != "" {
				out = append(out, s)
			}
		}
	case []string:
		out = v
	}
	return out
}
