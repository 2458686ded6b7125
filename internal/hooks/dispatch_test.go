package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// guard bounds waits that only a broken dispatcher would make endless, so a
// bug fails the test instead of hanging it. Nothing asserts on durations.
const guard = 10 * time.Second

// shortTimeout exercises the timeout path only.
const shortTimeout = 50 * time.Millisecond

// logRecorder keeps log records for assertions.
type logRecorder struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs = append(l.recs, r.Clone())
	return nil
}
func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecorder) WithGroup(string) slog.Handler      { return l }

// messages returns the messages at level that contain substr.
func (l *logRecorder) messages(level slog.Level, substr string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.recs {
		if r.Level == level && strings.Contains(r.Message, substr) {
			out = append(out, r.Message)
		}
	}
	return out
}

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

type harness struct {
	d       *Dispatcher
	log     *logRecorder
	clock   *fakeClock
	settled chan struct{}
}

func newHarness(t *testing.T, timeout time.Duration) *harness {
	t.Helper()
	h := &harness{
		log:     &logRecorder{},
		clock:   &fakeClock{now: time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)},
		settled: make(chan struct{}, 1024),
	}
	h.d = New(Options{Timeout: timeout, Logger: slog.New(h.log), Now: h.clock.Now})
	// These tests are about dispatch, with whatever payload shows it best; the
	// payload check has its own tests.
	h.d.checkPayloads = false
	h.d.settled = func() {
		select {
		case h.settled <- struct{}{}:
		default: // only tests that never wait fire this often
		}
	}
	return h
}

// waitSettled waits until n more invocations have released their slots.
func (h *harness) waitSettled(t *testing.T, n int) {
	t.Helper()
	for range n {
		select {
		case <-h.settled:
		case <-time.After(guard):
			t.Fatal("invocations never finished")
		}
	}
}

func returns(v any) func(context.Context, map[string]any) (any, error) {
	return func(context.Context, map[string]any) (any, error) { return v, nil }
}

func fails(err error) func(context.Context, map[string]any) (any, error) {
	return func(context.Context, map[string]any) (any, error) { return nil, err }
}

// untilDone blocks until the dispatcher stops waiting, as a well-behaved runtime call does.
func untilDone(started chan<- struct{}) func(context.Context, map[string]any) (any, error) {
	return func(ctx context.Context, _ map[string]any) (any, error) {
		if started != nil {
			close(started)
		}
		<-ctx.Done()
		return "late", nil
	}
}

func cb(plugin, name string, fn func(context.Context, map[string]any) (any, error)) Callback {
	return Callback{PluginID: plugin, Name: name, Invoke: fn}
}

func timeoutBlock(hook string) map[string]any {
	return map[string]any{"action": "block", "message": hook + " plugin callback timed out or is still running"}
}

func wait(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(guard):
		t.Fatalf("%s never happened", what)
	}
}

type excErr struct{ typ, msg string }

func (e excErr) Error() string         { return e.msg }
func (e excErr) ExceptionType() string { return e.typ }

func TestFireWithoutCallbacks(t *testing.T) {
	h := newHarness(t, time.Second)
	payload := map[string]any{"tool_name": "x"}
	for _, hook := range []string{"pre_tool_call", "not_a_hook"} {
		if got := h.d.Fire(context.Background(), Name(hook), payload); got != nil {
			t.Errorf("Fire(%s) = %v, want nil", hook, got)
		}
		if h.d.Has(Name(hook)) {
			t.Errorf("Has(%s) = true", hook)
		}
		allocs := testing.AllocsPerRun(100, func() { h.d.Fire(context.Background(), Name(hook), payload) })
		if allocs != 0 {
			t.Errorf("Fire(%s) with no callbacks allocated %v times per run", hook, allocs)
		}
	}
}

