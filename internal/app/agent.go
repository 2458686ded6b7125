package app

import (
	"context"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hermes-go/hermes/internal/agent"
	"github.com/hermes-go/hermes/internal/capability"
	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/gateway"
	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/plugins/hostapi"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// pluginLLMFunc serves ctx.llm.complete / complete_structured for one plugin
// (method "complete" or "complete_structured").
type pluginLLMFunc func(ctx context.Context, pluginID, method string, kwargs map[string]any) (map[string]any, error)

// agentServices are the agent's facades as the plugins of one command reach
// them: ctx.llm from the first command on (the chat replaces the lazy client
// with its own), ctx.inject_message only while a chat session runs.
type agentServices struct {
	inject atomic.Pointer[func(text, role string) bool]
	llm    atomic.Pointer[pluginLLMFunc]
}

var _ hostapi.AgentServices = (*agentServices)(nil)

func (s *agentServices) setInjector(f func(text, role string) bool) {
	if f == nil {
		s.inject.Store(nil)
		return
	}
	s.inject.Store(&f)
}

func (s *agentServices) setLLM(f pluginLLMFunc) { s.llm.Store(&f) }

func (s *agentServices) InjectMessage(text, role string) (accepted, ok bool) {
	f := s.inject.Load()
	if f == nil {
		return false, false
	}
	return (*f)(text, role), true
}

func (s *agentServices) CompleteLLM(ctx context.Context, pluginID, method string, kwargs map[string]any) (map[string]any, bool, error) {
	f := s.llm.Load()
	if f == nil {
		return nil, false, nil
	}
	res, err := (*f)(ctx, pluginID, method, kwargs)
	return res, true, err
}

// lazyPluginLLM serves ctx.llm in any command (a plugin tool run by `hermes tools
// call`, a plugin CLI command): the model client is built from config.yaml on the
// first call, so commands that never use it pay nothing.
func (h *Host) lazyPluginLLM() pluginLLMFunc {
	var once sync.Once
	var serve pluginLLMFunc
	var buildErr error
	return func(ctx context.Context, pluginID, method string, kw map[string]any) (map[string]any, error) {
		once.Do(func() {
			doc, err := h.Store().Load()
			if err != nil {
				buildErr = err
				return
			}
			dotenv, err := config.ReadDotenv(h.home.EnvPath())
			if err != nil {
				buildErr = err
				return
			}
			cfg, err := h.llmConfig(ctx, llm.ModelSection(doc.Map()["model"]), dotenv)
			if err != nil {
				buildErr = err
				return
			}
			client, err := llm.New(cfg)
			if err != nil {
				buildErr = err
				return
			}
			serve = h.pluginLLM(client, cfg).Serve
		})
		if buildErr != nil {
			return nil, protocol.Errorf(protocol.CodeNotAvailable, "ctx.llm: %v", buildErr)
		}
		return serve(ctx, pluginID, method, kw)
	}
}

// pluginLLM is ctx.llm over client, with the trust rules read live from config.yaml.
func (h *Host) pluginLLM(client llm.Client, cfg llm.Config) *agent.PluginLLM {
	return &agent.PluginLLM{Client: client, Model: cfg.Model, Provider: cfg.Provider,
		Trust: func(id string) map[string]any {
			d, err := h.Store().Load()
			if err != nil {
				return nil // unreadable config trusts nothing
			}
			v, _ := d.GetPath([]string{"plugins", "entries", id, "llm"})
			t, _ := v.(map[string]any)
			return t
		},
		Log: func(id, purpose, model string, u llm.Usage) {
			h.f.Logger().Info("ctx.llm call", "plugin", id, "purpose", purpose, "model", model, "total_tokens", u.TotalTokens)
		},
		AuxTask: h.auxRoute,
		ClientFor: func(baseURL, apiKey string) (llm.Client, error) {
			c := cfg
			c.BaseURL, c.APIKey = baseURL, apiKey
			// Another endpoint: the main provider's headers and hooks stay with it.
			c.Headers, c.Profile = nil, nil
			return llm.New(c)
		}}
}

// auxRoute resolves ctx.llm's task=key for plugin id: a task the plugin
// registered, or (with the llm.task_override capability) one of upstream's
// built-in keys; its routing is auxiliary.<key> of config.yaml over the defaults.
func (h *Host) auxRoute(id, key string) (agent.AuxRoute, error) {
	doc, err := h.Store().Load()
	if err != nil {
		return agent.AuxRoute{}, protocol.Errorf(protocol.CodeRuntimeError, "ctx.llm: config.yaml: %v", err)
	}
	var defaults map[string]any
	t, ok := h.Registry.AuxTask(key)
	switch {
	case ok && t.Plugin == id:
		defaults = t.Defaults
	case ok:
		return agent.AuxRoute{}, protocol.Errorf(protocol.CodePermission, "plugin %s may not use auxiliary task '%s': it belongs to plugin %s", id, key, t.Plugin)
	case hostapi.BuiltinAuxTasks[key]:
		if granted, _ := capability.Granted(doc.Map(), id, "llm.task_override"); !granted {
			return agent.AuxRoute{}, protocol.Errorf(protocol.CodePermission,
				"plugin %s may not route ctx.llm through the built-in auxiliary task '%s': set plugins.entries.%s.llm.allow_task_override: true in config.yaml to trust it", id, key, id)
		}
		defaults = hostapi.AuxDefaults()
	default:
		return agent.AuxRoute{}, protocol.Errorf(protocol.CodeInvalidArgument, "ctx.llm: no auxiliary task '%s'; register it first with ctx.register_auxiliary_task('%s', display_name=..., description=...)", key, key)
	}
	merged := maps.Clone(defaults)
	if v, _ := doc.GetPath([]string{"auxiliary", key}); v != nil {
		block, ok := v.(map[string]any)
		if !ok {
			return agent.AuxRoute{}, protocol.Errorf(protocol.CodeInvalidArgument, "ctx.llm: auxiliary.%s in config.yaml must be a mapping, not %T", key, v)
		}
		maps.Copy(merged, block)
	}
	str := func(k string) string { s, _ := merged[k].(string); return strings.TrimSpace(s) }
	r := agent.AuxRoute{Key: key, Model: str("model"), BaseURL: str("base_url"), APIKey: str("api_key")}
	switch v := merged["timeout"].(type) {
	case int:
		r.Timeout = float64(v)
	case int64:
		r.Timeout = float64(v)
	case uint64:
		r.Timeout = float64(v)
	case float64:
		r.Timeout = v
	}
	r.ExtraBody, _ = merged["extra_body"].(map[string]any)
	return r, nil
}

// gatewayServices are the running gateway as the plugins of one command reach
// it: bound by `hermes gateway run` while its runner serves, nil otherwise.
type gatewayServices struct {
	cur atomic.Pointer[gatewayBinding]
}

var _ hostapi.GatewayServices = (*gatewayServices)(nil)

func (s *gatewayServices) Runner() hostapi.GatewayRunner {
	if b := s.cur.Load(); b != nil {
		return b
	}
	return nil // a nil *gatewayBinding would be a non-nil interface
}

func (s *gatewayServices) bind(b *gatewayBinding) { s.cur.Store(b) }

// gatewayBinding is one runner and its log.
type gatewayBinding struct {
	r      *gateway.Runner
	log    *slog.Logger
	owners *gatewayOwners
}

func (b *gatewayBinding) Adapter(name string) (platform.Adapter, bool) { return b.r.Adapter(name) }

func (b *gatewayBinding) Inject(ctx context.Context, pluginID, key, text string) bool {
	if handled, ok := b.owners.inject(ctx, pluginID, key, text); handled {
		return ok
	}
	return b.r.Inject(ctx, pluginID, key, text)
}

func (b *gatewayBinding) Logger() *slog.Logger { return b.log }
