package tools

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/hooks"
)

// events records what ran, in order, across hooks, middleware and handler.
type events struct {
	mu   sync.Mutex
	seen []string
	pre  map[string]any // the pre_tool_call payload
	post map[string]any // the post_tool_call payload
}

func (e *events) add(s string) {
	e.mu.Lock()
	e.seen = append(e.seen, s)
	e.mu.Unlock()
}

func (e *events) list() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.seen...)
}

// hookedDispatcher is a real dispatcher with one plugin on the three tool hooks;
// pre answers pre_tool_call (nil: no directive), during runs inside it.
func hookedDispatcher(ev *events, pre any, transform any, during func()) *hooks.Dispatcher {
	d := hooks.New(hooks.Options{Logger: slog.New(slog.DiscardHandler)})
	reg := func(h hooks.Name, fn func(p map[string]any) any) {
		d.Register(string(h), hooks.Callback{PluginID: "obs", Name: "obs." + string(h),
			Invoke: func(_ context.Context, p map[string]any) (any, error) {
				ev.add(string(h))
				return fn(p), nil
			}})
	}
	reg(hooks.HookPreToolCall, func(p map[string]any) any {
		ev.mu.Lock()
		ev.pre = p
		ev.mu.Unlock()
		if during != nil {
			during()
		}
		return pre
	})
	reg(hooks.HookPostToolCall, func(p map[string]any) any {
		ev.mu.Lock()
		ev.post = p
		ev.mu.Unlock()
		return nil
	})
	reg(hooks.HookTransformToolResult, func(map[string]any) any { return transform })
	return d
}

// recordingMiddleware is tool middleware that rewrites and records: the real one
// (the plugin chains) lives in package plugins.
type recordingMiddleware struct{ ev *events }

func (m recordingMiddleware) ToolRequest(_ context.Context, _ Call, args map[string]any) (map[string]any, []any) {
	m.ev.add("tool_request")
	out := copyMap(args)
	out["name"] = "Mw"
	return out, []any{map[string]any{"plugin": "mw", "changed": true}}
}

func (m recordingMiddleware) ToolExecution(ctx context.Context, _ Call, args map[string]any,
	run func(context.Context, map[string]any) (string, error)) (string, error) {
	m.ev.add("tool_execution")
	return run(ctx, args)
}

// The whole pipeline, in order: tool_request middleware before pre_tool_call (its
// trace in the payload), unknown tools and too-deep arguments before anything,
// post hooks after every outcome.
func TestPipelineOrder(t *testing.T) {
	all := []string{"tool_request", "pre_tool_call", "tool_execution", "handler", "post_tool_call", "transform_tool_result"}
	tests := []struct {
		name       string
		call       Call
		pre        any
		check      func(context.Context) bool
		want       []string
		wantStatus Status
		wantType   string
		enabled    func(*Tool) bool // the pipeline's tool set (nil: every tool)
	}{
		{"runs", Call{Name: "echo", Args: map[string]any{"name": "Ada"}}, nil, nil, all, "ok", "", nil},
		{"unknown tool", Call{Name: "nope"}, nil, nil, []string{"post_tool_call", "transform_tool_result"}, "error", "unknown_tool", nil},
		{"too deep", Call{Name: "echo", Args: map[string]any{"deep": nested(MaxArgsDepth + 1)}}, nil, nil,
			[]string{"post_tool_call", "transform_tool_result"}, "error", "invalid_arguments", nil},
		{"blocked", Call{Name: "echo", Args: map[string]any{"name": "Ada"}}, map[string]any{"action": "block", "message": "no"}, nil,
			[]string{"tool_request", "pre_tool_call", "post_tool_call", "transform_tool_result"}, "blocked", "blocked", nil},
		{"unavailable", Call{Name: "echo", Args: map[string]any{"name": "Ada"}}, nil, func(context.Context) bool { return false },
			[]string{"tool_request", "pre_tool_call", "post_tool_call", "transform_tool_result"}, "error", "unavailable", nil},
		{"invalid after middleware", Call{Name: "echo", Args: map[string]any{"name": "Ada", "extra": 1}}, nil, nil,
			[]string{"tool_request", "pre_tool_call", "post_tool_call", "transform_tool_result"}, "error", "invalid_arguments", nil},
		// A tool outside the chosen toolsets is an unknown tool: no guard is asked,
		// the handler never runs.
		{"outside the tool set", Call{Name: "echo", Args: map[string]any{"name": "Ada"}}, nil, nil,
			[]string{"post_tool_call", "transform_tool_result"}, "error", "unknown_tool", func(t *Tool) bool { return t.Toolset != "t" }},
		{"inside the tool set", Call{Name: "echo", Args: map[string]any{"name": "Ada"}}, nil, nil, all, "ok", "",
			func(t *Tool) bool { return t.Toolset == "t" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := &events{}
			r := NewRegistry()
			tl := echoTool("echo", "t", "p")
			handler := tl.Handler
			tl.Handler = func(ctx context.Context, args, kw map[string]any) (string, error) {
				ev.add("handler")
				return handler(ctx, args, kw)
			}
			tl.Check = tt.check
			if err := r.Register(tl, false); err != nil {
				t.Fatal(err)
			}
			p := &Pipeline{Registry: r, Hooks: hookedDispatcher(ev, tt.pre, nil, nil), Middleware: recordingMiddleware{ev}, Enabled: tt.enabled}
			out := p.Run(context.Background(), tt.call)
			if got := ev.list(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ran %v\nwant %v", got, tt.want)
			}
			if out.Status != tt.wantStatus || out.ErrorType != tt.wantType {
				t.Errorf("outcome %s/%s %s, want %s/%s", out.Status, out.ErrorType, out.Result, tt.wantStatus, tt.wantType)
			}
			if ev.pre != nil {
				if ev.pre["args"].(map[string]any)["name"] != "Mw" {
					t.Errorf("pre_tool_call saw %v, not the arguments the middleware rewrote", ev.pre["args"])
				}
				if want := []any{map[string]any{"plugin": "mw", "changed": true}}; !reflect.DeepEqual(ev.pre["middleware_trace"], want) {
					t.Errorf("middleware_trace = %v, want the tool_request trace", ev.pre["middleware_trace"])
				}
			}
			if !reflect.DeepEqual(ev.post["args"], out.Args) || ev.post["status"] != string(out.Status) ||
				ev.post["duration_ms"] != out.Duration.Milliseconds() {
				t.Errorf("post_tool_call saw args %v status %v duration %v; the outcome has %v %v %v",
					ev.post["args"], ev.post["status"], ev.post["duration_ms"], out.Args, out.Status, out.Duration.Milliseconds())
			}
		})
	}
}