func TestFireResultsInRegistrationOrder(t *testing.T) {
	h := newHarness(t, 0)
	bDone, cDone := make(chan struct{}), make(chan struct{})
	// a finishes last and c first; each waits for the later-registered one,
	// which only works when different plugins run concurrently.
	h.d.Register("post_llm_call", cb("a", "fa", func(context.Context, map[string]any) (any, error) {
		select {
		case <-bDone:
			return "a", nil
		case <-time.After(guard):
			return nil, errors.New("plugins did not run concurrently")
		}
	}))
	h.d.Register("post_llm_call", cb("b", "fb", func(context.Context, map[string]any) (any, error) {
		defer close(bDone)
		select {
		case <-cDone:
			return "b", nil
		case <-time.After(guard):
			return nil, errors.New("plugins did not run concurrently")
		}
	}))
	h.d.Register("post_llm_call", cb("c", "fc", func(context.Context, map[string]any) (any, error) {
		defer close(cDone)
		return "c", nil
	}))
	h.d.Register("post_llm_call", cb("d", "fd", returns(nil))) // nil results are dropped

	got := h.d.Fire(context.Background(), "post_llm_call", nil)
	if want := []any{"a", "b", "c"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Fire = %v, want %v", got, want)
	}
}

func TestFireSamePluginSequential(t *testing.T) {
	h := newHarness(t, 0)
	var (
		mu    sync.Mutex
		trace []string
	)
	record := func(s string) {
		mu.Lock()
		trace = append(trace, s)
		mu.Unlock()
	}
	p1Started, release, qDone := make(chan struct{}), make(chan struct{}), make(chan struct{})
	h.d.Register("on_session_finalize", cb("p", "p1", func(context.Context, map[string]any) (any, error) {
		record("p1 start")
		close(p1Started)
		<-release
		record("p1 end")
		return "p1", nil
	}))
	h.d.Register("on_session_finalize", cb("p", "p2", func(context.Context, map[string]any) (any, error) {
		record("p2 start")
		return "p2", nil
	}))
	h.d.Register("on_session_finalize", cb("p", "p3", func(context.Context, map[string]any) (any, error) {
		record("p3 start")
		return "p3", nil
	}))
	h.d.Register("on_session_finalize", cb("q", "q1", func(context.Context, map[string]any) (any, error) {
		defer close(qDone)
		return "q1", nil
	}))

	res := make(chan []any)
	go func() { res <- h.d.Fire(context.Background(), "on_session_finalize", nil) }()
	wait(t, p1Started, "p1 start")
	wait(t, qDone, "q1 running while p1 is blocked")
	mu.Lock()
	early := strings.Join(trace, ", ")
	mu.Unlock()
	if early != "p1 start" {
		t.Errorf("while p1 was running: trace %q, want only p1 started", early)
	}
	close(release)
	got := <-res

	if want := []any{"p1", "p2", "p3", "q1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Fire = %v, want %v", got, want)
	}
	if want := []string{"p1 start", "p1 end", "p2 start", "p3 start"}; !reflect.DeepEqual(trace, want) {
		t.Errorf("trace = %v, want %v", trace, want)
	}
}

func TestFireErrorIsolation(t *testing.T) {
	h := newHarness(t, time.Hour)
	errs := make(chan error, 3)
	errs <- errors.New("boom")
	errs <- errors.New("boom")
	errs <- errors.New("other")
	h.d.Register("post_llm_call", cb("a", "a.bad", func(context.Context, map[string]any) (any, error) {
		return "ignored with the error", <-errs
	}))
	h.d.Register("post_llm_call", cb("b", "b.good", returns("b")))
	payload := map[string]any{"session_id": "s", "model": "m"}

	wantWarn := "Hook 'post_llm_call' callback a.bad (plugin a) raised: boom (hook provides: model, session_id, " +
		"telemetry_schema_version; identical failures are logged at DEBUG from now on)"
	steps := []struct {
		wantWarns, wantDebugs int
	}{
		{1, 0}, // first failure: WARNING listing the fields
		{1, 1}, // identical repeat: DEBUG
		{2, 1}, // a different error warns again
	}
	for i, s := range steps {
		got := h.d.Fire(context.Background(), "post_llm_call", payload)
		if want := []any{"b"}; !reflect.DeepEqual(got, want) {
			t.Errorf("step %d: Fire = %v, want %v", i, got, want)
		}
		if n := len(h.log.messages(slog.LevelWarn, "callback a.bad (plugin a) raised")); n != s.wantWarns {
			t.Errorf("step %d: %d warnings, want %d", i, n, s.wantWarns)
		}
		if n := len(h.log.messages(slog.LevelDebug, "callback a.bad (plugin a) raised again: boom")); n != s.wantDebugs {
			t.Errorf("step %d: %d debug lines, want %d", i, n, s.wantDebugs)
		}
	}
	if w := h.log.messages(slog.LevelWarn, "callback a.bad (plugin a) raised: boom"); len(w) == 0 || w[0] != wantWarn {
		t.Errorf("warning = %q\nwant %q", w, wantWarn)
	}

	// Unloading a plugin forgets its reports, so a reload warns afresh.
	h.d.UnregisterPlugin("a")
	h.d.Register("post_llm_call", cb("a", "a.bad", fails(errors.New("boom"))))
	h.d.Fire(context.Background(), "post_llm_call", payload)
	if n := len(h.log.messages(slog.LevelWarn, "callback a.bad (plugin a) raised: boom")); n != 2 {
		t.Errorf("after reload: %d warnings for boom, want 2", n)
	}
}

