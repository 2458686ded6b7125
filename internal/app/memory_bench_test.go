package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/llm/llmtest"
)

const benchProvider = `from agent.memory_provider import MemoryProvider


class Bench(MemoryProvider):
    name = "benchmem"

    def is_available(self):
        return True

    def initialize(self, session_id, **kwargs):
        pass

    def get_tool_schemas(self):
        return []

    def prefetch(self, query, *, session_id=""):
        return "the user likes teal"

    def sync_turn(self, user_content, assistant_content, *, session_id="", messages=None):
        pass


def register(ctx):
    ctx.register_memory_provider(Bench())
`

// benchChat is a chat on a fresh home with the instant loopback model; with
// provider set, memory.provider selects a real Python provider.
func benchChat(b *testing.B, provider bool) (*Chat, func()) {
	b.Helper()
	return benchChatWith(b, provider, benchProvider)
}

// benchChatWith is benchChat with the provider's source.
func benchChatWith(b *testing.B, provider bool, src string) (*Chat, func()) {
	b.Helper()
	model := llmtest.NewServer(b)
	model.Enqueue(llmtest.Reply{Content: "ok", Repeat: b.N + 10})
	home := filepath.Join(b.TempDir(), ".hermes")
	dir := filepath.Join(home, "plugins", "memory", "benchmem")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	cfg := "model:\n  default: fake\n  base_url: " + model.URL + "\n"
	if provider {
		cfg += "memory:\n  provider: benchmem\n"
	}
	for path, text := range map[string]string{
		filepath.Join(home, "config.yaml"): cfg, filepath.Join(dir, "plugin.yaml"): "name: benchmem\n",
		filepath.Join(dir, "__init__.py"): src,
	} {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	var errs syncBuffer
	f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: &errs, Err: &errs},
		Env: func(k string) string {
			return map[string]string{"HERMES_HOME": home, "HERMES_NO_CGROUPS": "1", "HERMES_PYTHON": "/usr/bin/python3"}[k]
		}, Clock: time.Now}
	ctx := context.Background()
	h, err := f.Host(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if err := h.Load(ctx); err != nil {
		b.Fatal(err)
	}
	c, err := h.NewChat(ctx, ChatOptions{NoStream: true})
	if err != nil {
		b.Fatal(err)
	}
	if provider && h.memory.External() == nil {
		b.Fatalf("the provider is not active: %s", errs.String())
	}
	return c, func() { c.Close(); h.Close(); f.Close() }
}

func benchTurns(b *testing.B, provider bool) {
	c, done := benchChat(b, provider)
	defer done()
	ctx := context.Background()
	if _, err := c.Run(ctx, "warm up"); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := c.Run(ctx, "which colour do I like?"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTurnNoMemoryProvider is a chat turn with the instant model and the
// built-in memory only: the floor.
func BenchmarkTurnNoMemoryProvider(b *testing.B) { benchTurns(b, false) }

// BenchmarkTurnMemoryProvider is the same turn with a real Python memory
// provider selected: on_turn_start and prefetch before the model call,
// sync_turn and queue_prefetch after it (in the background).
func BenchmarkTurnMemoryProvider(b *testing.B) { benchTurns(b, true) }
