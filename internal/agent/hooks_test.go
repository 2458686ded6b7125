package agent_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/agent"
	"github.com/hermes-go/hermes/internal/hooks"
	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/llm/llmtest"
	"github.com/hermes-go/hermes/internal/tools"
)

// Every hook the agent fires goes through a real dispatcher, which in tests
// refuses a payload that differs from the catalog (it panics): turns that stream,
// retry a failed request, run a tool and get interrupted fire them all as the
// catalog describes them.
func TestAgentHooksFitTheCatalog(t *testing.T) {
	d := hooks.New(hooks.Options{Logger: slog.New(slog.DiscardHandler)})
	var mu sync.Mutex
	fired := map[string]bool{}
	for _, n := range hooks.Names() {
		d.Register(n, hooks.Callback{PluginID: "obs", Invoke: func(context.Context, map[string]any) (any, error) {
			mu.Lock()
			fired[n] = true
			mu.Unlock()
			return nil, nil
		}})
	}
	srv := llmtest.NewServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reg := tools.NewRegistry()
	for _, tl := range []*tools.Tool{
		echoTool("echo", func(context.Context, map[string]any) (string, error) { return "echoed", nil }),
		echoTool("stop", func(context.Context, map[string]any) (string, error) { cancel(); return "stopping", nil }),
	} {
		if err := reg.Register(tl, false); err != nil {
			t.Fatal(err)
		}
	}
	ag := agent.New(agent.Options{Model: "fake", Pipeline: &tools.Pipeline{Registry: reg, Hooks: d}, Hooks: d, Stream: true})
	cfg := llm.Config{BaseURL: srv.URL, Model: "fake", MaxRetries: 1, RetryBaseDelay: time.Millisecond}
	ag.ObserveAttempts(&cfg)
	client, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ag.SetClient(client)

	srv.Enqueue(llmtest.Status(500, "busy"), llmtest.ToolCalls(llmtest.Call("echo", map[string]any{"text": "x"})), llmtest.Text("done"))
	s := ag.NewSession(ctx, "s1")
	if turn, err := ag.Run(ctx, s, "go"); err != nil || turn.Final != "done" {
		t.Fatalf("turn: %v %+v", err, turn)
	}
	srv.Enqueue(llmtest.Status(500, "busy"), llmtest.Status(500, "still busy"))
	if _, err := ag.Run(ctx, s, "again"); err == nil {
		t.Fatal("a request failing twice did not fail the turn")
	}
	srv.Enqueue(llmtest.ToolCalls(llmtest.Call("stop", map[string]any{})))
	if _, err := ag.Run(ctx, s, "stop"); !errors.Is(err, agent.ErrInterrupted) {
		t.Fatalf("interrupted turn: %v", err)
	}

	want := []string{"agent_loop_stopped", "api_request_error", "on_session_end", "on_session_start", "on_stream_delta",
		"on_stream_end", "on_stream_start", "post_api_request", "post_llm_call", "post_tool_call", "pre_api_request",
		"pre_llm_call", "pre_tool_call", "transform_llm_output", "transform_tool_result"}
	mu.Lock()
	defer mu.Unlock()
	for _, n := range want {
		if !fired[n] {
			t.Errorf("%s never fired", n)
		}
	}
	for n := range fired {
		if !slices.Contains(want, n) {
			t.Errorf("%s fired, which the agent does not fire", n)
		}
	}
}