func TestFireFailClosedErrors(t *testing.T) {
	long := strings.Repeat("x", 150) + strings.Repeat("ü", 100)
	tests := []struct {
		name string
		hook string
		fn   func(context.Context, map[string]any) (any, error)
		want []any
	}{
		{name: "exception type from the runtime", hook: "pre_tool_call",
			fn:   fails(excErr{"ValueError", "bad arg"}),
			want: []any{block("pre_tool_call plugin callback guard raised ValueError: bad arg"), "ok"}},
		{name: "wrapped exception", hook: "pre_tool_call",
			fn:   fails(fmt.Errorf("rpc: %w", excErr{"KeyError", "'path'"})),
			want: []any{block("pre_tool_call plugin callback guard raised KeyError: rpc: 'path'"), "ok"}},
		{name: "plain error", hook: "pre_tts_synthesis",
			fn:   fails(errors.New("plain")),
			want: []any{block("pre_tts_synthesis plugin callback guard raised Error: plain"), "ok"}},
		{name: "text cut to 200 characters", hook: "pre_tool_call",
			fn:   fails(excErr{"RuntimeError", long}),
			want: []any{block("pre_tool_call plugin callback guard raised RuntimeError: " + long[:150+50*2]), "ok"}},
		{name: "panic", hook: "pre_tool_call",
			fn:   func(context.Context, map[string]any) (any, error) { panic("kaboom") },
			want: []any{block("pre_tool_call plugin callback guard raised panic: kaboom"), "ok"}},
		{name: "fail-open hook skips the error", hook: "post_tool_call",
			fn: fails(excErr{"ValueError", "bad arg"}), want: []any{"ok"}},
		{name: "fail-open hook survives a panic", hook: "pre_gateway_dispatch",
			fn: func(context.Context, map[string]any) (any, error) { panic("kaboom") }, want: []any{"ok"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, time.Hour)
			h.d.Register(tt.hook, cb("policy", "guard", tt.fn))
			h.d.Register(tt.hook, cb("other", "fine", returns("ok")))
			got := h.d.Fire(context.Background(), Name(tt.hook), map[string]any{"tool_call_id": "t1"})
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Fire =\n %v\nwant\n %v", got, tt.want)
			}
		})
	}
}

