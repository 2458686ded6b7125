package llm

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// bodyTransport answers every request with one fixed streamed body.
type bodyTransport string

func (b bodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(strings.NewReader(string(b))), Request: r}, nil
}

// FuzzStream: whatever a server streams, Chat neither panics nor hangs, and on
// success the text it returns is exactly what it streamed, and every tool call has
// an id and a type.
func FuzzStream(f *testing.F) {
	for _, s := range []string{
		"data: {\"choices\":[{\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
		"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"x\\\"\"}}]}}]}\n\n" +
			"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\":1}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n",
		": keep-alive\n\nevent: x\ndata: {\"choices\":[{\"delta\":{\"content\":[{\"type\":\"text\",\"text\":\"a\"}]}}],\"usage\":{\"total_tokens\":1}}\n\n",
		"data: {\"error\":{\"code\":500,\"message\":\"x\"}}\n\n",
		"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"a\",\"function\":{\"name\":\"f\"}},{\"id\":\"b\"}]}}]}\ndata: [DONE]",
		"<html>",
		"data: {\"choices\": [",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		c, err := New(Config{BaseURL: "http://fuzz.invalid/v1", Model: "m", MaxRetries: -1,
			HTTPClient: &http.Client{Transport: bodyTransport(body)}})
		if err != nil {
			t.Fatal(err)
		}
		var streamed strings.Builder
		resp, err := c.Chat(context.Background(), Request{Messages: []Message{{Role: "user", Content: "x"}}}, func(d Delta) {
			streamed.WriteString(d.Content)
		})
		if err != nil {
			return
		}
		if resp.Message.Content != streamed.String() {
			t.Fatalf("returned %q, streamed %q", resp.Message.Content, streamed.String())
		}
		for _, tc := range resp.Message.ToolCalls {
			if tc.ID == "" || tc.Type == "" {
				t.Fatalf("tool call without id or type: %+v", tc)
			}
		}
	})
}
