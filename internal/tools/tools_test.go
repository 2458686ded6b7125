package tools

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/hooks"
)

func echoTool(name, toolset, source string) *Tool {
	return &Tool{
		Name: name, Toolset: toolset, Source: source,
		Schema: map[string]any{"name": name, "description": "echo", "parameters": map[string]any{
			"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}},
			"required": []any{"name"}, "additionalProperties": false,
		}},
		Handler: func(_ context.Context, args, _ map[string]any) (string, error) {
			return `{"got": "` + args["name"].(string) + `"}`, nil
		},
	}
}

func TestRegisterCollisions(t *testing.T) {
	r := NewRegistry()
	if err := r.Register(echoTool("read_file", "file", SourceBuiltin), false); err != nil {
		t.Fatal(err)
	}
	var se *ShadowError
	if err := r.Register(echoTool("read_file", "mine", "plugin-a"), false); !errors.As(err, &se) {
		t.Fatalf("shadowing without override: %v, want ShadowError", err)
	}
	if err := r.Register(echoTool("read_file", "mine", "plugin-a"), true); err != nil {
		t.Fatalf("override: %v", err)
	}
	if got, _ := r.Get("read_file"); got.Source != "plugin-a" {
		t.Fatalf("override not in effect: %s", got.Source)
	}
	// Withdrawing the override restores the built-in it displaced.
	r.Remove("read_file", "plugin-a")
	if got, _ := r.Get("read_file"); got.Source != SourceBuiltin {
		t.Fatalf("displaced tool not restored: %+v", got)
	}
	// Claiming the holder's toolset is no way round override.
	if err := r.Register(echoTool("read_file", "file", "plugin-b"), false); !errors.As(err, &se) {
		t.Fatalf("same-toolset shadowing without override: %v, want ShadowError", err)
	}
	if got, _ := r.Get("read_file"); got.Source != SourceBuiltin {
		t.Fatalf("same-toolset shadowing replaced the tool: %s", got.Source)
	}
	// The same source re-registering its own tool replaces it.
	if err := r.Register(echoTool("mine", "m", "plugin-b"), false); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(echoTool("mine", "other", "plugin-b"), false); err != nil {
		t.Fatalf("re-registration by the same source: %v", err)
	}
}

func TestSloppySchemaKeepsTheTool(t *testing.T) {
	r := NewRegistry()
	tl := echoTool("x", "t", "p")
	tl.Schema["parameters"] = map[string]any{"type": "str", "required": true}
	if err := r.Register(tl, false); err != nil {
		t.Fatalf("a schema hermes cannot compile must not refuse the tool: %v", err)
	}
	if tl.SchemaProblem() == "" {
		t.Fatal("the schema problem is not reported")
	}
	if err := tl.ValidateArgs(map[string]any{"anything": 1}); err != nil {
		t.Fatalf("unchecked tool rejected arguments: %v", err)
	}
}

func TestValidateArgs(t *testing.T) {
	tl := echoTool("x", "t", "p")
	if err := NewRegistry().Register(tl, false); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args map[string]any
		want string // "" = valid
	}{
		{map[string]any{"name": "Ada"}, ""},
		{map[string]any{}, "name"},
		{map[string]any{"name": 5}, "string"},
		{map[string]any{"name": "a", "extra": true}, "extra"},
	}
	for _, c := range cases {
		err := tl.ValidateArgs(c.args)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("ValidateArgs(%v) = %v, want mention of %q", c.args, err, c.want)
		}
	}
}

func TestErrorResult(t *testing.T) {
	if got := ErrorResult("Unknown tool: x", nil); got != `{"error": "Unknown tool: x"}` {
		t.Fatalf("got %s", got)
	}
	if got := ErrorResult("<bad> & \"q\"", map[string]any{"tool": "x"}); got != `{"error": "<bad> & \"q\"", "tool": "x"}` {
		t.Fatalf("got %s", got)
	}
	long := ErrorResult(strings.Repeat("é", 3000), nil)
	if !strings.HasSuffix(long, `… [truncated]"}`) || strings.Count(long, "é") != 2048 {
		t.Fatalf("long error not bounded to 2048 characters: %d", strings.Count(long, "é"))
	}
}

// fakeHooks returns canned results per hook and records the payloads it saw.
type fakeHooks struct {
	results map[string][]any
	seen    map[string][]map[string]any
	during  func(hook string) // runs inside Fire (a Ctrl-C while the hooks run)
}

func (f *fakeHooks) Has(h hooks.Name) bool { _, ok := f.results[string(h)]; return ok }
func (f *fakeHooks) Fire(_ context.Context, h hooks.Name, p map[string]any) []any {
	if f.seen == nil {
		f.seen = map[string][]map[string]any{}
	}
	f.seen[string(h)] = append(f.seen[string(h)], p)
	if f.during != nil {
		f.during(string(h))
	}
	return f.results[string(h)]
}

// Interrupted while pre_tool_call guards run (a guard's timeout block is what
// comes back then): the call does not run and says it was interrupted.
func TestPipelineInterruptedDuringGuards(t *testing.T) {
	r := NewRegistry()
	if err := r.Register(echoTool("echo", "t", "p"), false); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fh := &fakeHooks{results: map[string][]any{
		"pre_tool_call":  {map[string]any{"action": "block", "message": "pre_tool_call plugin callback timed out or is still running"}},
		"post_tool_call": nil,
	}, during: func(h string) {
		if h == "pre_tool_call" {
			cancel()
		}
	}}
	out := (&Pipeline{Registry: r, Hooks: fh}).Run(ctx, Call{Name: "echo", Args: map[string]any{"name": "Ada"}})
	if out.Status != "error" || out.ErrorType != "cancelled" || !strings.Contains(out.Result, "Tool echo was interrupted") {
		t.Fatalf("got %s %s %s", out.Status, out.ErrorType, out.Result)
	}
}

