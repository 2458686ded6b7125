package registry

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/hooks"
	"github.com/hermes-go/hermes/internal/tools"
)

// newTest returns a registry whose commit warnings are collected in warns.
func newTest(t *testing.T) (*Registry, *[]string) {
	t.Helper()
	var warns []string
	r := New(Options{Warn: func(format string, args ...any) { warns = append(warns, fmt.Sprintf(format, args...)) }})
	return r, &warns
}

func tool(name, source string) *tools.Tool {
	return &tools.Tool{Name: name, Toolset: source, Source: source, Schema: map[string]any{},
		Handler: func(context.Context, map[string]any, map[string]any) (string, error) { return `"` + source + `"`, nil }}
}

// payload is what the catalog says hook carries, every field nil.
func payload(t *testing.T, hook string) map[string]any {
	t.Helper()
	spec, ok := hooks.Lookup(hook)
	if !ok {
		t.Fatalf("%s is not in the hook catalog", hook)
	}
	p := map[string]any{}
	for _, f := range spec.Fields {
		p[f] = nil
	}
	return p
}

func hook(name string, out *[]string, tag string) *Hook {
	return &Hook{Hook: name, Callback: tag, Handle: tag, Invoke: func(context.Context, map[string]any) (any, error) {
		*out = append(*out, tag)
		return nil, nil
	}}
}

// Nothing a plugin registers is visible before it commits; after, its new
// registrations are committed at once.
func TestPendingUntilCommit(t *testing.T) {
	r, _ := newTest(t)
	var fired []string
	r.AddTool("a", tool("t1", "a"), false)
	r.AddHook("a", hook("post_tool_call", &fired, "h1"))
	r.AddCommand("a", &Command{Name: "go", Plugin: "a"})
	if _, ok := r.Tools().Get("t1"); ok {
		t.Fatal("pending tool visible before commit")
	}
	if r.Hooks().Has("post_tool_call") || len(r.Commands()) != 0 {
		t.Fatal("pending hook or command visible before commit")
	}
	r.Commit("a")
	if _, ok := r.Tools().Get("t1"); !ok {
		t.Fatal("tool missing after commit")
	}
	r.Hooks().Fire(context.Background(), hooks.HookPostToolCall, payload(t, "post_tool_call"))
	if !reflect.DeepEqual(fired, []string{"h1"}) {
		t.Fatalf("fired %v", fired)
	}
	r.AddTool("a", tool("t2", "a"), false) // late: from a thread, after register()
	if _, ok := r.Tools().Get("t2"); !ok {
		t.Fatal("a late registration was not committed at once")
	}
	if got := r.Snapshot("a").Tools; !reflect.DeepEqual(got, []string{"t1", "t2"}) {
		t.Fatalf("snapshot tools %v", got)
	}
}

// Name clashes are settled at commit: the plugin committed first keeps the
// tool name and the CLI command, the later one is skipped with a warning.
func TestCommitClashes(t *testing.T) {
	r, warns := newTest(t)
	r.AddTool("a", tool("shared", "a"), false)
	r.AddCLICommand("a", &CLICommand{Name: "sync", Plugin: "a"})
	r.AddTool("b", tool("shared", "b"), false)
	r.AddCLICommand("b", &CLICommand{Name: "sync", Plugin: "b"})
	r.Commit("a")
	r.Commit("b")
	got, _ := r.Tools().Get("shared")
	if got.Source != "a" {
		t.Errorf("tool owned by %s, want a", got.Source)
	}
	if c, _ := r.CLICommand("sync"); c.Plugin != "a" {
		t.Errorf("CLI command owned by %s, want a", c.Plugin)
	}
	want := []string{
		"plugin b tried to shadow tool 'shared' (registered by a) without override=True; skipped",
		"plugin b: CLI command 'sync' is already provided by plugin a; skipped",
	}
	if !reflect.DeepEqual(*warns, want) {
		t.Errorf("warnings\n%q\nwant\n%q", *warns, want)
	}
	if s := r.Snapshot("b"); len(s.Tools) != 0 || len(s.CLICommands) != 0 {
		t.Errorf("b's snapshot keeps what was skipped: %+v", s)
	}
	r.AddTool("c", tool("shared", "c"), true) // override wins
	r.Commit("c")
	if got, _ := r.Tools().Get("shared"); got.Source != "c" {
		t.Errorf("override: tool owned by %s, want c", got.Source)
	}
}