// Hooked wraps any executor, not only the pipeline's core.
func TestHookedWrapsAnyExecutor(t *testing.T) {
	tests := []struct {
		name       string
		pre        any
		transform  any
		args       map[string]any
		wantNext   map[string]any // the arguments the executor got; nil: not called
		wantStatus Status
		wantResult string
	}{
		{"passes through", nil, nil, map[string]any{"a": 1}, map[string]any{"a": 1}, "ok", "done"},
		{"no arguments", nil, nil, nil, map[string]any{}, "ok", "done"},
		{"modify", map[string]any{"action": "modify", "args": map[string]any{"a": 2}}, nil, map[string]any{"a": 1, "b": 1},
			map[string]any{"a": 2, "b": 1}, "ok", "done"},
		{"block", map[string]any{"action": "block", "message": "not now"}, nil, map[string]any{"a": 1}, nil, "blocked", `{"error": "not now"}`},
		{"approve, nobody to ask", map[string]any{"action": "approve"}, nil, map[string]any{"a": 1}, nil, "blocked", "no one is here to approve it"},
		{"transform", nil, "replaced", map[string]any{"a": 1}, map[string]any{"a": 1}, "ok", "replaced"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := &events{}
			var got map[string]any
			next := ExecutorFunc(func(_ context.Context, c Call) Outcome {
				got = c.Args
				time.Sleep(2 * time.Millisecond)
				return Outcome{Result: "done", Status: "ok", Args: c.Args}
			})
			h := Hooked{Next: next, Hooks: hookedDispatcher(ev, tt.pre, tt.transform, nil)}
			out := h.Execute(context.Background(), Call{Name: "any", Args: tt.args, ToolCallID: "c1"})
			if !reflect.DeepEqual(got, tt.wantNext) {
				t.Errorf("executor got %v, want %v", got, tt.wantNext)
			}
			if out.Status != tt.wantStatus || !strings.Contains(out.Result, tt.wantResult) {
				t.Errorf("outcome %s %s, want %s with %q", out.Status, out.Result, tt.wantStatus, tt.wantResult)
			}
			if tt.wantNext != nil && out.Duration < 2*time.Millisecond {
				t.Errorf("Duration %v does not cover the call", out.Duration)
			}
			if ev.post["status"] != string(out.Status) || ev.post["tool_name"] != "any" || !reflect.DeepEqual(ev.post["args"], out.Args) {
				t.Errorf("post_tool_call payload %v for outcome %+v", ev.post, out)
			}
		})
	}
}

