package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/llm/llmtest"
)

// sleeps records the waits between attempts instead of waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

type retry struct {
	attempt int
	reason  string
	wait    time.Duration
}

func newClient(t *testing.T, srv *llmtest.Server, mod func(*llm.Config)) (llm.Client, *sleeps, *[]retry) {
	t.Helper()
	sl := &sleeps{}
	var retries []retry
	cfg := llm.Config{BaseURL: srv.URL, Model: "fake-model", APIKey: "sk-test", Sleep: sl.sleep,
		OnRetry: func(attempt int, err error, wait time.Duration) {
			var ae *llm.APIError
			errors.As(err, &ae)
			retries = append(retries, retry{attempt, ae.Reason, wait})
		}}
	if mod != nil {
		mod(&cfg)
	}
	c, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, sl, &retries
}

var hello = llm.Request{Messages: []llm.Message{{Role: "user", Content: "hi"}}}

func TestChat(t *testing.T) {
	cases := []struct {
		name     string
		script   []llmtest.Reply
		stream   bool
		cfg      func(*llm.Config)
		wantText string
		wantTool []llm.FunctionCall
		wantErr  string // substring; "" means success
		reason   string // APIError.Reason when wantErr is set
		status   int
		requests int             // requests the server saw
		waits    []time.Duration // exact waits (Retry-After)
		nwaits   int             // or just how many
	}{
		{name: "text", script: []llmtest.Reply{llmtest.Text("hello there")}, wantText: "hello there", requests: 1},
		{name: "text streamed", stream: true, script: []llmtest.Reply{{Content: "a longer answer, streamed in pieces", ChunkSize: 3}},
			wantText: "a longer answer, streamed in pieces", requests: 1},
		{name: "parallel tool calls", script: []llmtest.Reply{llmtest.ToolCalls(
			llmtest.Call("read_file", map[string]any{"path": "a.txt"}),
			llmtest.Call("terminal", map[string]any{"command": "ls -l"}))},
			wantTool: []llm.FunctionCall{{Name: "read_file", Arguments: `{"path":"a.txt"}`}, {Name: "terminal", Arguments: `{"command":"ls -l"}`}}, requests: 1},
		{name: "parallel tool calls streamed", stream: true, script: []llmtest.Reply{{ChunkSize: 2, Content: "let me look", ToolCalls: []llmtest.CallReply{
			llmtest.Call("read_file", map[string]any{"path": "a.txt"}),
			llmtest.Call("terminal", map[string]any{"command": "ls -l"})}}},
			wantText: "let me look",
			wantTool: []llm.FunctionCall{{Name: "read_file", Arguments: `{"path":"a.txt"}`}, {Name: "terminal", Arguments: `{"command":"ls -l"}`}}, requests: 1},
		{name: "malformed tool arguments are passed through", script: []llmtest.Reply{llmtest.ToolCalls(llmtest.Call("read_file", `{"path": "a.txt"`))},
			wantTool: []llm.FunctionCall{{Name: "read_file", Arguments: `{"path": "a.txt"`}}, requests: 1},
		{name: "429 then success honours Retry-After", script: []llmtest.Reply{llmtest.RateLimited("7"), llmtest.Text("ok")},
			wantText: "ok", requests: 2, waits: []time.Duration{7 * time.Second}},
		{name: "429 streamed then success", stream: true, script: []llmtest.Reply{llmtest.RateLimited("0.25"), llmtest.Text("ok")},
			wantText: "ok", requests: 2, waits: []time.Duration{250 * time.Millisecond}},
		{name: "retry-after-ms wins", script: []llmtest.Reply{{Status: 429, Headers: map[string]string{"Retry-After-Ms": "1500"}, RetryAfter: "30"}, llmtest.Text("ok")},
			wantText: "ok", requests: 2, waits: []time.Duration{1500 * time.Millisecond}},
		{name: "500 twice then success", script: []llmtest.Reply{{Status: 500, Repeat: 2}, llmtest.Text("ok")},
			wantText: "ok", requests: 3, nwaits: 2},
		{name: "500 until retries run out", script: []llmtest.Reply{{Status: 502, Error: "upstream down", Repeat: 5}},
			wantErr: "HTTP 502: upstream down", reason: llm.ReasonServerError, status: 502, requests: 4, nwaits: 3},
		{name: "no retries when disabled", cfg: func(c *llm.Config) { c.MaxRetries = -1 }, script: []llmtest.Reply{{Status: 503}},
			wantErr: "HTTP 503", reason: llm.ReasonServerError, status: 503, requests: 1},
		{name: "400 is not retried", script: []llmtest.Reply{llmtest.Status(400, "context too long"), llmtest.Text("never")},
			wantErr: "HTTP 400: context too long", reason: llm.ReasonBadRequest, status: 400, requests: 1},
		{name: "401 says to check the key", script: []llmtest.Reply{llmtest.Status(401, "invalid api key")},
			wantErr: "check model.api_key", reason: llm.ReasonAuth, status: 401, requests: 1},
		{name: "404 says to check the url", stream: true, script: []llmtest.Reply{llmtest.Status(404, "no such model")},
			wantErr: "check model.base_url", reason: llm.ReasonNotFound, status: 404, requests: 1},
		{name: "malformed JSON is retried", script: []llmtest.Reply{llmtest.Malformed(), llmtest.Text("ok")},
			wantText: "ok", requests: 2, nwaits: 1},
		{name: "malformed JSON", cfg: func(c *llm.Config) { c.MaxRetries = -1 }, script: []llmtest.Reply{llmtest.Malformed()},
			wantErr: "/v1/chat/completions failed: the response is not valid JSON", reason: llm.ReasonMalformed, requests: 1},
		{name: "JSON without choices", cfg: func(c *llm.Config) { c.MaxRetries = -1 }, script: []llmtest.Reply{{Raw: `{"id":"x","choices":[]}`}},
			wantErr: "no choices", reason: llm.ReasonMalformed, requests: 1},
		{name: "HTML page", script: []llmtest.Reply{llmtest.HTML(), llmtest.Text("never")},
			wantErr: `HTML page instead of JSON ("Sign in") (is model.base_url right?`, reason: llm.ReasonHTML, requests: 1},
		{name: "HTML page streamed", stream: true, script: []llmtest.Reply{llmtest.HTML()},
			wantErr: "HTML page", reason: llm.ReasonHTML, requests: 1},
		{name: "HTML error page", script: []llmtest.Reply{{Status: 502, Raw: "<html><title>Bad Gateway</title></html>", ContentType: "text/html"}, llmtest.Text("ok")},
			wantText: "ok", requests: 2, nwaits: 1},
		{name: "provider error in a 200", cfg: func(c *llm.Config) { c.MaxRetries = -1 }, script: []llmtest.Reply{{Raw: `{"error":{"code":502,"message":"provider overloaded"}}`}},
			wantErr: "provider overloaded", reason: llm.ReasonProviderError, status: 502, requests: 1},
		{name: "hang times out", cfg: func(c *llm.Config) { c.MaxRetries = -1; c.Timeout = 50 * time.Millisecond },
			script: []llmtest.Reply{llmtest.Hang()}, wantErr: "no complete response within 50ms", reason: llm.ReasonTimeout, requests: 1},
		{name: "hang then success", cfg: func(c *llm.Config) { c.Timeout = 50 * time.Millisecond },
			script: []llmtest.Reply{llmtest.Hang(), llmtest.Text("ok")}, wantText: "ok", requests: 2, nwaits: 1},
		{name: "stream stalls before output: retried", stream: true, cfg: func(c *llm.Config) { c.IdleTimeout = 50 * time.Millisecond },
			script: []llmtest.Reply{{Content: "lost", StallAfter: 1}, llmtest.Text("ok")}, wantText: "ok", requests: 2, nwaits: 1},
		{name: "stream stalls mid-answer: not retried", stream: true, cfg: func(c *llm.Config) { c.IdleTimeout = 50 * time.Millisecond },
			script:  []llmtest.Reply{{Content: "half an answer", StallAfter: 3}, llmtest.Text("never")},
			wantErr: "the stream stalled: no data for 50ms", reason: llm.ReasonStalled, requests: 1},
		{name: "hanging stream headers", stream: true, cfg: func(c *llm.Config) { c.RequestTimeout = 50 * time.Millisecond; c.MaxRetries = -1 },
			script: []llmtest.Reply{llmtest.Hang()}, wantErr: "the model did not answer within 50ms (model.request_timeout)", reason: llm.ReasonTimeout, requests: 1},
		{name: "hanging stream headers are retried", stream: true, cfg: func(c *llm.Config) { c.RequestTimeout = 50 * time.Millisecond },
			script: []llmtest.Reply{llmtest.Hang(), llmtest.Text("ok")}, wantText: "ok", requests: 2, nwaits: 1},
		// Until it answers, a stream has model.request_timeout, not the (shorter) idle timeout.
		{name: "a slow first answer within request_timeout", stream: true,
			cfg: func(c *llm.Config) {
				c.RequestTimeout = 10 * time.Second
				c.IdleTimeout = 50 * time.Millisecond
				c.MaxRetries = -1
			},
			script: []llmtest.Reply{{Content: "late but fine", Delay: llmtest.Duration(300 * time.Millisecond)}}, wantText: "late but fine", requests: 1},
		{name: "request_timeout bounds a plain attempt", cfg: func(c *llm.Config) { c.RequestTimeout = 50 * time.Millisecond; c.MaxRetries = -1 },
			script: []llmtest.Reply{llmtest.Hang()}, wantErr: "no complete response within 50ms (model.request_timeout)", reason: llm.ReasonTimeout, requests: 1},
		{name: "stream cut short", stream: true, cfg: func(c *llm.Config) { c.MaxRetries = -1 },
			script:  []llmtest.Reply{{SSE: []string{`{"choices":[{"delta":{"role":"assistant"}}]}`}}},
			wantErr: "ended before the model finished", reason: llm.ReasonIncomplete, requests: 1},
		{name: "stream with malformed chunk", stream: true, cfg: func(c *llm.Config) { c.MaxRetries = -1 },
			script:  []llmtest.Reply{{SSE: []string{`{"choices":[{"delta":{"content":"hi"}}]}`, `{"choices": [`}}},
			wantErr: "a stream chunk is not valid JSON", reason: llm.ReasonMalformed, requests: 1},
		{name: "stream error chunk", stream: true, cfg: func(c *llm.Config) { c.MaxRetries = -1 },
			script:  []llmtest.Reply{{SSE: []string{`{"error":{"code":429,"message":"slow down"}}`}}},
			wantErr: "slow down", reason: llm.ReasonProviderError, status: 429, requests: 1},
		{name: "server that ignores stream:true", stream: true, script: []llmtest.Reply{{Raw: `{"choices":[{"message":{"role":"assistant","content":"whole"},"finish_reason":"stop"}],"usage":{"total_tokens":3}}`}},
			wantText: "whole", requests: 1},
		{name: "raw SSE: comments, no index, repeated names, usage last", stream: true, script: []llmtest.Reply{{SSE: []string{
			`{"id":"r1","model":"m","choices":[{"delta":{"role":"assistant","content":null}}]}`,
			`{"choices":[{"delta":{"tool_calls":[{"id":"a","type":"function","function":{"name":"read_file","arguments":"{\"pa"}}]}}]}`,
			`{"choices":[{"delta":{"tool_calls":[{"function":{"name":"read_file","arguments":"th\":1}"}}]}}]}`,
			`{"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"name":"patch","arguments":"{}"}}]}}]}`,
			`{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}`,
			`{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12}}`,
			`[DONE]`}}},
			wantTool: []llm.FunctionCall{{Name: "read_file", Arguments: `{"path":1}`}, {Name: "patch", Arguments: `{}`}}, requests: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Enqueue(tc.script...)
			c, sl, _ := newClient(t, srv, tc.cfg)
			var deltas strings.Builder
			var onDelta func(llm.Delta)
			if tc.stream {
				onDelta = func(d llm.Delta) { deltas.WriteString(d.Content) }
			}
			resp, err := c.Chat(context.Background(), hello, onDelta)
			if got := len(srv.Requests()); got != tc.requests {
				t.Errorf("server saw %d requests, want %d", got, tc.requests)
			}
			if tc.waits != nil && !equalDurations(sl.d, tc.waits) {
				t.Errorf("waits = %v, want %v", sl.d, tc.waits)
			}
			if tc.nwaits != 0 && len(sl.d) != tc.nwaits {
				t.Errorf("waited %d times (%v), want %d", len(sl.d), sl.d, tc.nwaits)
			}
			if tc.wantErr != "" {
				if err == nil {
					t.Fatalf("no error; response %+v", resp)
				}
				if !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("error %q does not contain %q", err, tc.wantErr)
				}
				var ae *llm.APIError
				if !errors.As(err, &ae) {
					t.Fatalf("error %T is not an *APIError", err)
				}
				if ae.Reason != tc.reason || ae.Status != tc.status && tc.status != 0 {
					t.Errorf("reason %q status %d, want %q %d", ae.Reason, ae.Status, tc.reason, tc.status)
				}
				if !strings.Contains(err.Error(), srv.URL+"/chat/completions") {
					t.Errorf("error %q does not name the endpoint", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Content != tc.wantText {
				t.Errorf("content %q, want %q", resp.Message.Content, tc.wantText)
			}
			if tc.stream && deltas.String() != tc.wantText {
				t.Errorf("streamed text %q, want %q", deltas.String(), tc.wantText)
			}
			if resp.Message.Role != "assistant" {
				t.Errorf("role %q", resp.Message.Role)
			}
			var got []llm.FunctionCall
			ids := map[string]bool{}
			for _, c := range resp.Message.ToolCalls {
				got = append(got, c.Function)
				if c.ID == "" || ids[c.ID] || c.Type != "function" {
					t.Errorf("tool call id %q type %q: want unique ids and type function", c.ID, c.Type)
				}
				ids[c.ID] = true
			}
			if len(got) != len(tc.wantTool) {
				t.Fatalf("tool calls %+v, want %+v", got, tc.wantTool)
			}
			for i := range got {
				if got[i] != tc.wantTool[i] {
					t.Errorf("tool call %d = %+v, want %+v", i, got[i], tc.wantTool[i])
				}
			}
			want := "stop"
			if len(tc.wantTool) > 0 {
				want = "tool_calls"
			}
			if resp.FinishReason != want {
				t.Errorf("finish reason %q, want %q", resp.FinishReason, want)
			}
			if resp.Usage.TotalTokens == 0 {
				t.Errorf("no usage")
			}
		})
	}
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestBackoff: exponential, jittered into [d/2, d], reported through OnRetry with
// the attempt number, and capped.
func TestBackoff(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Reply{Status: 500, Repeat: 6}, llmtest.Text("ok"))
	c, sl, retries := newClient(t, srv, func(c *llm.Config) { c.MaxRetries = 6; c.RetryBaseDelay = 10 * time.Second })
	if _, err := c.Chat(context.Background(), hello, nil); err != nil {
		t.Fatal(err)
	}
	if len(sl.d) != 6 || len(*retries) != 6 {
		t.Fatalf("waits %v retries %v", sl.d, *retries)
	}
	for i, d := range sl.d {
		full := min(10*time.Second<<i, 30*time.Second)
		if d < full/2 || d > full {
			t.Errorf("wait %d = %v, want within [%v, %v]", i, d, full/2, full)
		}
		r := (*retries)[i]
		if r.attempt != i+1 || r.wait != d || r.reason != llm.ReasonServerError {
			t.Errorf("retry %d = %+v", i, r)
		}
	}
}

// TestRetryAfterTooLong: a server asking for an hour is not waited out.
func TestRetryAfterTooLong(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.RateLimited("3600"), llmtest.Text("never"))
	c, sl, _ := newClient(t, srv, nil)
	_, err := c.Chat(context.Background(), hello, nil)
	if err == nil || !strings.Contains(err.Error(), "retry after 1h0m0s") {
		t.Fatalf("err = %v", err)
	}
	if len(sl.d) != 0 {
		t.Errorf("waited %v", sl.d)
	}
}

