package runtime

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/hermes-go/hermes/internal/reaper"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// miniHostEnv makes the test binary act as a tiny hermes host (see miniHost).
const miniHostEnv = "HERMES_RUNTIME_TEST_MINIHOST"

// testCache holds the python probe cache and the unpacked bridge for the whole run.
var testCache string

// testReaper contains the processes of the tests, as hermes' own contains hermes';
// it is closed when the run ends.
var testReaper = reaper.New(reaper.Options{})

func TestMain(m *testing.M) {
	if cfg := os.Getenv(miniHostEnv); cfg != "" {
		os.Exit(miniHost(cfg))
	}
	dir, err := os.MkdirTemp("", "hermes-runtime-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testCache = dir
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		testReaper.Close()
		os.RemoveAll(dir)
		os.Exit(code)
	}))
}

// miniHostConfig tells the mini host which plugin to start.
type miniHostConfig struct {
	Interpreter string `json:"interpreter"`
	Script      string `json:"script"`
	PluginDir   string `json:"plugin_dir"`
	Marker      string `json:"marker"`
	Fork        bool   `json:"fork"` // start the plugin through a fork server
	// Reaper is "" (process groups only), "auto" (cgroups where possible) or
	// "subreaper" (the fallback).
	Reaper string `json:"reaper"`
	// Escape makes the grandchild leave the plugin's process group: "setsid" or
	// "double-fork" ("": it stays).
	Escape string `json:"escape"`
	// NoStop exits without stopping the plugin: only the reaper cleans up.
	NoStop bool `json:"no_stop"`
}

// miniHost starts one Python plugin, has it spawn a grandchild, prints
// "READY <plugin pid> <grandchild pid>" and waits until it is killed (or stdin
// closes, when it stops the plugin and exits as hermes does). Tests SIGKILL it to
// check what happens to a plugin whose host dies.
func miniHost(raw string) int {
	var cfg miniHostConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "minihost:", err)
		return 2
	}
	ctx := context.Background()
	var mu sync.Mutex // registrations may be served concurrently
	tools := map[string]string{}
	host := func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		if method == protocol.MethodRegisterTool {
			var p protocol.RegisterToolParams
			_ = json.Unmarshal(params, &p)
			mu.Lock()
			tools[p.Name] = p.Handle
			mu.Unlock()
			return protocol.RegisterResult{Registered: true}, nil
		}
		return nil, nil
	}
	var r *reaper.Reaper
	if cfg.Reaper != "" {
		r = reaper.New(reaper.Options{NoCgroups: cfg.Reaper == "subreaper"})
		defer r.Close()
	}
	rt := &Python{Interpreter: cfg.Interpreter, Script: cfg.Script, Options: Options{
		Sink:   func(id, stream, line string) { fmt.Fprintf(os.Stderr, "[%s %s] %s\n", id, stream, line) },
		Reaper: r,
	}}
	spec := Spec{Init: protocol.InitializeParams{Plugin: protocol.PluginInfo{ID: "orphan-maker", Name: "orphan-maker", Dir: cfg.PluginDir, Source: "user"}},
		Env: os.Environ(), WorkDir: cfg.PluginDir}
	if cfg.Fork {
		fs, err := StartForkServer(ctx, r, cfg.Interpreter, cfg.Script, PythonEnv(os.Environ()), cfg.PluginDir, rt.Options.Sink)
		if err != nil {
			fmt.Fprintln(os.Stderr, "minihost: fork server:", err)
			return 1
		}
		defer fs.Close()
		rt.Fork = fs
	}
	p, _, err := rt.Start(ctx, spec, host)
	if err != nil {
		fmt.Fprintln(os.Stderr, "minihost:", err)
		return 1
	}
	if err := p.Call(ctx, protocol.MethodRegister, struct{}{}, nil); err != nil {
		fmt.Fprintln(os.Stderr, "minihost: register:", err)
		return 1
	}
	var gpid string
	tool, args := "spawn", map[string]any{"marker": cfg.Marker}
	if cfg.Escape != "" {
		tool, args["how"] = "daemon", cfg.Escape
	}
	mu.Lock()
	handle := tools[tool]
	mu.Unlock()
	if err := p.Call(ctx, protocol.MethodToolCall, protocol.ToolCallParams{Handle: handle, Args: args}, &gpid); err != nil {
		fmt.Fprintln(os.Stderr, "minihost: spawn:", err)
		return 1
	}
	fmt.Printf("READY %d %s\n", p.Pid(), gpid)
	// Block until killed; a closed stdin (the test went away) ends us cleanly.
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	if !cfg.NoStop {
		p.Stop(ctx)
	}
	return 0
}
