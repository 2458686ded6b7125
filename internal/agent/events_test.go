package agent_test

import (
	"context"
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

// eventOutput records everything a rich Output is given.
type eventOutput struct {
	mu        sync.Mutex
	text      strings.Builder
	reasoning strings.Builder
	progress  []string
	events    []string
	ends      []agent.ToolEndEvent
}

func (o *eventOutput) Text(s string) { o.mu.Lock(); o.text.WriteString(s); o.mu.Unlock() }
func (o *eventOutput) Progress(s string) {
	o.mu.Lock()
	o.progress = append(o.progress, s)
	o.mu.Unlock()
}
func (o *eventOutput) Reasoning(s string) { o.mu.Lock(); o.reasoning.WriteString(s); o.mu.Unlock() }
func (o *eventOutput) ToolStart(e agent.ToolStartEvent) {
	o.mu.Lock()
	o.events = append(o.events, fmt.Sprintf("start %s %s %s", e.CallID, e.Name, e.Args))
	o.mu.Unlock()
}
func (o *eventOutput) ToolEnd(e agent.ToolEndEvent) {
	o.mu.Lock()
	o.events = append(o.events, fmt.Sprintf("end %s %s", e.CallID, e.Name))
	o.ends = append(o.ends, e)
	o.mu.Unlock()
}

// plainOutput is an Output with neither optional interface.
type plainOutput struct {
	mu       sync.Mutex
	text     strings.Builder
	progress []string
}

func (o *plainOutput) Text(s string) { o.mu.Lock(); o.text.WriteString(s); o.mu.Unlock() }
func (o *plainOutput) Progress(s string) {
	o.mu.Lock()
	o.progress = append(o.progress, s)
	o.mu.Unlock()
}

// stepClock is a clock the tools move forward.
type stepClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *stepClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *stepClock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func eventAgent(t *testing.T, srv *llmtest.Server, out agent.Output, stream bool, clk *stepClock, block string) *agent.Agent {
	t.Helper()
	d := hooks.New(hooks.Options{Logger: slog.New(slog.DiscardHandler)})
	d.Register(string(hooks.HookPreToolCall), hooks.Callback{PluginID: "guard", Invoke: func(_ context.Context, p map[string]any) (any, error) {
		if p["tool_name"] == block {
			return map[string]any{"action": "block", "message": "guard says no"}, nil
		}
		return nil, nil
	}})
	reg := tools.NewRegistry()
	for _, tl := range []*tools.Tool{
		echoTool("slow", func(context.Context, map[string]any) (string, error) {
			clk.add(2500 * time.Millisecond)
			return "slow done", nil
		}),
		echoTool("fails", func(context.Context, map[string]any) (string, error) { return "", fmt.Errorf("disk on fire") }),
		echoTool("guarded", func(context.Context, map[string]any) (string, error) { t.Error("a blocked tool ran"); return "", nil }),
		// As the terminal tool answers a command the approval denied.
		echoTool("denied", func(context.Context, map[string]any) (string, error) {
			return `{"output": "", "exit_code": -1, "error": "BLOCKED: the user denied it", "status": "blocked"}`, nil
		}),
	} {
		if err := reg.Register(tl, false); err != nil {
			t.Fatal(err)
		}
	}
	client, err := llm.New(llm.Config{BaseURL: srv.URL, Model: "fake", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return agent.New(agent.Options{Client: client, Model: "fake", Pipeline: &tools.Pipeline{Registry: reg, Hooks: d}, Hooks: d,
		Recorder: &memRecorder{}, Output: out, Stream: stream, Now: clk.Now})
}

// A ToolObserver gets ToolStart and ToolEnd around each call, with the result,
// the error, whether a guard blocked it and the duration by the agent's clock,
// and no "⚙ name" Progress line.
func TestToolObserverEvents(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.ToolCalls(
		llmtest.CallReply{ID: "c1", Name: "slow", Arguments: map[string]any{"text": "x"}},
		llmtest.CallReply{ID: "c2", Name: "fails"},
		llmtest.CallReply{ID: "c3", Name: "guarded"},
		llmtest.CallReply{ID: "c4", Name: "denied"},
	), llmtest.Text("done"))
	out := &eventOutput{}
	clk := &stepClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	ag := eventAgent(t, srv, out, true, clk, "guarded")
	s := ag.NewSession(context.Background(), "s")
	if _, err := ag.Run(context.Background(), s, "go"); err != nil {
		t.Fatal(err)
	}
	want := []string{`start c1 slow {"text":"x"}`, "end c1 slow", "start c2 fails {}", "end c2 fails", "start c3 guarded {}", "end c3 guarded",
		"start c4 denied {}", "end c4 denied"}
	if fmt.Sprint(out.events) != fmt.Sprint(want) {
		t.Errorf("events\n%q\nwant\n%q", out.events, want)
	}
	for _, p := range out.progress {
		if strings.HasPrefix(p, "⚙") {
			t.Errorf("a ToolObserver got the progress line %q too", p)
		}
	}
	if len(out.ends) != 4 {
		t.Fatalf("%d ToolEnd events, want 4", len(out.ends))
	}
	slow, fails, guarded, denied := out.ends[0], out.ends[1], out.ends[2], out.ends[3]
	if slow.Duration != 2500*time.Millisecond || slow.Err != "" || slow.Blocked || slow.Result != "slow done" {
		t.Errorf("slow call ended %+v, want 2.5s, no error, result %q", slow, "slow done")
	}
	if fails.Duration != 0 || !strings.Contains(fails.Err, "disk on fire") || fails.Blocked || !strings.Contains(fails.Result, "disk on fire") {
		t.Errorf("failing call ended %+v", fails)
	}
	if !guarded.Blocked || !strings.Contains(guarded.Err, "guard says no") {
		t.Errorf("guarded call ended %+v, want blocked with the guard's message", guarded)
	}
	if !denied.Blocked || denied.Err != "BLOCKED: the user denied it" {
		t.Errorf("denied call ended %+v, want blocked with the tool's reason", denied)
	}
}

// An Output without the optional interfaces keeps the "⚙ name" line and never
// sees reasoning.
func TestPlainOutputKeepsProgressLine(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Reply{Reasoning: "hmm", ToolCalls: []llmtest.CallReply{{ID: "c1", Name: "slow"}}},
		llmtest.Reply{Reasoning: "so", Content: "done"})
	out := &plainOutput{}
	ag := eventAgent(t, srv, out, true, &stepClock{}, "")
	s := ag.NewSession(context.Background(), "s")
	if _, err := ag.Run(context.Background(), s, "go"); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(out.progress) != "[⚙ slow]" {
		t.Errorf("progress lines %q, want [⚙ slow]", out.progress)
	}
	if out.text.String() != "done\n" {
		t.Errorf("text %q, want the answer alone", out.text.String())
	}
}

// Reasoning, streamed or not, in either field, reaches a ReasoningOutput and
// nothing else: not the answer's text, not the stored assistant message.
func TestReasoningReachesReasoningOutput(t *testing.T) {
	for _, field := range []string{"reasoning_content", "reasoning"} {
		for _, stream := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/stream=%v", field, stream), func(t *testing.T) {
				srv := llmtest.NewServer(t)
				srv.Enqueue(llmtest.Reply{ChunkSize: 3, Reasoning: "let me think", ReasoningField: field, Content: "the answer"})
				out := &eventOutput{}
				ag := eventAgent(t, srv, out, stream, &stepClock{}, "")
				s := ag.NewSession(context.Background(), "s")
				turn, err := ag.Run(context.Background(), s, "go")
				if err != nil {
					t.Fatal(err)
				}
				if out.reasoning.String() != "let me think" {
					t.Errorf("reasoning shown %q, want %q", out.reasoning.String(), "let me think")
				}
				if strings.Contains(out.text.String(), "think") || strings.Contains(turn.Final, "think") {
					t.Errorf("reasoning mixed into the answer: text %q final %q", out.text.String(), turn.Final)
				}
				last := s.Messages[len(s.Messages)-1]
				if last.Role != "assistant" || last.Content != "the answer" {
					t.Errorf("stored %s message %q, want the answer alone", last.Role, last.Content)
				}
			})
		}
	}
}

