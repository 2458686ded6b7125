package agent_test

import (
	"context"
	"testing"

	"github.com/hermes-go/hermes/internal/agent"
	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/llm/llmtest"
)

// session200 is a 200-message conversation with tool output in it.
func session200() []llm.Message {
	ms := conversation(80, 600) // 161 messages
	for i := 0; len(ms) < 200; i++ {
		ms = withTool(ms, "c"+string(rune('a'+i%26))+string(rune('a'+i/26)), 3000)
	}
	return ms
}

// BenchmarkCompress200 compacts a 200-message session: pruning, the bounds,
// the summariser's input and one auxiliary call to the instant fake model.
// BenchmarkCompressFloor is that auxiliary call alone, with the same request.
func BenchmarkCompress200(b *testing.B) {
	srv := llmtest.NewServer(b)
	client, _ := llm.New(llm.Config{BaseURL: srv.URL, Model: "aux", MaxRetries: -1})
	msgs := session200()
	c := agent.NewCompressor(agent.CompressorConfig{Client: client, ContextLength: 32_000, ProtectLastN: 20})
	srv.Enqueue(llmtest.Reply{Content: "summary", Repeat: b.N})
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		out, err := c.Compress(context.Background(), msgs, agent.CompressOptions{})
		if err != nil || len(out) >= len(msgs) {
			b.Fatalf("%d → %d messages: %v", len(msgs), len(out), err)
		}
	}
}

func BenchmarkCompressFloor(b *testing.B) {
	srv := llmtest.NewServer(b)
	client, _ := llm.New(llm.Config{BaseURL: srv.URL, Model: "aux", MaxRetries: -1})
	c := agent.NewCompressor(agent.CompressorConfig{Client: client, ContextLength: 32_000, ProtectLastN: 20})
	srv.Enqueue(llmtest.Text("summary"))
	if _, err := c.Compress(context.Background(), session200(), agent.CompressOptions{}); err != nil {
		b.Fatal(err)
	}
	r := srv.LastRequest(b)
	req := llm.Request{Model: r.Model, Messages: r.Messages, MaxTokens: 2000}
	srv.Enqueue(llmtest.Reply{Content: "summary", Repeat: b.N})
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := client.Chat(context.Background(), req, nil); err != nil {
			b.Fatal(err)
		}
	}
}