// TestCancel: cancelling the context stops a hanging request and a stalled stream at
// once, without retrying.
func TestCancel(t *testing.T) {
	for _, stream := range []bool{false, true} {
		srv := llmtest.NewServer(t)
		if stream {
			srv.Enqueue(llmtest.Reply{Content: "partial answer", StallAfter: 2}, llmtest.Text("never"))
		} else {
			srv.Enqueue(llmtest.Hang(), llmtest.Text("never"))
		}
		c, sl, _ := newClient(t, srv, nil)
		ctx, cancel := context.WithCancel(context.Background())
		var onDelta func(llm.Delta)
		if stream {
			onDelta = func(d llm.Delta) {
				if d.Content != "" {
					cancel()
				}
			}
		} else {
			go func() {
				for len(srv.Requests()) < 1 {
					time.Sleep(time.Millisecond)
				}
				cancel()
			}()
		}
		_, err := c.Chat(ctx, hello, onDelta)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("stream=%v: err = %v, want context.Canceled", stream, err)
		}
		if n := len(srv.Requests()); n != 1 || len(sl.d) != 0 {
			t.Errorf("stream=%v: %d requests, waits %v; want 1 request and no retry", stream, n, sl.d)
		}
		cancel()
	}
}

// TestRequestBody: what the model sees.
func TestRequestBody(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Text("ok"), llmtest.Text("ok"))
	c, _, _ := newClient(t, srv, nil)
	temp := 0.2
	req := llm.Request{
		Messages: []llm.Message{
			{Role: "system", Content: "be <brief> & kind"},
			{Role: "user", Content: "list files"},
			{Role: "assistant", ToolCalls: []llm.ToolCall{{ID: "c1", Type: "function", Function: llm.FunctionCall{Name: "terminal", Arguments: `{"command":"ls"}`}}}},
			{Role: "tool", ToolCallID: "c1", Name: "terminal", Content: "a.txt"},
		},
		Tools:          []llm.ToolSpec{{Name: "terminal", Description: "run a command", Parameters: map[string]any{"type": "object", "properties": map[string]any{"command": map[string]any{"type": "string"}}}}, {Name: "noargs"}},
		Temperature:    &temp,
		MaxTokens:      100,
		ResponseFormat: map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "x", "schema": map[string]any{"type": "object"}}},
		Extra:          map[string]any{"provider": map[string]any{"order": []string{"a"}}, "model": "not-this"},
	}
	if _, err := c.Chat(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	got := srv.LastRequest(t)
	if got.Model != "fake-model" || got.Stream {
		t.Errorf("model %q stream %v", got.Model, got.Stream)
	}
	if got.Header.Get("Authorization") != "Bearer sk-test" {
		t.Errorf("authorization %q", got.Header.Get("Authorization"))
	}
	body := string(got.Body)
	for _, want := range []string{
		`"content":"be <brief> & kind"`,
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"terminal","arguments":"{\"command\":\"ls\"}"}}]}`,
		`{"role":"tool","content":"a.txt","name":"terminal","tool_call_id":"c1"}`,
		`"tools":[{"function":{"description":"run a command","name":"terminal","parameters":{"properties":{"command":{"type":"string"}},"type":"object"}},"type":"function"}`,
		`{"function":{"description":"","name":"noargs","parameters":{"properties":{},"type":"object"}},"type":"function"}`,
		`"temperature":0.2`, `"max_tokens":100`, `"response_format":{"json_schema"`, `"provider":{"order":["a"]}`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("request body lacks %s\n%s", want, body)
		}
	}
	if len(got.Messages) != 4 || got.Messages[2].ToolCalls[0].Function.Name != "terminal" || len(got.Tools) != 2 || got.Tools[0].Name != "terminal" {
		t.Errorf("recorded messages %+v tools %+v", got.Messages, got.Tools)
	}

	if _, err := c.Chat(context.Background(), llm.Request{Model: "other", Messages: req.Messages[:2]}, func(llm.Delta) {}); err != nil {
		t.Fatal(err)
	}
	got = srv.LastRequest(t)
	if got.Model != "other" || !got.Stream || !strings.Contains(string(got.Body), `"stream_options":{"include_usage":true}`) || strings.Contains(string(got.Body), `"tools"`) {
		t.Errorf("streamed request body %s", got.Body)
	}
}

func TestDeltas(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Reply{ChunkSize: 4, Reasoning: "think", Content: "héllo wörld", ToolCalls: []llmtest.CallReply{llmtest.Call("a", map[string]any{"x": 1}), llmtest.Call("b", nil)}})
	c, _, _ := newClient(t, srv, nil)
	var text, reasoning strings.Builder
	args := map[int]string{}
	names := map[int]string{}
	resp, err := c.Chat(context.Background(), hello, func(d llm.Delta) {
		text.WriteString(d.Content)
		reasoning.WriteString(d.Reasoning)
		names[d.ToolCallIndex] += d.ToolCallName
		args[d.ToolCallIndex] += d.ToolCallArgs
	})
	if err != nil {
		t.Fatal(err)
	}
	if text.String() != "héllo wörld" || reasoning.String() != "think" || resp.Reasoning != "think" {
		t.Errorf("text %q reasoning %q/%q", text.String(), reasoning.String(), resp.Reasoning)
	}
	if names[0] != "a" || names[1] != "b" || args[0] != `{"x":1}` || args[1] != "{}" {
		t.Errorf("names %v args %v", names, args)
	}
}

func TestMessageJSON(t *testing.T) {
	cases := []struct {
		msg  llm.Message
		want string
	}{
		{llm.Message{Role: "user", Content: ""}, `{"role":"user","content":""}`},
		{llm.Message{Role: "assistant", Content: "", ToolCalls: []llm.ToolCall{{ID: "1", Type: "function", Function: llm.FunctionCall{Name: "f", Arguments: "{}"}}}},
			`{"role":"assistant","content":null,"tool_calls":[{"id":"1","type":"function","function":{"name":"f","arguments":"{}"}}]}`},
		{llm.Message{Role: "assistant", Content: "x", ToolCalls: []llm.ToolCall{{ID: "1", Type: "function", Function: llm.FunctionCall{Name: "f"}}}},
			`{"role":"assistant","content":"x","tool_calls":[{"id":"1","type":"function","function":{"name":"f","arguments":""}}]}`},
	}
	for _, tc := range cases {
		b, err := json.Marshal(tc.msg)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.want {
			t.Errorf("got  %s\nwant %s", b, tc.want)
		}
		var back llm.Message
		if err := json.Unmarshal(b, &back); err != nil || back.Content != tc.msg.Content || len(back.ToolCalls) != len(tc.msg.ToolCalls) {
			t.Errorf("round trip %+v: %v", back, err)
		}
	}
	var m llm.Message
	if err := json.Unmarshal([]byte(`{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url"},{"type":"text","text":"b"}]}`), &m); err != nil || m.Content != "ab" {
		t.Errorf("content parts: %q %v", m.Content, err)
	}
}

func TestNewErrors(t *testing.T) {
	for _, base := range []string{"", "localhost:8000", "ftp://x/v1", "http://"} {
		if _, err := llm.New(llm.Config{BaseURL: base, Model: "m"}); err == nil {
			t.Errorf("New(%q) succeeded", base)
		}
	}
	c, err := llm.New(llm.Config{BaseURL: "http://127.0.0.1:1/v1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Chat(context.Background(), hello, nil); err == nil || !strings.Contains(err.Error(), "set model.default") {
		t.Errorf("no model: %v", err)
	}
}

// TestNetworkError: a refused connection is retried, then reported as a network error.
func TestNetworkError(t *testing.T) {
	srv := llmtest.NewServer(t)
	base := srv.URL
	srv.Close()
	sl := &sleeps{}
	c, err := llm.New(llm.Config{BaseURL: base, Model: "m", MaxRetries: 2, Sleep: sl.sleep})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Chat(context.Background(), hello, nil)
	var ae *llm.APIError
	if !errors.As(err, &ae) || ae.Reason != llm.ReasonNetwork || !ae.Retryable || len(sl.d) != 2 {
		t.Fatalf("err = %v (%+v), waits %v", err, ae, sl.d)
	}
}

type ctxKey struct{}

// TestAttemptCallbacks: OnAttempt before every attempt and OnAttemptError after every
// failed one, each with the Chat call's ctx (the hook fire sites for pre_api_request
// and api_request_error).
func TestAttemptCallbacks(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Reply{Status: 500, Repeat: 2}, llmtest.Status(400, "bad"))
	var log []string
	c, _, _ := newClient(t, srv, func(c *llm.Config) {
		c.OnAttempt = func(ctx context.Context, attempt int) {
			log = append(log, fmt.Sprintf("attempt %d %v", attempt, ctx.Value(ctxKey{})))
		}
		c.OnAttemptError = func(ctx context.Context, attempt int, err *llm.APIError, retry bool, wait time.Duration) {
			log = append(log, fmt.Sprintf("error %d %d %v %v %v", attempt, err.Status, retry, wait > 0, ctx.Value(ctxKey{})))
		}
	})
	ctx := context.WithValue(context.Background(), ctxKey{}, "turn-1")
	if _, err := c.Chat(ctx, hello, nil); err == nil {
		t.Fatal("no error")
	}
	want := "attempt 0 turn-1|error 0 500 true true turn-1|attempt 1 turn-1|error 1 500 true true turn-1|attempt 2 turn-1|error 2 400 false false turn-1"
	if got := strings.Join(log, "|"); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestErrorSummary(t *testing.T) {
	cases := []struct {
		err  *llm.APIError
		want string
	}{
		{&llm.APIError{Reason: llm.ReasonTimeout, After: 2 * time.Minute, Message: "the model did not answer within 2m0s"}, "model did not answer in 120 s"},
		{&llm.APIError{Reason: llm.ReasonStalled, After: 1500 * time.Millisecond}, "model stream went silent for 1.5 s"},
		{&llm.APIError{Reason: llm.ReasonServerError, Status: 503, Message: "overloaded"}, "model endpoint answered HTTP 503: overloaded"},
		{&llm.APIError{Reason: llm.ReasonNetwork, Message: "no response: connection refused"}, "model endpoint unreachable: no response: connection refused"},
		{&llm.APIError{Reason: llm.ReasonMalformed, Status: 200, Message: "the response has no choices"}, "model request failed: the response has no choices"},
		{&llm.APIError{Reason: llm.ReasonServerError, Status: 500, Message: strings.Repeat("x", 300)}, "model endpoint answered HTTP 500: " + strings.Repeat("x", 160) + "…"},
	}
	for _, tc := range cases {
		if got := tc.err.Summary(); got != tc.want {
			t.Errorf("Summary() = %q, want %q", got, tc.want)
		}
	}
}