// Withdraw undoes everything a plugin committed, and a slash command it took
// over goes back to its previous owner.
func TestWithdraw(t *testing.T) {
	r, _ := newTest(t)
	var fired []string
	r.AddCommand("a", &Command{Name: "go", Plugin: "a"})
	r.Commit("a")
	r.AddTool("b", tool("t", "b"), false)
	r.AddHook("b", hook("pre_llm_call", &fired, "hb"))
	r.AddCommand("b", &Command{Name: "go", Plugin: "b"})
	r.AddCLICommand("b", &CLICommand{Name: "bb", Plugin: "b"})
	r.AddMiddleware("b", &Middleware{Kind: ToolRequest, Plugin: "b"})
	r.AddSubscription("b", &Subscription{Event: "a:ev", Plugin: "b"})
	r.Commit("b")
	if c := r.Commands(); len(c) != 1 || c[0].Plugin != "b" {
		t.Fatalf("commands %+v", c)
	}
	subs := r.Subscribers("a:ev", "a")
	r.Withdraw("b")
	if _, ok := r.Tools().Get("t"); ok {
		t.Error("tool left after withdraw")
	}
	if r.Hooks().Has("pre_llm_call") || r.HasMiddleware(ToolRequest) || len(r.Subscribers("a:ev", "a")) != 0 {
		t.Error("hook, middleware or subscription left after withdraw")
	}
	if !subs[0].Cancelled() {
		t.Error("a withdrawn subscription is not marked cancelled (a queued delivery would still run)")
	}
	if _, ok := r.CLICommand("bb"); ok {
		t.Error("CLI command left after withdraw")
	}
	if c := r.Commands(); len(c) != 1 || c[0].Plugin != "a" {
		t.Errorf("after withdraw the command is %+v, want a's back", c)
	}
	if !reflect.DeepEqual(r.Snapshot("b"), Registered{}) {
		t.Errorf("snapshot after withdraw: %+v", r.Snapshot("b"))
	}
}

// A restarted plugin that registers exactly what it did before keeps its
// committed registrations (same handles); different ones replace them.
func TestRestartKeepsIdenticalRegistrations(t *testing.T) {
	r, _ := newTest(t)
	var fired []string
	register := func(tag string) {
		r.RecordWire("a", "ctx.register_hook", []byte(`{"hook":"post_tool_call","handle":"`+tag+`"}`))
		r.AddHook("a", hook("post_tool_call", &fired, tag))
	}
	register("h1")
	r.Commit("a")
	r.Begin("a")
	register("h1")
	if !r.SameAsCommitted("a") {
		t.Fatal("identical registrations not recognised")
	}
	r.Resume("a")
	r.Hooks().Fire(context.Background(), hooks.HookPostToolCall, payload(t, "post_tool_call"))
	if !reflect.DeepEqual(fired, []string{"h1"}) {
		t.Fatalf("after resume fired %v, want the one committed callback", fired)
	}
	r.AddTool("a", tool("late", "a"), false)
	if _, ok := r.Tools().Get("late"); !ok {
		t.Error("not live again after Resume")
	}

	r.Begin("a")
	register("h2")
	if r.SameAsCommitted("a") {
		t.Fatal("different registrations taken for the same")
	}
	r.Withdraw("a")
	r.Commit("a")
	fired = nil
	r.Hooks().Fire(context.Background(), hooks.HookPostToolCall, payload(t, "post_tool_call"))
	if !reflect.DeepEqual(fired, []string{"h2"}) {
		t.Fatalf("after replacing fired %v, want h2", fired)
	}
}

