package agent_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/hermes-go/hermes/internal/agent"
	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/llm/llmtest"
	"github.com/hermes-go/hermes/internal/tools"
)

// memRecorder keeps what the agent persisted, in order.
type memRecorder struct {
	mu    sync.Mutex
	msgs  []llm.Message
	calls []agent.ToolRecord
}

func (r *memRecorder) AppendMessage(_ context.Context, _ string, m llm.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, m)
	return nil
}

func (r *memRecorder) RecordToolCall(_ context.Context, _ string, rec agent.ToolRecord) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, rec)
	return nil
}

func roles(ms []llm.Message) string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Role)
	}
	return strings.Join(out, ",")
}

// newAgent wires an agent to a loopback fake model and a registry holding tools.
func newAgent(t *testing.T, srv *llmtest.Server, rec agent.Recorder, ts ...*tools.Tool) *agent.Agent {
	t.Helper()
	reg := tools.NewRegistry()
	for _, tl := range ts {
		if err := reg.Register(tl, false); err != nil {
			t.Fatal(err)
		}
	}
	client, err := llm.New(llm.Config{BaseURL: srv.URL, Model: "fake", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return agent.New(agent.Options{Client: client, Model: "fake", Pipeline: &tools.Pipeline{Registry: reg},
		Recorder: rec, SystemPrompt: "sys", ToolResultCap: 64})
}

func echoTool(name string, fn func(ctx context.Context, args map[string]any) (string, error)) *tools.Tool {
	return &tools.Tool{Name: name, Toolset: "t", Source: tools.SourceBuiltin,
		Schema: map[string]any{"name": name, "description": name, "parameters": map[string]any{"type": "object",
			"properties": map[string]any{"text": map[string]any{"type": "string"}}}},
		Handler: func(ctx context.Context, args, _ map[string]any) (string, error) { return fn(ctx, args) }}
}

func TestTurn(t *testing.T) {
	tests := []struct {
		name      string
		replies   []llmtest.Reply
		wantFinal string
		wantRoles string // of the messages added by the turn
		wantTool  []string
	}{
		{"plain answer", []llmtest.Reply{llmtest.Text("hi")}, "hi", "user,assistant", nil},
		{"tool then answer", []llmtest.Reply{
			llmtest.ToolCalls(llmtest.Call("echo", map[string]any{"text": "x"})), llmtest.Text("done")},
			"done", "user,assistant,tool,assistant", []string{`echo:x`}},
		{"two calls in one message", []llmtest.Reply{
			llmtest.ToolCalls(llmtest.Call("echo", map[string]any{"text": "a"}), llmtest.Call("echo", map[string]any{"text": "b"})),
			llmtest.Text("both")}, "both", "user,assistant,tool,tool,assistant", []string{`echo:a`, `echo:b`}},
		{"malformed arguments are the model's error", []llmtest.Reply{
			llmtest.ToolCalls(llmtest.Call("echo", "{not json")), llmtest.Text("sorry")},
			"sorry", "user,assistant,tool,assistant", []string{"Invalid JSON in the arguments of echo"}},
		{"unknown tool", []llmtest.Reply{
			llmtest.ToolCalls(llmtest.Call("nope", map[string]any{})), llmtest.Text("ok")},
			"ok", "user,assistant,tool,assistant", []string{"Unknown tool: nope"}},
		{"huge result is capped", []llmtest.Reply{
			llmtest.ToolCalls(llmtest.Call("echo", map[string]any{"text": strings.Repeat("z", 500)})), llmtest.Text("ok")},
			"ok", "user,assistant,tool,assistant", []string{"[output truncated: 64 of 505 bytes shown]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Enqueue(tt.replies...)
			rec := &memRecorder{}
			ag := newAgent(t, srv, rec, echoTool("echo", func(_ context.Context, a map[string]any) (string, error) {
				s, _ := a["text"].(string)
				return "echo:" + s, nil
			}))
			s := ag.NewSession(context.Background(), "s1")
			turn, err := ag.Run(context.Background(), s, "go")
			if err != nil {
				t.Fatal(err)
			}
			if turn.Final != tt.wantFinal || roles(turn.Added) != tt.wantRoles {
				t.Errorf("final %q roles %s, want %q %s", turn.Final, roles(turn.Added), tt.wantFinal, tt.wantRoles)
			}
			var results []string
			for _, m := range turn.Added {
				if m.Role == "tool" {
					results = append(results, m.Content)
				}
			}
			if len(results) != len(tt.wantTool) {
				t.Fatalf("tool results %q, want %d", results, len(tt.wantTool))
			}
			for i, w := range tt.wantTool {
				if !strings.Contains(results[i], w) {
					t.Errorf("tool result %d = %q, want it to contain %q", i, results[i], w)
				}
			}
			// Everything said was persisted, in order: the system prompt, then the turn.
			if got, want := roles(rec.msgs), "system,"+tt.wantRoles; got != want {
				t.Errorf("recorded %s, want %s", got, want)
			}
			if len(rec.calls) != len(tt.wantTool) {
				t.Errorf("recorded %d tool calls, want %d", len(rec.calls), len(tt.wantTool))
			}
			// The model saw the tool's answer to its call.
			if len(tt.wantTool) > 0 {
				last := srv.LastRequest(t)
				if got := roles(last.Messages); !strings.HasSuffix(got, "tool") {
					t.Errorf("last request ended with %s, want the tool results", got)
				}
			}
		})
	}
}

// A turn interrupted while a tool runs still answers every tool call the model
// asked for, so the stored history is valid for the API when resumed.
func TestInterruptAnswersEveryToolCall(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.ToolCalls(llmtest.Call("stop", map[string]any{}), llmtest.Call("echo", map[string]any{"text": "b"})))
	rec := &memRecorder{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := false
	ag := newAgent(t, srv, rec,
		echoTool("stop", func(context.Context, map[string]any) (string, error) { cancel(); return "stopping", nil }),
		echoTool("echo", func(context.Context, map[string]any) (string, error) { ran = true; return "echo", nil }))
	s := ag.NewSession(context.Background(), "s2")
	turn, err := ag.Run(ctx, s, "go")
	if !errors.Is(err, agent.ErrInterrupted) || !turn.Interrupted {
		t.Fatalf("err %v interrupted %v, want ErrInterrupted", err, turn.Interrupted)
	}
	if ran {
		t.Error("the second tool ran after the interrupt")
	}
	if got := roles(turn.Added); got != "user,assistant,tool,tool" {
		t.Fatalf("added %s, want user,assistant,tool,tool", got)
	}
	if !strings.Contains(turn.Added[3].Content, "interrupted") || turn.Added[3].ToolCallID == "" {
		t.Errorf("pending call answered with %+v", turn.Added[3])
	}
	if got := roles(rec.msgs); got != "system,user,assistant,tool,tool" {
		t.Errorf("recorded %s", got)
	}
	// The session resumes: the next turn sends a history the API accepts.
	srv.Enqueue(llmtest.Text("resumed"))
	next, err := ag.Run(context.Background(), ag.ResumeSession(context.Background(), "s2", s.Messages), "again")
	if err != nil || next.Final != "resumed" {
		t.Fatalf("resume: %v %+v", err, next)
	}
}
