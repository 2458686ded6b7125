package bundled

import (
	"github.com/hermes-go/hermes/internal/plugins/manifest"
	"github.com/hermes-go/hermes/pkg/pluginsdk"
)

// ModelProviderCategory is the sub-category the bundled model providers
// live in, as upstream's plugins/model-providers/<name>/: their key is
// "model-providers/<name>", so a user plugin of that key replaces one.
const ModelProviderCategory = "model-providers"

// providerProfiles are hermes' own model providers: ordinary
// register_provider profiles of compiled-in plugins (no hooks, so a request
// through one costs nothing beyond the HTTP call). Bundled model providers
// load without a plugins.enabled entry, as upstream's.
var providerProfiles = []pluginsdk.ProviderProfile{
	{Name: "openrouter", DisplayName: "OpenRouter", Description: "Many models behind one API (hermes' default provider)",
		BaseURL: "https://openrouter.ai/api/v1", EnvVars: []string{"OPENROUTER_API_KEY"}},
	{Name: "openai", DisplayName: "OpenAI", BaseURL: "https://api.openai.com/v1", EnvVars: []string{"OPENAI_API_KEY"}},
	{Name: "nous", DisplayName: "Nous Research", Aliases: []string{"nousresearch"},
		BaseURL: "https://inference-api.nousresearch.com/v1", EnvVars: []string{"NOUS_API_KEY"}},
	{Name: "groq", DisplayName: "Groq", BaseURL: "https://api.groq.com/openai/v1", EnvVars: []string{"GROQ_API_KEY"}},
	{Name: "together", DisplayName: "Together AI", BaseURL: "https://api.together.xyz/v1", EnvVars: []string{"TOGETHER_API_KEY"}},
	{Name: "deepseek", DisplayName: "DeepSeek", BaseURL: "https://api.deepseek.com/v1", EnvVars: []string{"DEEPSEEK_API_KEY"}},
	{Name: "mistral", DisplayName: "Mistral AI", BaseURL: "https://api.mistral.ai/v1", EnvVars: []string{"MISTRAL_API_KEY"}},
	{Name: "fireworks", DisplayName: "Fireworks AI", BaseURL: "https://api.fireworks.ai/inference/v1", EnvVars: []string{"FIREWORKS_API_KEY"}},
	{Name: "xai", DisplayName: "xAI", Aliases: []string{"x-ai"}, BaseURL: "https://api.x.ai/v1", EnvVars: []string{"XAI_API_KEY"}},
	{Name: "ollama", DisplayName: "Ollama (local)", BaseURL: "http://localhost:11434/v1"},
	{Name: "lmstudio", DisplayName: "LM Studio (local)", Aliases: []string{"lm-studio", "lm_studio"}, BaseURL: "http://localhost:1234/v1"},
	{Name: "vllm", DisplayName: "vLLM (local)", BaseURL: "http://localhost:8000/v1"},
	{Name: "llamacpp", DisplayName: "llama.cpp server (local)", Aliases: []string{"llama.cpp", "llama-cpp"}, BaseURL: "http://localhost:8080/v1"},
	// custom has no endpoint of its own: model.base_url says where, and the
	// key falls back to OPENAI_API_KEY.
	{Name: "custom", DisplayName: "Custom OpenAI-compatible endpoint", Description: "Any endpoint set in model.base_url"},
}

// modelProviderPlugins turns the table into one compiled-in plugin per profile.
func modelProviderPlugins() []Plugin {
	out := make([]Plugin, 0, len(providerProfiles))
	for i := range providerProfiles {
		p := providerProfiles[i]
		desc := p.Description
		if desc == "" {
			desc = p.DisplayName + " model provider"
		}
		m := &manifest.Manifest{
			Name: p.Name, Version: "1.0.0", Description: desc, Author: "hermes", Kind: "model-provider", ManifestVersion: 1,
		}
		m.Raw = map[string]any{"name": m.Name, "version": m.Version, "description": m.Description, "author": m.Author, "kind": m.Kind}
		out = append(out, Plugin{Manifest: m, Category: ModelProviderCategory,
			Plugin: pluginsdk.PluginFunc(func(ctx pluginsdk.Context) error { return ctx.RegisterProvider(p) })})
	}
	return out
}
