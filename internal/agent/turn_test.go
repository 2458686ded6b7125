package agent_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/agent"
	"github.com/hermes-go/hermes/internal/hooks"
	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/llm/llmtest"
	"github.com/hermes-go/hermes/internal/tools"
)

// hookAgent is newAgent with a real dispatcher whose callbacks are given.
func hookAgent(t *testing.T, srv *llmtest.Server, rec agent.Recorder, out agent.Output, cfg llm.Config, cbs map[hooks.Name]func(map[string]any) any) *agent.Agent {
	t.Helper()
	d := hooks.New(hooks.Options{Logger: slog.New(slog.DiscardHandler)})
	for name, fn := range cbs {
		d.Register(string(name), hooks.Callback{PluginID: "p", Invoke: func(_ context.Context, p map[string]any) (any, error) { return fn(p), nil }})
	}
	reg := tools.NewRegistry()
	if err := reg.Register(echoTool("echo", func(context.Context, map[string]any) (string, error) { return "echoed", nil }), false); err != nil {
		t.Fatal(err)
	}
	cfg.BaseURL, cfg.Model = srv.URL, "fake"
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = -1
	}
	client, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return agent.New(agent.Options{Client: client, Model: "fake", Pipeline: &tools.Pipeline{Registry: reg, Hooks: d}, Hooks: d,
		Recorder: rec, SystemPrompt: "sys", Output: out, Stream: out != nil})
}

// pre_llm_call context reaches the model with the turn's user message, in every
// request of that turn, and nowhere else: not in the stored message, not in
// later turns' requests (where it would pile up), as upstream keeps it ephemeral.
func TestPreLLMCallContextIsEphemeral(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.ToolCalls(llmtest.Call("echo", map[string]any{"text": "x"})), llmtest.Text("one"), llmtest.Text("two"))
	rec := &memRecorder{}
	n := 0
	ag := hookAgent(t, srv, rec, nil, llm.Config{}, map[hooks.Name]func(map[string]any) any{
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

// funcOutput is an Output that hands every streamed piece to fn.
type funcOutput func(s string)

func (f funcOutput) Text(s string) { f(s) }
func (funcOutput) Progress(string) {}

// The text a model streamed before its turn was cut short (Ctrl-C, a stream that
// broke) is kept as the assistant's answer, marked interrupted and passed through
// transform_llm_output, and the model gets it back next turn: the history never
// ends in two user messages in a row.
func TestPartialAnswerIsKept(t *testing.T) {
	redact := func(p map[string]any) any {
		return strings.ReplaceAll(p["response_text"].(string), "secret", "[redacted]")
	}
	tests := []struct {
		name      string
		reply     llmtest.Reply
		interrupt bool          // Ctrl-C once "plan" streamed; else the stream stalls until idle
		idle      time.Duration // model.stream_idle_timeout
		wantErr   error
	}{
		{"interrupted by the user", llmtest.Reply{Content: "the secret plan is long", ChunkSize: 4, StallAfter: 6}, true, time.Minute, agent.ErrInterrupted},
		{"the stream broke", llmtest.Reply{Content: "the secret plan is long", ChunkSize: 4, StallAfter: 6}, false, 200 * time.Millisecond, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Enqueue(tt.reply, llmtest.Text("next"))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var mu sync.Mutex
			var shown, streamed strings.Builder
			out := funcOutput(func(s string) { mu.Lock(); shown.WriteString(s); mu.Unlock() })
			rec := &memRecorder{}
			ag := hookAgent(t, srv, rec, out, llm.Config{IdleTimeout: tt.idle},
				map[hooks.Name]func(map[string]any) any{
					hooks.HookTransformLLMOutput: redact,
					hooks.HookOnStreamDelta: func(p map[string]any) any {
						mu.Lock()
						defer mu.Unlock()
						if streamed.WriteString(p["delta"].(string)); tt.interrupt && strings.Contains(streamed.String(), "plan") {
							cancel()
						}
						return nil
					},
				})
			s := ag.NewSession(context.Background(), "s")
			turn, err := ag.Run(ctx, s, "tell me")
			if err == nil || (tt.wantErr != nil && !errors.Is(err, tt.wantErr)) {
				t.Fatalf("err %v, want %v", err, tt.wantErr)
			}
			if got := roles(turn.Added); got != "user,assistant" {
				t.Fatalf("the turn added %s, want user,assistant", got)
			}
			kept := turn.Added[1].Content
			if !strings.HasPrefix(kept, "the [redacted] plan") || strings.Contains(kept, "secret") ||
				!strings.HasSuffix(kept, "[interrupted: this answer was cut off before it was finished]") {
				t.Errorf("kept %q: want the streamed text, transformed, marked interrupted", kept)
			}
			mu.Lock()
			if strings.Contains(shown.String(), "secret") {
				t.Errorf("the screen showed %q before transform_llm_output saw it", shown.String())
			}
			mu.Unlock()
			if last := rec.msgs[len(rec.msgs)-1]; last.Content != kept {
				t.Errorf("stored %q, want %q", last.Content, kept)
			}
			if _, err := ag.Run(context.Background(), s, "go on"); err != nil {
				t.Fatal(err)
			}
			sent := srv.LastRequest(t).Messages
			if got := roles(sent); got != "system,user,assistant,user" || sent[2].Content != kept {
				t.Errorf("the next turn sent %s with %q, want the partial answer between the two user messages", got, sent[2].Content)
			}
		})
	}
}
