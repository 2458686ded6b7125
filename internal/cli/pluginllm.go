package cli

import (
	"context"
	"sync"

	"github.com/hermes-go/hermes/internal/agent"
	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/plugins"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// lazyPluginLLM serves ctx.llm in any command (a plugin tool run by `hermes tools
// call`, a plugin CLI command): the model client is built from config.yaml on the
// first call, so commands that never use it pay nothing.
func (a *App) lazyPluginLLM(m *plugins.Manager) pluginLLMFunc {
	var once sync.Once
	var serve pluginLLMFunc
	var buildErr error
	return func(ctx context.Context, pluginID, method string, kw map[string]any) (map[string]any, error) {
		once.Do(func() {
			doc, err := m.Store().Load()
			if err != nil {
				buildErr = err
				return
			}
			dotenv, err := config.ReadDotenv(m.Home().EnvPath())
			if err != nil {
				buildErr = err
				return
			}
			cfg, err := llm.FromConfig(ctx, llm.ModelSection(doc.Map()["model"]), a.Env, dotenv)
			if err != nil {
				buildErr = err
				return
			}
			client, err := llm.New(cfg)
			if err != nil {
				buildErr = err
				return
			}
			serve = a.pluginLLM(m, client, cfg).Serve
		})
		if buildErr != nil {
			return nil, protocol.Errorf(protocol.CodeNotAvailable, "ctx.llm: %v", buildErr)
		}
		return serve(ctx, pluginID, method, kw)
	}
}

// pluginLLM is ctx.llm over client, with the trust rules read live from config.yaml.
func (a *App) pluginLLM(m *plugins.Manager, client llm.Client, cfg llm.Config) *agent.PluginLLM {
	return &agent.PluginLLM{Client: client, Model: cfg.Model, Provider: cfg.Provider,
		Trust: func(id string) map[string]any {
			d, err := m.Store().Load()
			if err != nil {
				return nil // unreadable config trusts nothing
			}
			v, _ := d.GetPath([]string{"plugins", "entries", id, "llm"})
			t, _ := v.(map[string]any)
			return t
		},
		Log: func(id, purpose, model string, u llm.Usage) {
			a.logger().Info("ctx.llm call", "plugin", id, "purpose", purpose, "model", model, "total_tokens", u.TotalTokens)
		}}
}
