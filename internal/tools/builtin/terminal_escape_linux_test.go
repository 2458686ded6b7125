package builtin

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/reaper"
	"github.com/hermes-go/hermes/internal/testutil/procs"
)

// A command's processes that leave its process group (setsid, a daemon's double
// fork) do not outlive the call either, with cgroups and with the subreaper
// fallback; nor a call that times out.
func TestTerminalEscapedProcessesDoNotOutliveTheCall(t *testing.T) {
	commands := []struct{ name, command string }{
		{"setsid", "setsid sleep 300 >/dev/null 2>&1 < /dev/null & sleep 0.2; echo done"},
		{"double fork", "python3 -c 'import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        os.closerange(0, 256)\n        time.sleep(300)\n    os._exit(0)\nos.wait()'; echo done"},
		{"timeout", "setsid sleep 300 >/dev/null 2>&1 < /dev/null & sleep 300"},
	}
	for _, o := range []reaper.Options{{}, {NoCgroups: true}} {
		r := reaper.New(o)
		mode := r.Mode()
		for _, c := range commands {
			t.Run(strings.Fields(mode)[0]+"/"+c.name, func(t *testing.T) {
				marker := procs.NewMarker()
				p := newPipeline(t, Options{WorkDir: t.TempDir(), Env: []string{"HERMES_TEST_MARKER=" + marker}, Reaper: r})
				args := map[string]any{"command": c.command}
				if c.name == "timeout" {
					args["timeout"] = 1
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				m, out := callCtx(ctx, t, p, Terminal, args)
				if c.name == "timeout" {
					if m["exit_code"] != 124.0 {
						t.Fatalf("result %s", out.Result)
					}
				} else if m["exit_code"] != 0.0 || m["output"] != "done\n" {
					t.Fatalf("result %s", out.Result)
				}
				procs.NoneMarked(t, marker, 5*time.Second)
			})
		}
		r.Close()
	}
}
