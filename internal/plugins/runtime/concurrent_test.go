package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/plugins/pybridge"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// concurrentHost answers has_plugin so handlers can call back into the host.
type concurrentHost struct {
	recorder
}

func (h *concurrentHost) handle(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if method == protocol.MethodHasPlugin {
		var p protocol.NameParams
		_ = json.Unmarshal(params, &p)
		return p.Name == "yes", nil
	}
	return h.recorder.handle(ctx, method, params)
}

func startConcurrent(t *testing.T) (*Process, map[string]string) {
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
	h := &concurrentHost{}
	dir, _ := filepath.Abs("testdata/concurrent")
	rt := &Python{Interpreter: info.Executable, Script: script, Options: Options{Sink: h.sink, Reaper: testReaper}}
	spec := Spec{Init: protocol.InitializeParams{Plugin: protocol.PluginInfo{ID: "concurrent", Name: "concurrent", Dir: dir, Source: "user"}}, Env: os.Environ()}
	p, _, err := rt.Start(ctx, spec, h.handle)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(context.Background()) })
	if err := p.Call(ctx, protocol.MethodRegister, struct{}{}, nil); err != nil {
		t.Fatal(err)
	}
	handles := map[string]string{}
	tools, _ := h.registered()
	for _, tl := range tools {
		handles[tl.Name] = tl.Handle
	}
	return p, handles
}

// Many goroutines call one plugin at once, each call calling back into the host; a
// slow call in flight must not hold the others up.
func TestConcurrentCallsWithCallbacks(t *testing.T) {
	p, handles := startConcurrent(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	slowDone := make(chan error, 1)
	slowOut := make(chan string, 1)
	go func() {
		var out string
		slowDone <- p.Call(ctx, protocol.MethodToolCall, protocol.ToolCallParams{Handle: handles["slow"], Args: map[string]any{"seconds": 30}}, &out)
		slowOut <- out
	}()

	var wg sync.WaitGroup
	errs := make(chan error, 800)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				n := g*1000 + i
				ask := "no"
				if i%2 == 0 {
					ask = "yes"
				}
				name := "echo"
				if i%5 == 0 {
					name = "aecho"
				}
				var out string
				if err := p.Call(ctx, protocol.MethodToolCall, protocol.ToolCallParams{Handle: handles[name], Args: map[string]any{"n": n, "ask": ask}}, &out); err != nil {
					errs <- err
					return
				}
				var res struct {
					N   int  `json:"n"`
					Has bool `json:"has"`
				}
				if err := json.Unmarshal([]byte(out), &res); err != nil || res.N != n {
					errs <- fmt.Errorf("call %d got %q", n, out)
					return
				}
				if name == "echo" && res.Has != (ask == "yes") {
					errs <- fmt.Errorf("call %d: has_plugin answer crossed: %q", n, out)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// All 400 quick calls finished while the blocked call was still holding its thread;
	// it ends only when released, and says it was released (not timed out).
	select {
	case err := <-slowDone:
		t.Fatalf("blocked call returned before it was released (err=%v)", err)
	default:
	}
	var out string
	if err := p.Call(ctx, protocol.MethodToolCall, protocol.ToolCallParams{Handle: handles["release"], Args: map[string]any{}}, &out); err != nil {
		t.Fatal(err)
	}
	if err := <-slowDone; err != nil {
		t.Fatal(err)
	}
	if got := <-slowOut; got != `{"released": true}` {
		t.Fatalf("blocked call: %s", got)
	}
}