func TestFireTimeout(t *testing.T) {
	tests := []struct {
		hook string
		want []any
	}{
		{"post_tool_call", []any{"fast"}},
		{"transform_llm_output", []any{"fast"}},
		{"pre_tool_call", []any{timeoutBlock("pre_tool_call"), "fast"}},
		{"pre_tts_synthesis", []any{timeoutBlock("pre_tts_synthesis"), "fast"}},
	}
	for _, tt := range tests {
		t.Run(tt.hook, func(t *testing.T) {
			h := newHarness(t, shortTimeout)
			ctxErr := make(chan error, 1)
			h.d.Register(tt.hook, cb("slow", "hang", func(ctx context.Context, _ map[string]any) (any, error) {
				<-ctx.Done()
				ctxErr <- ctx.Err()
				return "late", nil
			}))
			h.d.Register(tt.hook, cb("quick", "fast", returns("fast")))

			got := h.d.Fire(context.Background(), Name(tt.hook), map[string]any{"tool_call_id": "t1"})
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Fire = %v, want %v", got, tt.want)
			}
			h.waitSettled(t, 2)
			if err := <-ctxErr; !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("abandoned callback saw ctx error %v, want deadline exceeded", err)
			}
			if w := h.log.messages(slog.LevelWarn, "Hook '"+tt.hook+"' callback hang timed out after 50ms"); len(w) != 1 {
				t.Errorf("timeout warnings = %q", w)
			}
		})
	}
}

func TestDeadlineOnlyForBoundedHooks(t *testing.T) {
	tests := []struct {
		hook    string
		timeout time.Duration
		want    bool
	}{
		{"post_tool_call", time.Hour, true},
		{"pre_tool_call", time.Hour, true},
		{"pre_tts_synthesis", time.Hour, true},
		{"post_tool_call", 0, false}, // 0 disables the bounded path
		{"pre_tool_call", 0, false},
		{"subagent_stop", time.Hour, false},
		{"pre_gateway_dispatch", time.Hour, false},
		{"on_session_finalize", time.Hour, false},
		{"kanban_task_claimed", time.Hour, false},
		{"custom_unknown_hook", time.Hour, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%v", tt.hook, tt.timeout), func(t *testing.T) {
			h := newHarness(t, tt.timeout)
			h.d.Register(tt.hook, cb("p", "probe", func(ctx context.Context, _ map[string]any) (any, error) {
				_, has := ctx.Deadline()
				return has, nil
			}))
			got := h.d.Fire(context.Background(), Name(tt.hook), nil)
			if want := []any{tt.want}; !reflect.DeepEqual(got, want) {
				t.Errorf("callback saw deadline = %v, want %v", got, want)
			}
		})
	}
}

