package llm_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/llm/llmtest"
)

// Reasoning arrives in reasoning_content (DeepSeek, vLLM) or reasoning
// (OpenRouter), streamed or whole; either way it is kept apart from the answer:
// in Delta.Reasoning and Response.Reasoning, never in the message content.
func TestReasoningFields(t *testing.T) {
	for _, field := range []string{"reasoning_content", "reasoning"} {
		for _, stream := range []bool{true, false} {
			name := field + "/plain"
			if stream {
				name = field + "/stream"
			}
			t.Run(name, func(t *testing.T) {
				srv := llmtest.NewServer(t)
				srv.Enqueue(llmtest.Reply{ChunkSize: 3, Reasoning: "first think, then answer", ReasoningField: field, Content: "the answer"})
				c, _, _ := newClient(t, srv, nil)
				var text, reasoning strings.Builder
				var onDelta func(llm.Delta)
				if stream {
					onDelta = func(d llm.Delta) {
						text.WriteString(d.Content)
						reasoning.WriteString(d.Reasoning)
					}
				}
				resp, err := c.Chat(context.Background(), hello, onDelta)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(srv.LastRequest(t).Body), `"stream":true`) == stream {
					t.Fatalf("stream=%v but the request body is %s", stream, srv.LastRequest(t).Body)
				}
				if resp.Reasoning != "first think, then answer" || resp.Message.Content != "the answer" {
					t.Errorf("response reasoning %q content %q", resp.Reasoning, resp.Message.Content)
				}
				if stream && (reasoning.String() != "first think, then answer" || text.String() != "the answer") {
					t.Errorf("streamed reasoning %q text %q", reasoning.String(), text.String())
				}
			})
		}
	}
}

// A server that names the reasoning both ways in one chunk (some vLLM
// versions) sends the same text twice: it is shown once.
func TestReasoningInBothFields(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Reply{SSE: []string{
		`{"choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"think ","reasoning":"think "}}]}`,
		`{"choices":[{"index":0,"delta":{"reasoning":"more"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`,
		"[DONE]",
	}})
	c, _, _ := newClient(t, srv, nil)
	var reasoning strings.Builder
	resp, err := c.Chat(context.Background(), hello, func(d llm.Delta) { reasoning.WriteString(d.Reasoning) })
	if err != nil {
		t.Fatal(err)
	}
	if reasoning.String() != "think more" || resp.Reasoning != "think more" || resp.Message.Content != "ok" {
		t.Errorf("reasoning streamed %q, assembled %q, content %q", reasoning.String(), resp.Reasoning, resp.Message.Content)
	}
}
