package runtime

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/hermes-go/hermes/internal/plugins/pybridge"
	"github.com/hermes-go/hermes/pkg/protocol"
)

type recorder struct {
	mu    sync.Mutex
	tools []protocol.RegisterToolParams
	hooks []protocol.RegisterHookParams
	lines []string
}

func (r *recorder) handle(ctx context.Context, method string, params json.RawMessage) (any, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch method {
	case protocol.MethodRegisterTool:
		var p protocol.RegisterToolParams
		_ = json.Unmarshal(params, &p)
		r.tools = append(r.tools, p)
		return protocol.RegisterResult{Registered: true}, nil
	case protocol.MethodRegisterHook:
		var p protocol.RegisterHookParams
		_ = json.Unmarshal(params, &p)
		r.hooks = append(r.hooks, p)
		return protocol.RegisterResult{Registered: true}, nil
	case protocol.MethodLog:
		return nil, nil
	}
	return nil, protocol.Errorf(protocol.CodeMethodNotFound, "no %s", method)
}

// registered returns what the plugin registered. The handler ran before the
// register call returned, but that order passes through the plugin process,
// which the race detector cannot see: read under the lock.
func (r *recorder) registered() ([]protocol.RegisterToolParams, []protocol.RegisterHookParams) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.tools), slices.Clone(r.hooks)
}

func (r *recorder) sink(id, stream, line string) {
	r.mu.Lock()
	r.lines = append(r.lines, stream+": "+line)
	r.mu.Unlock()
}

func startHello(t *testing.T, rec *recorder) *Process {
	t.Helper()
	ctx := context.Background()
	cache := t.TempDir()
	info, err := ProbePython(ctx, nil, ChooseInterpreter("", os.Getenv), os.Getenv, cache, t.TempDir())
	if err != nil {
		t.Skipf("no python: %v", err)
	}
	script, err := pybridge.Ensure(cache)
	if err != nil {
		t.Fatal(err)
	}
	dir, _ := filepath.Abs("../../../examples/plugins/hello-world")
	rt := &Python{Interpreter: info.Executable, Script: script, Options: Options{Sink: rec.sink, Reaper: testReaper}}
	spec := Spec{Init: protocol.InitializeParams{Plugin: protocol.PluginInfo{ID: "hello-world", Name: "hello-world", Dir: dir, Source: "user"}}, Env: os.Environ()}
	p, res, err := rt.Start(ctx, spec, rec.handle)
	if err != nil {
		t.Fatal(err)
	}
	if res.Runtime != "python" {
		t.Fatalf("runtime %q", res.Runtime)
	}
	t.Cleanup(func() { p.Stop(context.Background()) })
	if err := p.Call(ctx, protocol.MethodRegister, struct{}{}, nil); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPythonHelloWorld(t *testing.T) {
	rec := &recorder{}
	p := startHello(t, rec)
	ctx := context.Background()
	regTools, regHooks := rec.registered()
	if len(regTools) != 1 || regTools[0].Name != "hello_world" || len(regHooks) != 1 {
		t.Fatalf("registrations: %+v %+v", regTools, regHooks)
	}
	var out string
	err := p.Call(ctx, protocol.MethodToolCall, protocol.ToolCallParams{Handle: regTools[0].Handle, Args: map[string]any{"name": "Ada"}, Kwargs: map[string]any{"task_id": "t1"}}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if out != `{"success": true, "greeting": "Hello, Ada!"}` {
		t.Fatalf("got %q", out)
	}
	var hookRes any
	err = p.Call(ctx, protocol.MethodHookCall, protocol.HookCallParams{Handle: regHooks[0].Handle, Hook: "post_tool_call",
		Kwargs: map[string]any{"tool_name": "hello_world", "args": map[string]any{"name": "Ada"}, "result": out, "task_id": "x"}}, &hookRes)
	if err != nil {
		t.Fatal(err)
	}
	p.Stop(ctx)
	p.WaitOutput(ctx)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	found := false
	for _, l := range rec.lines {
		if l == "stdout: [hello-world] tool called: hello_world" {
			found = true
		}
	}
	if !found {
		t.Fatalf("hook line not seen: %q", rec.lines)
	}
}

// startRegistered starts the Python plugin in dir through the bridge and runs its
// register(); the recorder holds what it registered.
func startRegistered(b *testing.B, dir, id string) (*Process, *recorder) {
	rec := &recorder{}
	ctx := context.Background()
	cache := b.TempDir()
	info, err := ProbePython(ctx, nil, ChooseInterpreter("", os.Getenv), os.Getenv, cache, b.TempDir())
	if err != nil {
		b.Skip(err)
	}
	script, _ := pybridge.Ensure(cache)
	rt := &Python{Interpreter: info.Executable, Script: script, Options: Options{Sink: rec.sink, Reaper: testReaper}}
	spec := Spec{Init: protocol.InitializeParams{Plugin: protocol.PluginInfo{ID: id, Name: id, Dir: dir, Source: "user"}}, Env: os.Environ()}
	p, _, err := rt.Start(ctx, spec, rec.handle)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Stop(context.Background()) })
	if err := p.Call(ctx, protocol.MethodRegister, struct{}{}, nil); err != nil {
		b.Fatal(err)
	}
	return p, rec
}

func BenchmarkToolCallPython(b *testing.B) {
	ctx := context.Background()
	dir, _ := filepath.Abs("../../../examples/plugins/hello-world")
	p, rec := startRegistered(b, dir, "hello-world")
	regTools, _ := rec.registered()
	params := protocol.ToolCallParams{Handle: regTools[0].Handle, Args: map[string]any{"name": "Ada"}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var out string
		if err := p.Call(ctx, protocol.MethodToolCall, params, &out); err != nil {
			b.Fatal(err)
		}
	}
}
