package runtime

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hermes-go/hermes/pkg/protocol"
)

// wedgedPlugin calls ctx.call_mcp once (the caller reads the pipe itself) and
// twice at once from threads (one reads, one waits for the reader).
const wedgedPlugin = `
import json, threading


def register(ctx):
    def wedged(args, **kw):
        return json.dumps(ctx.call_mcp("fs", "echo", None, timeout=1))

    def wedged_pair(args, **kw):
        out = []
        threads = [threading.Thread(target=lambda: out.append(ctx.call_mcp("fs", "echo", timeout="1")))
                   for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return json.dumps(out)

    ctx.register_tool(name="wedged", toolset="w", schema={}, handler=wedged)
    ctx.register_tool(name="wedged_pair", toolset="w", schema={}, handler=wedged_pair)
    ctx.register_tool(name="alive", toolset="w", schema={}, handler=lambda args, **kw: "yes")
`

// A host that never answers ctx.call_mcp cannot hold the plugin: each call
// gives up after its timeout and the bridge's margin, with an envelope.
func TestCallMCPWaitIsBoundedPluginSide(t *testing.T) {
	interp, script := python(t)
	dir := filepath.Join(t.TempDir(), "wedged")
	writeFile(t, filepath.Join(dir, "__init__.py"), wedgedPlugin, 0o644)
	h := newFaultHost()
	var facades atomic.Int32
	handle := func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		if method == protocol.MethodFacade {
			facades.Add(1)
			<-ctx.Done() // wedged until the plugin stops
			return nil, ctx.Err()
		}
		return h.handle(ctx, method, params)
	}
	rt := &Python{Interpreter: interp, Script: script, Options: testOptions(h)}
	spec := Spec{Init: protocol.InitializeParams{Plugin: protocol.PluginInfo{ID: "wedged", Name: "wedged", Dir: dir, Source: "user"}}, Env: os.Environ()}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	p, _, err := rt.Start(ctx, spec, handle)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopBounded(t, p) })
	if err := p.Call(ctx, protocol.MethodRegister, struct{}{}, nil); err != nil {
		t.Fatal(err)
	}
	want := `{"ok": false, "error": "hermes did not answer the call of tool 'echo' on MCP server 'fs' within 6s; the call was abandoned"}`
	var wg sync.WaitGroup
	var single, pair string
	var errSingle, errPair error
	wg.Go(func() { single, errSingle = callTool(p, h.handle1(t, "wedged"), nil) })
	wg.Go(func() { pair, errPair = callTool(p, h.handle1(t, "wedged_pair"), nil) })
	wg.Wait()
	if errSingle != nil || single != want {
		t.Errorf("wedged: %q, %v; want %s", single, errSingle, want)
	}
	if errPair != nil || pair != "["+want+", "+want+"]" {
		t.Errorf("wedged_pair: %q, %v", pair, errPair)
	}
	if n := facades.Load(); n != 3 {
		t.Errorf("the host saw %d call_mcp calls, want 3", n)
	}
	out, err := callTool(p, h.handle1(t, "alive"), nil)
	if err != nil || out != "yes" {
		t.Fatalf("the plugin no longer answers: %q, %v\n%s", out, err, strings.TrimSpace(h.lines()))
	}
}