func TestDispose(t *testing.T) {
	tests := []struct {
		kind, key, handle string
		wantErr           string
		check             func(r *Registry) bool // true when the registration is gone
	}{
		{kind: "tool", key: "t", check: func(r *Registry) bool { _, ok := r.Tools().Get("t"); return !ok }},
		{kind: "hook", key: "post_tool_call", handle: "h", check: func(r *Registry) bool { return !r.Hooks().Has("post_tool_call") }},
		{kind: "hook", key: "post_tool_call", wantErr: "needs its handle"},
		{kind: "command", key: "/Go", check: func(r *Registry) bool { return len(r.Commands()) == 0 }},
		{kind: "cli_command", key: "cc", check: func(r *Registry) bool { _, ok := r.CLICommand("cc"); return !ok }},
		{kind: "skill", key: "s", wantErr: "not supported yet"},
	}
	for _, tt := range tests {
		t.Run(tt.kind+"/"+tt.key, func(t *testing.T) {
			r, _ := newTest(t)
			var fired []string
			r.AddTool("a", tool("t", "a"), false)
			r.AddHook("a", hook("post_tool_call", &fired, "h"))
			r.AddCommand("a", &Command{Name: "go", Plugin: "a"})
			r.AddCLICommand("a", &CLICommand{Name: "cc", Plugin: "a"})
			r.Commit("a")
			err := r.Dispose("a", tt.kind, tt.key, tt.handle)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(r) {
				t.Fatal("still registered after dispose")
			}
			if err := r.Dispose("a", tt.kind, tt.key, tt.handle); err != nil {
				t.Fatalf("a second dispose fails: %v (upstream's is idempotent)", err)
			}
		})
	}
}

// A dispose by another plugin never removes what is not its own.
func TestDisposeOnlyOwn(t *testing.T) {
	r, _ := newTest(t)
	r.AddTool("a", tool("t", "a"), false)
	r.AddCommand("a", &Command{Name: "go", Plugin: "a"})
	r.Commit("a")
	_ = r.Dispose("b", "tool", "t", "")
	_ = r.Dispose("b", "command", "go", "")
	if _, ok := r.Tools().Get("t"); !ok || len(r.Commands()) != 1 {
		t.Fatal("plugin b disposed plugin a's registrations")
	}
}

// Views list loaded plugins only, in plugin key order; provider slots keep
// what fills them.
func TestViews(t *testing.T) {
	r, _ := newTest(t)
	for _, p := range []string{"zeta", "alpha", "mid"} {
		r.AddMiddleware(p, &Middleware{Kind: LLMRequest, Plugin: p})
		r.AddSkill(p, Skill{Name: p + ":s"})
		r.AddOther(p, Other{Registrar: "register_memory_provider", Name: p + "-mem"}, "", nil)
	}
	r.AddOther("alpha", Other{Registrar: "register_image_gen_provider", Name: "img"}, "", nil)
	r.Commit("zeta")
	r.Commit("alpha") // mid never commits
	var mws []string
	for _, mw := range r.Middlewares(LLMRequest) {
		mws = append(mws, mw.Plugin)
	}
	if !slices.Equal(mws, []string{"alpha", "zeta"}) {
		t.Errorf("middlewares %v, want alpha, zeta", mws)
	}
	if got := r.Skills(); len(got) != 2 || got[0].Name != "alpha:s" {
		t.Errorf("skills %+v", got)
	}
	mem := r.Providers(MemoryProvider)
	if len(mem) != 2 || mem[0].Name != "alpha-mem" || mem[0].Kind != MemoryProvider || mem[0].Plugin != "alpha" {
		t.Errorf("memory providers %+v", mem)
	}
	if len(r.Snapshot("alpha").Other) != 2 {
		t.Errorf("a provider registration is not listed with the others: %+v", r.Snapshot("alpha").Other)
	}
	if r.HasMiddleware(ToolExecution) {
		t.Error("HasMiddleware true for a kind nobody registered")
	}
}

// A plugin hears its own event while its register() is still pending.
func TestSubscribersIncludeOwnPending(t *testing.T) {
	r, _ := newTest(t)
	r.AddSubscription("other", &Subscription{Event: "a:ready", Plugin: "other"})
	r.Commit("other")
	r.AddSubscription("a", &Subscription{Event: "a:ready", Plugin: "a"})
	var got []string
	for _, s := range r.Subscribers("a:ready", "a") {
		got = append(got, s.Plugin)
	}
	if !slices.Equal(got, []string{"other", "a"}) {
		t.Errorf("subscribers %v, want other then a's own pending one", got)
	}
	if n := len(r.Subscribers("a:ready", "third")); n != 1 {
		t.Errorf("another plugin sees %d subscribers, want the committed one", n)
	}
}