func TestCallerThreadHookRunsInline(t *testing.T) {
	h := newHarness(t, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var laterCalls atomic.Int32
	// The first callback is interrupted mid-run; it still completes (nothing
	// is abandoned on the caller's thread) and later callbacks do not start.
	h.d.Register("subagent_stop", cb("a", "first", func(context.Context, map[string]any) (any, error) {
		cancel()
		return "a", nil
	}))
	h.d.Register("subagent_stop", cb("b", "second", func(context.Context, map[string]any) (any, error) {
		laterCalls.Add(1)
		return "b", nil
	}))
	got := h.d.Fire(ctx, "subagent_stop", nil)
	if want := []any{"a"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Fire = %v, want %v", got, want)
	}
	if n := laterCalls.Load(); n != 0 {
		t.Errorf("second callback ran %d times after the interrupt", n)
	}
}

func TestSuppressionWindow(t *testing.T) {
	tests := []struct {
		hook     string
		skipped  []any // result of a suppressed call
		timedOut []any // result of the call that timed out
	}{
		{"pre_tool_call", []any{timeoutBlock("pre_tool_call")}, []any{timeoutBlock("pre_tool_call")}},
		{"post_tool_call", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.hook, func(t *testing.T) {
			h := newHarness(t, shortTimeout)
			var calls atomic.Int32
			h.d.Register(tt.hook, cb("p", "guard", func(ctx context.Context, p map[string]any) (any, error) {
				calls.Add(1)
				if p["tool_call_id"] == "hang" {
					<-ctx.Done()
					return nil, ctx.Err()
				}
				return "ran", nil
			}))
			fire := func(id string) []any {
				return h.d.Fire(context.Background(), Name(tt.hook), map[string]any{"tool_call_id": id, "turn_id": "turn"})
			}

			if got := fire("hang"); !reflect.DeepEqual(got, tt.timedOut) {
				t.Fatalf("first call = %v, want %v", got, tt.timedOut)
			}
			h.waitSettled(t, 1)

			steps := []struct {
				advance time.Duration
				want    []any
				calls   int32
			}{
				{0, tt.skipped, 1},                        // another call, same callback: suppressed
				{59 * time.Second, tt.skipped, 1},         // still inside the window
				{time.Second, []any{"ran"}, 2},            // window over: runs again
				{0, []any{"ran"}, 3},                      // and stays admitted
				{SuppressionWindow * 10, []any{"ran"}, 4}, // no lingering state
			}
			for i, s := range steps {
				h.clock.Advance(s.advance)
				got := fire(fmt.Sprintf("call-%d", i))
				if !reflect.DeepEqual(got, s.want) {
					t.Errorf("step %d: Fire = %v, want %v", i, got, s.want)
				}
				if n := calls.Load(); n != s.calls {
					t.Errorf("step %d: callback ran %d times, want %d", i, n, s.calls)
				}
			}
			h.waitSettled(t, 3)
			if w := h.log.messages(slog.LevelWarn, "skipped after previous timeout or while still running"); len(w) != 2 {
				t.Errorf("skip warnings = %q", w)
			}
		})
	}
}

func TestAbandonedCap(t *testing.T) {
	h := newHarness(t, shortTimeout)
	unblock := make(chan struct{})
	var calls atomic.Int32
	// A hung plugin: ignores ctx until the runtime (here: the test) ends it.
	h.d.Register("pre_tool_call", cb("hung", "guard", func(context.Context, map[string]any) (any, error) {
		calls.Add(1)
		<-unblock
		return "done", nil
	}))
	blocked := []any{timeoutBlock("pre_tool_call")}
	fire := func(id string) []any {
		return h.d.Fire(context.Background(), "pre_tool_call", map[string]any{"tool_call_id": id})
	}

	steps := []struct {
		name    string
		advance time.Duration
		id      string
		calls   int32
	}{
		{"first call times out", 0, "c1", 1},
		{"same call id still running: skipped", SuppressionWindow, "c1", 1},
		{"new call id after the window runs, times out", 0, "c2", 2},
		{"third abandoned invocation", SuppressionWindow, "c3", 3},
		{"cap reached: skipped without running", SuppressionWindow, "c4", 3},
		{"still capped later", SuppressionWindow * 5, "c5", 3},
	}
	for _, s := range steps {
		h.clock.Advance(s.advance)
		if got := fire(s.id); !reflect.DeepEqual(got, blocked) {
			t.Errorf("%s: Fire = %v, want %v", s.name, got, blocked)
		}
		if n := calls.Load(); n != s.calls {
			t.Errorf("%s: callback ran %d times, want %d", s.name, n, s.calls)
		}
	}
	if w := h.log.messages(slog.LevelWarn, "3 abandoned invocation(s) still running"); len(w) != 2 {
		t.Errorf("cap warnings = %q", w)
	}

	// The runtime stops the hung work; the slots free up and the callback is retried.
	close(unblock)
	h.waitSettled(t, 3)
	h.clock.Advance(SuppressionWindow)
	if got := fire("c6"); !reflect.DeepEqual(got, []any{"done"}) {
		t.Errorf("after release: Fire = %v, want [done]", got)
	}
	h.waitSettled(t, 1)
}

func TestCallerCancellation(t *testing.T) {
	tests := []struct {
		hook    string
		timeout time.Duration
		want    []any
	}{
		{"post_llm_call", 0, []any{"a", "c"}},
		{"post_llm_call", time.Hour, []any{"a", "c"}},
		{"on_session_finalize", 0, []any{"a", "c"}},
		{"pre_tool_call", time.Hour, []any{"a", timeoutBlock("pre_tool_call"), timeoutBlock("pre_tool_call"), "c"}},
		{"pre_tool_call", 0, []any{"a", timeoutBlock("pre_tool_call"), timeoutBlock("pre_tool_call"), "c"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%v", tt.hook, tt.timeout), func(t *testing.T) {
			h := newHarness(t, tt.timeout)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			b1Started := make(chan struct{})
			var b2Calls atomic.Int32
			h.d.Register(tt.hook, cb("a", "a1", returns("a")))
			h.d.Register(tt.hook, cb("b", "b1", untilDone(b1Started)))
			h.d.Register(tt.hook, cb("b", "b2", func(context.Context, map[string]any) (any, error) {
				b2Calls.Add(1)
				return "b2", nil
			}))
			h.d.Register(tt.hook, cb("c", "c1", returns("c")))

			res := make(chan []any)
			go func() { res <- h.d.Fire(ctx, Name(tt.hook), map[string]any{"tool_call_id": "t"}) }()
			wait(t, b1Started, "b1 start")
			h.waitSettled(t, 2) // a1 and c1 have delivered their results
			cancel()
			var got []any
			select {
			case got = <-res:
			case <-time.After(guard):
				t.Fatal("Fire kept waiting after the caller cancelled")
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Fire = %v, want %v", got, tt.want)
			}
			h.waitSettled(t, 1) // b1 saw the cancellation and returned
			if n := b2Calls.Load(); n != 0 {
				t.Errorf("b2 started %d times after cancellation", n)
			}
		})
	}
}

func TestFireAlreadyCancelled(t *testing.T) {
	h := newHarness(t, time.Hour)
	var calls atomic.Int32
	count := func(context.Context, map[string]any) (any, error) { calls.Add(1); return "x", nil }
	h.d.Register("pre_tool_call", cb("a", "a1", count))
	h.d.Register("post_tool_call", cb("a", "a1", count))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got, want := h.d.Fire(ctx, "pre_tool_call", nil), []any{timeoutBlock("pre_tool_call")}; !reflect.DeepEqual(got, want) {
		t.Errorf("fail-closed Fire = %v, want %v", got, want)
	}
	if got := h.d.Fire(ctx, "post_tool_call", nil); len(got) != 0 {
		t.Errorf("fail-open Fire = %v, want nothing", got)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("callbacks ran %d times", n)
	}
}

func TestFirePayloadCopies(t *testing.T) {
	h := newHarness(t, time.Hour)
	seen := make(chan map[string]any, 1)
	h.d.Register("post_tool_call", cb("a", "mutator", func(_ context.Context, p map[string]any) (any, error) {
		p["injected"] = true
		delete(p, "tool_name")
		return nil, nil
	}))
	h.d.Register("post_tool_call", cb("a", "observer", func(_ context.Context, p map[string]any) (any, error) {
		seen <- p
		return nil, nil
	}))
	payload := map[string]any{"tool_name": "terminal", "tool_call_id": "t"}
	h.d.Fire(context.Background(), "post_tool_call", payload)

	if want := map[string]any{"tool_name": "terminal", "tool_call_id": "t"}; !reflect.DeepEqual(payload, want) {
		t.Errorf("caller's payload changed: %v", payload)
	}
	want := map[string]any{"tool_name": "terminal", "tool_call_id": "t", TelemetryField: ObserverSchemaVersion}
	if got := <-seen; !reflect.DeepEqual(got, want) {
		t.Errorf("second callback saw %v, want %v", got, want)
	}
}

func TestFireTelemetryField(t *testing.T) {
	tests := []struct {
		hook    string
		payload map[string]any
		want    any // nil: absent
	}{
		{"pre_tool_call", nil, ObserverSchemaVersion},
		{"on_kanban_dispatch_tick", map[string]any{"board": "b"}, ObserverSchemaVersion},
		{"subagent_stop", nil, ObserverSchemaVersion},
		{"custom_unknown_hook", nil, ObserverSchemaVersion},
		{"gateway_platform_event", map[string]any{"platform": "telegram"}, nil},
		{"post_tool_call", map[string]any{TelemetryField: "caller.v2"}, "caller.v2"}, // caller's value kept
	}
	for _, tt := range tests {
		t.Run(tt.hook, func(t *testing.T) {
			h := newHarness(t, time.Hour)
			h.d.Register(tt.hook, cb("p", "probe", func(_ context.Context, p map[string]any) (any, error) {
				v, ok := p[TelemetryField]
				if !ok {
					return "absent", nil
				}
				return v, nil
			}))
			want := tt.want
			if want == nil {
				want = "absent"
			}
			if got := h.d.Fire(context.Background(), Name(tt.hook), tt.payload); !reflect.DeepEqual(got, []any{want}) {
				t.Errorf("telemetry = %v, want %v", got, want)
			}
		})
	}
}

func TestRegisterUnknownHook(t *testing.T) {
	h := newHarness(t, time.Hour)
	h.d.Register("bogus_hook", cb("p", "f", returns("still called")))
	w := h.log.messages(slog.LevelWarn, "registered unknown hook")
	want := "Plugin 'p' registered unknown hook 'bogus_hook' (valid: " + strings.Join(Names(), ", ") + ")"
	if len(w) != 1 || w[0] != want {
		t.Errorf("warnings = %q\nwant %q", w, want)
	}
	if !h.d.Has("bogus_hook") {
		t.Error("unknown hook not stored")
	}
	if got := h.d.Fire(context.Background(), "bogus_hook", nil); !reflect.DeepEqual(got, []any{"still called"}) {
		t.Errorf("Fire = %v", got)
	}
	h.d.Register("pre_tool_call", cb("p", "f", returns(nil)))
	if n := len(h.log.messages(slog.LevelWarn, "registered unknown hook")); n != 1 {
		t.Errorf("known hook registration warned (%d warnings)", n)
	}
}

func TestUnregister(t *testing.T) {
	h := newHarness(t, time.Hour)
	unA1 := h.d.Register("post_llm_call", cb("a", "a1", returns("a1")))
	h.d.Register("post_llm_call", cb("a", "a2", returns("a2")))
	h.d.Register("post_llm_call", cb("b", "b1", returns("b1")))
	h.d.Register("pre_llm_call", cb("b", "b2", returns("b2")))
	fire := func(hook string) []any { return h.d.Fire(context.Background(), Name(hook), nil) }

	steps := []struct {
		name     string
		do       func()
		post     []any
		pre      []any
		hasPost  bool
		hasPreLL bool
	}{
		{"all registered", func() {}, []any{"a1", "a2", "b1"}, []any{"b2"}, true, true},
		{"unregister one", unA1, []any{"a2", "b1"}, []any{"b2"}, true, true},
		{"unregister twice is harmless", unA1, []any{"a2", "b1"}, []any{"b2"}, true, true},
		{"unregister plugin b", func() { h.d.UnregisterPlugin("b") }, []any{"a2"}, nil, true, false},
		{"unregister plugin a", func() { h.d.UnregisterPlugin("a") }, nil, nil, false, false},
	}
	for _, s := range steps {
		s.do()
		if got := fire("post_llm_call"); !reflect.DeepEqual(got, s.post) {
			t.Errorf("%s: post_llm_call = %v, want %v", s.name, got, s.post)
		}
		if got := fire("pre_llm_call"); !reflect.DeepEqual(got, s.pre) {
			t.Errorf("%s: pre_llm_call = %v, want %v", s.name, got, s.pre)
		}
		if h.d.Has("post_llm_call") != s.hasPost || h.d.Has("pre_llm_call") != s.hasPreLL {
			t.Errorf("%s: Has = %v/%v, want %v/%v", s.name,
				h.d.Has("post_llm_call"), h.d.Has("pre_llm_call"), s.hasPost, s.hasPreLL)
		}
	}
}

func TestConcurrentFireAndRegistration(t *testing.T) {
	h := newHarness(t, time.Hour)
	h.d.Register("pre_tool_call", cb("base", "f", returns("base")))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				id := fmt.Sprintf("p%d-%d", i, j)
				un := h.d.Register("pre_tool_call", cb(id, "f", returns(id)))
				got := h.d.Fire(context.Background(), "pre_tool_call", map[string]any{"tool_call_id": id})
				if len(got) == 0 || got[0] != "base" {
					t.Errorf("Fire = %v, want base first", got)
				}
				un()
			}
		})
	}
	wg.Wait()
	if got := h.d.Fire(context.Background(), "pre_tool_call", nil); !reflect.DeepEqual(got, []any{"base"}) {
		t.Errorf("after churn: Fire = %v", got)
	}
}

