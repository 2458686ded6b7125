package agent_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/hermes-go/hermes/internal/agent"
	"github.com/hermes-go/hermes/internal/hooks"
	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/llm/llmtest"
	"github.com/hermes-go/hermes/internal/tools"
)

// hookAgent is newAgent with a real dispatcher whose callbacks are given.
func hookAgent(t *testing.T, srv *llmtest.Server, rec agent.Recorder, stream bool, cbs map[hooks.Name]func(map[string]any) any) *agent.Agent {
	t.Helper()
	d := hooks.New(hooks.Options{Logger: slog.New(slog.DiscardHandler)})
	for name, fn := range cbs {
		d.Register(string(name), hooks.Callback{PluginID: "p", Invoke: func(_ context.Context, p map[string]any) (any, error) { return fn(p), nil }})
	}
	reg := tools.NewRegistry()
	if err := reg.Register(echoTool("echo", func(context.Context, map[string]any) (string, error) { return "echoed", nil }), false); err != nil {
		t.Fatal(err)
	}
	client, err := llm.New(llm.Config{BaseURL: srv.URL, Model: "fake", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return agent.New(agent.Options{Client: client, Model: "fake", Pipeline: &tools.Pipeline{Registry: reg, Hooks: d}, Hooks: d,
		Recorder: rec, SystemPrompt: "sys", Stream: stream})
}

// pre_llm_call context reaches the model with the turn's user message, in every
// request of that turn, and nowhere else: not in the stored message, not in
// later turns' requests (where it would pile up), as upstream keeps it ephemeral.
func TestPreLLMCallContextIsEphemeral(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.ToolCalls(llmtest.Call("echo", map[string]any{"text": "x"})), llmtest.Text("one"), llmtest.Text("two"))
	rec := &memRecorder{}
	n := 0
	ag := hookAgent(t, srv, rec, false, map[hooks.Name]func(map[string]any) any{
		hooks.HookPreLLMCall: func(map[string]any) any { n++; return fmt.Sprintf("CTX-%d", n) },
	})
	s := ag.NewSession(context.Background(), "s")
	for _, in := range []string{"go", "again"} {
		if _, err := ag.Run(context.Background(), s, in); err != nil {
			t.Fatal(err)
		}
	}
	users := func(ms []llm.Message) []string {
		var out []string
		for _, m := range ms {
			if m.Role == "user" {
				out = append(out, m.Content)
			}
		}
		return out
	}
	reqs := srv.Requests()
	want := [][]string{{"go\n\nCTX-1"}, {"go\n\nCTX-1"}, {"go", "again\n\nCTX-2"}}
	if len(reqs) != len(want) {
		t.Fatalf("%d requests, want %d", len(reqs), len(want))
	}
	for i, w := range want {
		if got := users(reqs[i].Messages); fmt.Sprint(got) != fmt.Sprint(w) {
			t.Errorf("request %d sent the user messages %q, want %q", i, got, w)
		}
	}
	if got := users(rec.msgs); fmt.Sprint(got) != fmt.Sprint([]string{"go", "again"}) {
		t.Errorf("stored user messages %q, want them as typed", got)
	}
	if got := users(s.Messages); fmt.Sprint(got) != fmt.Sprint([]string{"go", "again"}) {
		t.Errorf("the session's user messages %q, want them as typed", got)
	}
}