type fixedApprover string

func (a fixedApprover) Approve(context.Context, ApprovalRequest) (ApprovalChoice, error) {
	return ApprovalChoice(a), nil
}

func TestPipeline(t *testing.T) {
	cases := []struct {
		name       string
		hooks      map[string][]any
		approver   Approver
		args       map[string]any
		wantStatus Status
		wantResult string // substring
	}{
		{"plain call", nil, nil, map[string]any{"name": "Ada"}, "ok", `{"got": "Ada"}`},
		{"invalid args", nil, nil, map[string]any{"name": 1}, "error", "Invalid arguments for echo"},
		{"args nested too deep", nil, nil, map[string]any{"name": "Ada", "deep": nested(MaxArgsDepth + 1)}, "error", "nested more than 512 levels deep"},
		// Within the limit the arguments reach the schema check (which knows no "deep").
		{"args nested deep enough", nil, nil, map[string]any{"name": "Ada", "deep": nested(MaxArgsDepth - 1)}, "error", `unexpected argument \"deep\"`},
		{"block", map[string][]any{"pre_tool_call": {map[string]any{"action": "block", "message": "no"}}}, nil, map[string]any{"name": "Ada"}, "blocked", `{"error": "no"}`},
		{"block beats approve", map[string][]any{"pre_tool_call": {
			map[string]any{"action": "approve"}, map[string]any{"action": "block", "message": "stop"}}}, fixedApprover("once"), map[string]any{"name": "Ada"}, "blocked", "stop"},
		{"approve with nobody to ask", map[string][]any{"pre_tool_call": {map[string]any{"action": "approve", "message": "sure?"}}}, nil, map[string]any{"name": "Ada"}, "blocked", "no one is here to approve"},
		{"approve granted", map[string][]any{"pre_tool_call": {map[string]any{"action": "approve"}}}, fixedApprover("session"), map[string]any{"name": "Ada"}, "ok", "Ada"},
		{"approve denied", map[string][]any{"pre_tool_call": {map[string]any{"action": "approve"}}}, fixedApprover("deny"), map[string]any{"name": "Ada"}, "blocked", "BLOCKED: plugin approval required for echo"},
		{"modify", map[string][]any{"pre_tool_call": {map[string]any{"action": "modify", "args": map[string]any{"name": "Bob"}}}}, nil, map[string]any{"name": "Ada"}, "ok", "Bob"},
		{"transform", map[string][]any{"transform_tool_result": {"replaced"}}, nil, map[string]any{"name": "Ada"}, "ok", "replaced"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewRegistry()
			if err := r.Register(echoTool("echo", "t", "p"), false); err != nil {
				t.Fatal(err)
			}
			fh := &fakeHooks{results: c.hooks}
			if fh.results == nil {
				fh.results = map[string][]any{}
			}
			fh.results["post_tool_call"] = nil
			p := &Pipeline{Registry: r, Hooks: fh, Approver: c.approver}
			out := p.Run(context.Background(), Call{Name: "echo", Args: c.args, TaskID: "t1"})
			if out.Status != c.wantStatus || !strings.Contains(out.Result, c.wantResult) {
				t.Fatalf("got %s %s, want %s containing %q", out.Status, out.Result, c.wantStatus, c.wantResult)
			}
			post := fh.seen["post_tool_call"]
			if len(post) != 1 || post[0]["status"] != string(out.Status) || post[0]["tool_name"] != "echo" {
				t.Fatalf("post_tool_call fired %d times with %v", len(post), post)
			}
		})
	}
}

func TestPipelineUnknownTool(t *testing.T) {
	p := &Pipeline{Registry: NewRegistry()}
	out := p.Run(context.Background(), Call{Name: "nope"})
	if out.Status != "error" || out.Result != `{"error": "Unknown tool: nope"}` {
		t.Fatalf("got %+v", out)
	}
}

func TestAvailability(t *testing.T) {
	cases := []struct {
		name    string
		check   func(context.Context) bool
		wantOK  bool
		wantErr string
		result  string // substring of the call's result
	}{
		{"no check", nil, true, "", `{"got": "Ada"}`},
		{"true", func(context.Context) bool { return true }, true, "", `{"got": "Ada"}`},
		{"false", func(context.Context) bool { return false }, false, "", "its availability check failed"},
		{"raised", func(ctx context.Context) bool {
			CheckFailed(ctx, errors.New("ValueError: no key"))
			return false
		}, false, "ValueError: no key", "its check_fn raised ValueError: no key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewRegistry()
			tl := echoTool("echo", "t", "p")
			tl.Check = c.check
			if err := r.Register(tl, false); err != nil {
				t.Fatal(err)
			}
			ok, err := tl.Available(context.Background())
			if ok != c.wantOK || (err == nil) != (c.wantErr == "") || err != nil && err.Error() != c.wantErr {
				t.Fatalf("Available = %v, %v; want %v, %q", ok, err, c.wantOK, c.wantErr)
			}
			out := (&Pipeline{Registry: r}).Run(context.Background(), Call{Name: "echo", Args: map[string]any{"name": "Ada"}})
			if !strings.Contains(out.Result, c.result) {
				t.Fatalf("call result %s, want %q", out.Result, c.result)
			}
		})
	}
}

// nested is n levels of arrays ([[[...]]]).
func nested(n int) any {
	var v any = []any{}
	for range n - 1 {
		v = []any{v}
	}
	return v
}