func BenchmarkFireNoCallbacks(b *testing.B) {
	d := New(Options{Timeout: time.Second, Logger: slog.New(slog.DiscardHandler)})
	d.checkPayloads = false
	payload := map[string]any{"tool_name": "terminal", "args": map[string]any{}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		d.Fire(ctx, "pre_tool_call", payload)
	}
}

func BenchmarkFireTwoPlugins(b *testing.B) {
	d := New(Options{Timeout: time.Second, Logger: slog.New(slog.DiscardHandler)})
	d.checkPayloads = false
	d.Register("post_tool_call", cb("a", "f", returns("a")))
	d.Register("post_tool_call", cb("b", "f", returns(nil)))
	payload := map[string]any{"tool_name": "terminal", "tool_call_id": "t"}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		d.Fire(ctx, "post_tool_call", payload)
	}
}

// A lone out-of-process callback runs on the firing goroutine with the payload
// encoded once; it keeps every rule of the worker path: results, fail-closed
// errors, timeouts with suppression, and the caller giving up.
func TestLoneEncodedCallback(t *testing.T) {
	hang := func(ctx context.Context, _ []byte) (any, error) { <-ctx.Done(); return "late", nil }
	tests := []struct {
		name   string
		hook   string
		fn     func(ctx context.Context, payload []byte) (any, error)
		cancel bool
		want   []any
		warn   string
	}{
		{name: "result", hook: "pre_tool_call", fn: func(_ context.Context, p []byte) (any, error) {
			var m map[string]any
			if err := json.Unmarshal(p, &m); err != nil {
				return nil, err
			}
			return map[string]any{"action": "block", "message": m["tool_name"].(string) + " " + m[TelemetryField].(string)}, nil
		}, want: []any{map[string]any{"action": "block", "message": "t hermes.observer.v1"}}},
		{name: "raises fail-closed", hook: "pre_tool_call", fn: func(context.Context, []byte) (any, error) {
			return nil, excErr{"KeyError", "'x'"}
		}, want: []any{map[string]any{"action": "block", "message": "pre_tool_call plugin callback guard raised KeyError: 'x'"}}},
		{name: "raises fail-open", hook: "post_tool_call", fn: func(context.Context, []byte) (any, error) {
			return nil, excErr{"KeyError", "'x'"}
		}, want: nil},
		{name: "timeout fail-closed", hook: "pre_tool_call", fn: hang, want: []any{timeoutBlock("pre_tool_call")},
			warn: "Hook 'pre_tool_call' callback guard timed out after 50ms"},
		{name: "timeout fail-open", hook: "transform_llm_output", fn: hang, want: nil,
			warn: "Hook 'transform_llm_output' callback guard timed out after 50ms"},
		{name: "caller gives up", hook: "pre_tool_call", fn: hang, cancel: true, want: []any{timeoutBlock("pre_tool_call")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, shortTimeout)
			h.d.Register(tt.hook, Callback{PluginID: "p", Name: "guard", InvokeEncoded: tt.fn,
				Invoke: func(context.Context, map[string]any) (any, error) { t.Error("Invoke used"); return nil, nil }})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancel {
				time.AfterFunc(10*time.Millisecond, cancel)
				h.d.SetTimeout(guard)
			}
			got := h.d.Fire(ctx, Name(tt.hook), map[string]any{"tool_name": "t", "tool_call_id": "c1"})
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Fire = %#v, want %#v", got, tt.want)
			}
			if tt.warn != "" {
				if w := h.log.messages(slog.LevelWarn, tt.warn); len(w) != 1 {
					t.Errorf("timeout warnings = %q", w)
				}
				// Suppressed for the window, as on the worker path.
				if again := h.d.Fire(context.Background(), Name(tt.hook), map[string]any{"tool_name": "t"}); !reflect.DeepEqual(again, tt.want) {
					t.Errorf("Fire while suppressed = %#v, want %#v", again, tt.want)
				}
				if w := h.log.messages(slog.LevelWarn, "skipped after previous timeout"); len(w) != 1 {
					t.Errorf("suppression warnings = %q", w)
				}
			}
		})
	}
}