// clientFunc is an llm.Client made of a function.
type clientFunc func(ctx context.Context, req llm.Request, onDelta func(llm.Delta)) (*llm.Response, error)

func (f clientFunc) Chat(ctx context.Context, req llm.Request, onDelta func(llm.Delta)) (*llm.Response, error) {
	return f(ctx, req, onDelta)
}

// waitOutput shows the wait for the model (a spinner) and records when it ends.
type waitOutput struct {
	plainOutput
	waitDone bool
}

func (o *waitOutput) Waiting(string) (func(string), func()) {
	return func(string) {}, func() { o.waitDone = true }
}

type waitReasoningOutput struct{ waitOutput }

func (*waitReasoningOutput) Reasoning(string) {}

// Reasoning ends the wait only for an Output that shows it: a line-mode
// terminal keeps its spinner while the model thinks, until the answer starts.
func TestReasoningEndsTheWaitOnlyWhenShown(t *testing.T) {
	tests := []struct {
		name string
		out  interface {
			agent.Output
			ended() bool
		}
		wantEnded bool
	}{
		{"plain", &waitOutput{}, false},
		{"shows reasoning", &waitReasoningOutput{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var endedAtReasoning bool
			client := clientFunc(func(_ context.Context, _ llm.Request, onDelta func(llm.Delta)) (*llm.Response, error) {
				onDelta(llm.Delta{Reasoning: "thinking"})
				endedAtReasoning = tt.out.ended()
				onDelta(llm.Delta{Content: "answer"})
				return &llm.Response{Message: llm.Message{Role: "assistant", Content: "answer"}, FinishReason: "stop", Reasoning: "thinking"}, nil
			})
			ag := agent.New(agent.Options{Client: client, Model: "fake", Pipeline: &tools.Pipeline{Registry: tools.NewRegistry()},
				Output: tt.out, Stream: true})
			if _, err := ag.Run(context.Background(), ag.NewSession(context.Background(), "s"), "go"); err != nil {
				t.Fatal(err)
			}
			if endedAtReasoning != tt.wantEnded {
				t.Errorf("wait ended by the reasoning: %v, want %v", endedAtReasoning, tt.wantEnded)
			}
			if !tt.out.ended() {
				t.Error("the wait never ended")
			}
		})
	}
}

func (o *waitOutput) ended() bool { return o.waitDone }
