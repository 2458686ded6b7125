package shellhooks

import (
	"bytes"
	"context"
	"os/exec"
	"testing"

	"github.com/hermes-go/hermes/internal/hooks"
	"github.com/hermes-go/hermes/internal/reaper"
)

// benchHook is the hook both benchmarks run: a script that reads its stdin,
// as every real hook does, and answers nothing.
const benchHook = "#!/bin/sh\ncat >/dev/null\n"

// BenchmarkShellHookPreToolCall is a pre_tool_call shell hook's whole cost per
// tool call: the dispatcher's Fire, the stdin payload, the hook's process in a
// reaper cell of its own, reading its output and evaluating it.
func BenchmarkShellHookPreToolCall(b *testing.B) {
	for _, c := range []struct {
		name string
		opts reaper.Options
	}{{"cgroup", reaper.Options{}}, {"subreaper", reaper.Options{NoCgroups: true}}, {"pgroup", reaper.Options{}}} {
		b.Run(c.name, func(b *testing.B) { benchShellHook(b, c.opts, c.name != "pgroup") })
	}
}

func benchShellHook(b *testing.B, opts reaper.Options, contain bool) {
	cmd := script(b, b.TempDir(), "hook.sh", benchHook)
	specs, _, err := Parse(map[string]any{"pre_tool_call": []any{map[string]any{"command": cmd, "matcher": "terminal"}}})
	if err != nil {
		b.Fatal(err)
	}
	var rp *reaper.Reaper
	if contain {
		rp = reaper.New(opts)
		b.Cleanup(rp.Close)
	}
	b.Log("containment:", rp.Mode())
	d := hooks.New(hooks.Options{})
	h := &Hook{Spec: specs[0], Runner: &Runner{Reaper: rp, Environ: []string{"PATH=/usr/bin:/bin"}}, Cwd: "/tmp", Profile: "default"}
	d.Register("pre_tool_call", h.Callback())
	payload := terminalPayload("ls -la")
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if res := d.Fire(ctx, hooks.HookPreToolCall, payload); res != nil {
			b.Fatalf("results %v", res)
		}
	}
}

// BenchmarkForkExecFloor is the floor: the same script started the plainest
// way, with the same payload on stdin, its output collected.
func BenchmarkForkExecFloor(b *testing.B) {
	cmd := script(b, b.TempDir(), "hook.sh", benchHook)
	stdin, err := StdinPayload("pre_tool_call", terminalPayload("ls -la"), "/tmp", "default")
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		c := exec.Command(cmd)
		c.Env = []string{"PATH=/usr/bin:/bin"}
		c.Stdin = bytes.NewReader(stdin)
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		if err := c.Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkForkExecContainedFloor is the floor of a contained hook: the same
// script started in a reaper cell of its own (a cgroup here, killed as a whole
// when it ends), which hermes' promise that nothing outlives it requires of
// any process it starts; nothing of the hook machinery.
func BenchmarkForkExecContainedFloor(b *testing.B) {
	cmd := script(b, b.TempDir(), "hook.sh", benchHook)
	stdin, err := StdinPayload("pre_tool_call", terminalPayload("ls -la"), "/tmp", "default")
	if err != nil {
		b.Fatal(err)
	}
	rp := reaper.New(reaper.Options{})
	b.Cleanup(rp.Close)
	b.Log("containment:", rp.Mode())
	b.ResetTimer()
	for b.Loop() {
		c := exec.Command(cmd)
		c.Env = []string{"PATH=/usr/bin:/bin"}
		c.Stdin = bytes.NewReader(stdin)
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		cell, err := rp.Start(c)
		if err != nil {
			b.Fatal(err)
		}
		if err := cell.Wait(nil); err != nil {
			b.Fatal(err)
		}
	}
}