// A Ctrl-C while the guards run: the call does not happen, and it says so.
func TestHookedInterruptedDuringGuards(t *testing.T) {
	ev := &events{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	called := false
	next := ExecutorFunc(func(context.Context, Call) Outcome { called = true; return Outcome{Status: "ok"} })
	h := Hooked{Next: next, Hooks: hookedDispatcher(ev, nil, nil, cancel)}
	out := h.Execute(ctx, Call{Name: "any"})
	if called || out.ErrorType != "cancelled" || !strings.Contains(out.Result, "Tool any was interrupted") {
		t.Fatalf("called %v, outcome %+v", called, out)
	}
}

// Approval choices through a real approver would need a terminal; fixed answers
// show which let the call run.
func TestHookedApproval(t *testing.T) {
	for _, tt := range []struct {
		answer ApprovalChoice
		err    error
		want   string // "" = the call ran
	}{
		{"once", nil, ""}, {"session", nil, ""}, {"always", nil, ""},
		{"deny", nil, "BLOCKED: plugin approval required for any"},
		{"timeout", nil, "BLOCKED: plugin approval required for any"},
		{"", fmt.Errorf("transport down"), "BLOCKED: plugin approval gate failed for any"},
	} {
		t.Run(string(tt.answer), func(t *testing.T) {
			ev := &events{}
			var asked ApprovalRequest
			appr := approverFunc(func(_ context.Context, r ApprovalRequest) (ApprovalChoice, error) {
				asked = r
				return tt.answer, tt.err
			})
			next := ExecutorFunc(func(_ context.Context, c Call) Outcome { return Outcome{Result: "ran", Status: "ok", Args: c.Args} })
			h := Hooked{Next: next, Approver: appr,
				Hooks: hookedDispatcher(ev, map[string]any{"action": "approve", "message": "sure?", "rule_key": "k"}, nil, nil)}
			out := h.Execute(context.Background(), Call{Name: "any", Args: map[string]any{"x": 1}, ToolCallID: "c", TurnID: "t"})
			if tt.want == "" && out.Result != "ran" || tt.want != "" && (out.Status != "blocked" || !strings.Contains(out.Result, tt.want)) {
				t.Fatalf("outcome %s %s, want %q", out.Status, out.Result, tt.want)
			}
			if asked.RuleKey != "k" || asked.Message != "sure?" || asked.ToolCallID != "c" || asked.TurnID != "t" {
				t.Errorf("asked %+v", asked)
			}
		})
	}
}

type approverFunc func(context.Context, ApprovalRequest) (ApprovalChoice, error)

func (f approverFunc) Approve(ctx context.Context, r ApprovalRequest) (ApprovalChoice, error) {
	return f(ctx, r)
}

// The no-hooks path costs what the core costs: the decorator and an idle
// dispatcher add no allocation.
func TestIdleHooksAddNoAllocations(t *testing.T) {
	r := NewRegistry()
	if err := r.Register(echoTool("echo", "t", "p"), false); err != nil {
		t.Fatal(err)
	}
	c := Call{Name: "echo", Args: map[string]any{"name": "Ada"}}
	bare := &Pipeline{Registry: r}
	idle := &Pipeline{Registry: r, Hooks: hooks.New(hooks.Options{Logger: slog.New(slog.DiscardHandler)})}
	ctx := context.Background()
	want := testing.AllocsPerRun(200, func() { bare.Run(ctx, c) })
	if raceEnabled {
		want++ // see raceEnabled: a hook payload built per call (map, closure, event) is several more
	}
	if got := testing.AllocsPerRun(200, func() { idle.Run(ctx, c) }); got > want {
		t.Errorf("with an idle dispatcher a call allocates %v times, without %v", got, want)
	}
}

// Who asked for a call reaches the approval request and, through ctx, the tool's
// handler (the terminal's own approval); a call never inherits the origin of the
// call it runs under.
func TestOriginTravels(t *testing.T) {
	plugin := Origin{Kind: FromPlugin, Plugin: "p"}
	for _, tt := range []struct {
		name   string
		outer  Origin // the origin of the call this one runs under
		origin Origin
	}{
		{"the model", Origin{}, Origin{}},
		{"the user", Origin{}, Origin{Kind: FromUser}},
		{"a plugin", Origin{}, plugin},
		{"the model, under a plugin's call", plugin, Origin{}},
		{"a plugin, under the model's call", Origin{}, plugin},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var inHandler Origin
			tool := echoTool("echo", "t", "p")
			tool.Handler = func(ctx context.Context, _, _ map[string]any) (string, error) {
				inHandler = OriginOf(ctx)
				return "{}", nil
			}
			r := NewRegistry()
			if err := r.Register(tool, false); err != nil {
				t.Fatal(err)
			}
			var asked ApprovalRequest
			appr := approverFunc(func(_ context.Context, req ApprovalRequest) (ApprovalChoice, error) {
				asked = req
				return ChoiceOnce, nil
			})
			p := &Pipeline{Registry: r, Approver: appr, Hooks: hookedDispatcher(&events{}, map[string]any{"action": "approve"}, nil, nil)}
			ctx := WithOrigin(context.Background(), tt.outer)
			if out := p.Run(ctx, Call{Name: "echo", Args: map[string]any{"name": "x"}, Origin: tt.origin}); out.Status != StatusOK {
				t.Fatalf("outcome %+v", out)
			}
			if inHandler != tt.origin || asked.Origin != tt.origin {
				t.Errorf("the handler saw %+v, the approver %+v; want %+v", inHandler, asked.Origin, tt.origin)
			}
		})
	}
}
