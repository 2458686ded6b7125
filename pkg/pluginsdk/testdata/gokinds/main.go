// Command gokinds is a test plugin (internal/cli/testdata/script/go_provider_engine.txtar):
// a Go plugin registers a model provider (a profile with all three hooks) and
// a context engine through the SDK, served over model_provider.call and
// context_engine.call as a Python plugin's are.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/hermes-go/hermes/pkg/pluginsdk"
)

// trimmer keeps the first and the last message with a digest between, once
// a request reaches half the model's window (or when forced: /compress).
type trimmer struct {
	pluginsdk.ContextEngineBase
	threshold int
	model     string
}

func (t *trimmer) Name() string { return "gotrim" }

func (t *trimmer) UpdateModel(_ context.Context, model string, contextLength int) error {
	t.model, t.threshold = model, contextLength/2
	return nil
}

func (t *trimmer) ShouldCompress(_ context.Context, promptTokens int) (bool, error) {
	return t.threshold > 0 && promptTokens >= t.threshold, nil
}

func (t *trimmer) Compress(_ context.Context, msgs []map[string]any, o pluginsdk.CompressOptions) ([]map[string]any, error) {
	if len(msgs) < 3 {
		return msgs, nil
	}
	digest := map[string]any{"role": "user", "content": fmt.Sprintf("GO-DIGEST of %d messages (focus %q, force %v, model %s)", len(msgs)-2, o.FocusTopic, o.Force, t.model)}
	return []map[string]any{msgs[0], digest, msgs[len(msgs)-1]}, nil
}

func register(ctx pluginsdk.Context) error {
	err := ctx.RegisterProvider(pluginsdk.ProviderProfile{
		Name:           "goloop",
		Aliases:        []string{"go-loop"},
		BaseURL:        os.Getenv("FAKELLM_URL"),
		EnvVars:        []string{"GOLOOP_KEY"},
		DefaultHeaders: map[string]string{"X-Go-Provider": "go-1"},
		PrepareMessages: func(_ context.Context, msgs []map[string]any) ([]map[string]any, error) {
			for i := len(msgs) - 1; i >= 0; i-- {
				if msgs[i]["role"] == "user" {
					if s, _ := msgs[i]["content"].(string); s == "break" {
						return nil, fmt.Errorf("prepare broke on purpose")
					}
					msgs[i]["content"] = fmt.Sprintf("[go] %v", msgs[i]["content"])
					break
				}
			}
			return msgs, nil
		},
		BuildExtraBody: func(_ context.Context, _, model string) (map[string]any, error) {
			return map[string]any{"go_extra": map[string]any{"model": model}}, nil
		},
		FetchModels: func(_ context.Context, apiKey, _ string, timeout time.Duration) ([]string, error) {
			small := "go-small-no-key"
			if apiKey == "sk-go" {
				small = "go-small-with-key"
			}
			return []string{"go-large", small, fmt.Sprintf("timeout-%s", timeout)}, nil
		},
	})
	if err != nil {
		return err
	}
	return ctx.RegisterContextEngine(&trimmer{})
}

func main() { pluginsdk.Serve(pluginsdk.PluginFunc(register)) }
