package llm_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/llm"
)

// testProviders are some of the bundled profiles as the host hands them to
// FromConfig (the table itself is internal/bundled's).
var testProviders = map[string]llm.Provider{
	"openrouter": {BaseURL: "https://openrouter.ai/api/v1", KeyEnv: "OPENROUTER_API_KEY"},
	"openai":     {BaseURL: "https://api.openai.com/v1", KeyEnv: "OPENAI_API_KEY"},
	"groq":       {BaseURL: "https://api.groq.com/openai/v1", KeyEnv: "GROQ_API_KEY"},
	"deepseek":   {BaseURL: "https://api.deepseek.com/v1", KeyEnv: "DEEPSEEK_API_KEY"},
	"ollama":     {BaseURL: "http://localhost:11434/v1"},
	"vllm":       {BaseURL: "http://localhost:8000/v1"},
	"custom":     {},
	"lm-studio":  {Name: "lmstudio", BaseURL: "http://localhost:1234/v1"},
	"lmstudio":   {BaseURL: "http://localhost:1234/v1"},
}

func TestFromConfig(t *testing.T) {
	env := map[string]string{"OPENROUTER_API_KEY": "sk-or", "MY_KEY": "sk-mine", "PORT": "9000"}
	dotenv := map[string]string{"DOT_KEY": "sk-dot", "MY_KEY": "sk-shadowed", "OPENAI_API_KEY": "sk-oai"}
	cases := []struct {
		name     string
		settings map[string]any
		want     llm.Config
		wantErr  string
	}{
		{name: "openrouter by default", settings: map[string]any{"default": "anthropic/claude-sonnet-4"},
			want: llm.Config{Model: "anthropic/claude-sonnet-4", Provider: "openrouter", BaseURL: "https://openrouter.ai/api/v1", APIKey: "sk-or"}},
		{name: "provider default url and key from .env", settings: map[string]any{"default": "gpt-5", "provider": "OpenAI"},
			want: llm.Config{Model: "gpt-5", Provider: "openai", BaseURL: "https://api.openai.com/v1", APIKey: "sk-oai"}},
		{name: "explicit key with ${VAR} from the environment first", settings: map[string]any{"default": "m", "base_url": "https://example.com/v1", "api_key": "${MY_KEY}"},
			want: llm.Config{Model: "m", Provider: "custom", BaseURL: "https://example.com/v1", APIKey: "sk-mine"}},
		{name: "${VAR} from .env", settings: map[string]any{"default": "m", "provider": "groq", "api_key": "${DOT_KEY}"},
			want: llm.Config{Model: "m", Provider: "groq", BaseURL: "https://api.groq.com/openai/v1", APIKey: "sk-dot"}},
		{name: "ollama needs no key", settings: map[string]any{"default": "llama3", "provider": "ollama"},
			want: llm.Config{Model: "llama3", Provider: "ollama", BaseURL: "http://localhost:11434/v1"}},
		{name: "local base url with ${VAR} needs no key", settings: map[string]any{"default": "m", "base_url": "http://127.0.0.1:${PORT}/v1", "api_mode": "chat_completions"},
			want: llm.Config{Model: "m", Provider: "custom", BaseURL: "http://127.0.0.1:9000/v1", APIKey: "sk-oai"}},
		{name: "timeouts and retries", settings: map[string]any{"default": "m", "provider": "vllm", "timeout": 30, "stream_idle_timeout": "2.5", "max_retries": uint64(0)},
			want: llm.Config{Model: "m", Provider: "vllm", BaseURL: "http://localhost:8000/v1", Timeout: 30 * time.Second, IdleTimeout: 2500 * time.Millisecond, MaxRetries: -1}},
		{name: "request timeout", settings: map[string]any{"default": "m", "provider": "vllm", "request_timeout": 45},
			want: llm.Config{Model: "m", Provider: "vllm", BaseURL: "http://localhost:8000/v1", RequestTimeout: 45 * time.Second}},
		{name: "bad request timeout", settings: map[string]any{"default": "m", "provider": "vllm", "request_timeout": -1},
			wantErr: `model.request_timeout must be a positive number of seconds, not "-1"`},
		{name: "no section", settings: nil, wantErr: "no model configured: add to config.yaml"},
		{name: "no model", settings: map[string]any{"provider": "openrouter"}, wantErr: "set model.default"},
		{name: "wrong api mode", settings: map[string]any{"default": "m", "api_mode": "codex_responses"}, wantErr: `model.api_mode "codex_responses" is not supported`},
		{name: "missing var", settings: map[string]any{"default": "m", "api_key": "${NOPE}"}, wantErr: "model.api_key refers to ${NOPE}, which is set neither in the environment nor in $HERMES_HOME/.env"},
		{name: "missing key", settings: map[string]any{"default": "m", "provider": "deepseek"}, wantErr: "no API key for deepseek (https://api.deepseek.com/v1): set DEEPSEEK_API_KEY"},
		{name: "missing key custom remote", settings: map[string]any{"default": "m", "base_url": "https://x.example/v1", "api_key": ""},
			want: llm.Config{Model: "m", Provider: "custom", BaseURL: "https://x.example/v1", APIKey: "sk-oai"}},
		{name: "unknown provider", settings: map[string]any{"default": "m", "provider": "acme"}, wantErr: `model.provider "acme" has no default endpoint: set model.base_url (known providers: custom, deepseek, groq, lmstudio, ollama,`},
		{name: "alias", settings: map[string]any{"default": "m", "provider": "LM-Studio"},
			want: llm.Config{Model: "m", Provider: "lmstudio", BaseURL: "http://localhost:1234/v1"}},
		{name: "custom needs a base url", settings: map[string]any{"default": "m", "provider": "custom"}, wantErr: "model.provider custom has no default endpoint: set model.base_url"},
		{name: "bad url", settings: map[string]any{"default": "m", "base_url": "localhost:8000"}, wantErr: "is not an http(s) URL"},
		{name: "bad timeout", settings: map[string]any{"default": "m", "provider": "ollama", "timeout": "soon"}, wantErr: "model.timeout must be a positive number"},
		{name: "bad type", settings: map[string]any{"default": []any{"a"}}, wantErr: "model.default must be a string"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := llm.FromConfig(context.Background(), tc.settings, func(k string) string { return env[k] }, dotenv, testProviders)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			type view struct {
				Model, Provider, BaseURL, APIKey string
				Timeout, IdleTimeout             time.Duration
				MaxRetries                       int
			}
			v := func(c llm.Config) view {
				return view{c.Model, c.Provider, c.BaseURL, c.APIKey, c.Timeout, c.IdleTimeout, c.MaxRetries}
			}
			if v(got) != v(tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestModelSection(t *testing.T) {
	if got := llm.ModelSection("openai/gpt-5"); got["default"] != "openai/gpt-5" {
		t.Errorf("string form: %v", got)
	}
	m := map[string]any{"default": "x"}
	if got := llm.ModelSection(m); got["default"] != "x" {
		t.Errorf("map form: %v", got)
	}
	for _, v := range []any{nil, "  ", 3} {
		if got := llm.ModelSection(v); got != nil {
			t.Errorf("ModelSection(%v) = %v", v, got)
		}
	}
}