func TestPromptSections(t *testing.T) {
	r, _ := newTest(t)
	r.AddPromptSection("b", &PromptSection{ID: "beta", Plugin: "b", Content: "B text", MaxChars: 4000}, "register_system_prompt_section", "system prompt section")
	r.AddPromptSection("a", &PromptSection{ID: "alpha", Plugin: "a", MaxChars: 4000,
		Render: func(context.Context, map[string]any) (string, error) { return "A text", nil }}, "register_system_prompt_section", "system prompt section")
	if owner := r.PromptSectionOwner("beta"); owner != "b" {
		t.Errorf("owner of a pending section %q, want b", owner)
	}
	if got := r.RenderSystemPromptSections(context.Background(), nil); got != "" {
		t.Errorf("pending sections rendered: %q", got)
	}
	r.Commit("b")
	r.Commit("a")
	got := r.RenderSystemPromptSections(context.Background(), nil)
	want := "<!-- hermes-plugin-sections:start -->\n" +
		"## Plugin Context: alpha\n<!-- hermes-plugin-section-chars:6 -->\n\nA text\n\n" +
		"## Plugin Context: beta\n<!-- hermes-plugin-section-chars:6 -->\n\nB text\n" +
		"<!-- hermes-plugin-sections:end -->"
	if got != want {
		t.Errorf("rendered\n%s\nwant\n%s", got, want)
	}
}

// The request chain passes each callback's replacement to the next and
// traces who changed what; the execution chain wraps the final call.
func TestChains(t *testing.T) {
	r, _ := newTest(t)
	r.AddMiddleware("a", &Middleware{Kind: ToolRequest, Plugin: "a", Invoke: func(_ context.Context, kw map[string]any, _ func(context.Context, any) (any, error)) (any, error) {
		args := kw["args"].(map[string]any)
		args["n"] = args["n"].(float64) + 1
		return map[string]any{"args": args, "reason": "bump"}, nil
	}})
	r.AddMiddleware("b", &Middleware{Kind: ToolExecution, Plugin: "b", Invoke: func(ctx context.Context, kw map[string]any, next func(context.Context, any) (any, error)) (any, error) {
		res, err := next(ctx, kw["args"])
		return fmt.Sprintf("wrapped(%v)", res), err
	}})
	r.Commit("a")
	r.Commit("b")
	tm := r.ToolMiddleware()
	args, trace := tm.ToolRequest(context.Background(), tools.Call{Name: "x"}, map[string]any{"n": 1.0})
	if args["n"] != 2.0 || len(trace) != 1 || trace[0].(map[string]any)["reason"] != "bump" {
		t.Fatalf("request chain: args %v trace %v", args, trace)
	}
	out, err := tm.ToolExecution(context.Background(), tools.Call{Name: "x"}, args, func(_ context.Context, a map[string]any) (string, error) {
		return fmt.Sprint(a["n"]), nil
	})
	if err != nil || out != "wrapped(2)" {
		t.Fatalf("execution chain: %q %v", out, err)
	}
}

// A registry is safe for concurrent registration from many plugins.
func TestConcurrentCommit(t *testing.T) {
	r := New(Options{Hooks: hooks.New(hooks.Options{})})
	done := make(chan struct{})
	for i := range 8 {
		go func(i int) {
			defer func() { done <- struct{}{} }()
			p := fmt.Sprintf("p%d", i)
			for j := range 20 {
				r.AddTool(p, tool(fmt.Sprintf("%s-t%d", p, j), p), false)
			}
			r.Commit(p)
			r.AddCommand(p, &Command{Name: p, Plugin: p})
			_ = r.Snapshot(p)
		}(i)
	}
	for range 8 {
		<-done
	}
	if n := len(r.Tools().List()); n != 160 {
		t.Errorf("%d tools, want 160", n)
	}
	if n := len(r.Commands()); n != 8 {
		t.Errorf("%d commands, want 8", n)
	}
}
