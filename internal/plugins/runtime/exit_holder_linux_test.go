package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-go/hermes/pkg/protocol"
)

// holderPlugin's tool leaves behind a process outside its group that holds the
// plugin→host protocol pipe (fd 4, and stdout/stderr), then exits mid-call.
const holderPlugin = `
import os, subprocess, sys


def holder(args, **kw):
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                         start_new_session=True, pass_fds=(4,))
    with open(args["pidfile"], "w") as f:
        f.write(str(p.pid))
    sys.stderr.write("holder: leaving\n")
    sys.stderr.flush()
    os._exit(0)


def register(ctx):
    ctx.register_tool(name="holder", toolset="holder", schema={}, handler=holder)
`

// A plugin that exits mid-call fails the call with "exited" within the stop grace,
// even though an escaped descendant still holds the protocol pipe open (so no EOF
// ever comes) and the caller is blocked reading that pipe itself.
func TestExitWhileEscapedChildHoldsProtocolPipe(t *testing.T) {
	interp, script := python(t)
	for _, c := range []struct {
		fork    bool
		timeout time.Duration // 0: the call has no deadline of its own
	}{{false, 0}, {false, 5 * time.Second}, {true, 0}, {true, 5 * time.Second}} {
		t.Run(fmt.Sprintf("fork=%v,timeout=%v", c.fork, c.timeout), func(t *testing.T) {
			ctx := context.Background()
			h := newFaultHost()
			rt := &Python{Interpreter: interp, Script: script, Options: testOptions(h)}
			if c.fork {
				fs, err := StartForkServer(ctx, testReaper, interp, script, PythonEnv(os.Environ()), t.TempDir(), h.sink)
				if err != nil {
					t.Fatal(err)
				}
				defer fs.Close()
				rt.Fork = fs
			}
			dir := filepath.Join(t.TempDir(), "holder")
			writeFile(t, filepath.Join(dir, "__init__.py"), holderPlugin, 0o644)
			spec := Spec{Init: protocol.InitializeParams{Plugin: protocol.PluginInfo{ID: "holder", Name: "holder", Dir: dir, Source: "user"}},
				Env: os.Environ(), WorkDir: dir}
			p, _, err := rt.Start(ctx, spec, h.handle)
			if err != nil {
				t.Fatal(err)
			}
			defer stopBounded(t, p)
			if err := p.Call(ctx, protocol.MethodRegister, struct{}{}, nil); err != nil {
				t.Fatal(err)
			}
			pidfile := filepath.Join(t.TempDir(), "pid")
			defer func() {
				// The escaped child is out of the host's reach by design; the test cleans it up.
				if b, err := os.ReadFile(pidfile); err == nil {
					if pid, err := strconv.Atoi(string(b)); err == nil && pid > 0 {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			}()

			cctx, cancel := context.WithCancel(ctx)
			if c.timeout > 0 {
				cctx, cancel = context.WithTimeout(ctx, c.timeout)
			}
			defer cancel()
			// Without a deadline the call would hang for good: the guard fails it instead.
			timer := time.AfterFunc(guard, cancel)
			defer timer.Stop()
			start := time.Now()
			var out string
			err = p.Call(cctx, protocol.MethodToolCall, protocol.ToolCallParams{Handle: h.handle1(t, "holder"),
				Args: map[string]any{"pidfile": pidfile}}, &out)
			took := time.Since(start)
			var ee *ExitError
			if !errors.As(err, &ee) || !strings.Contains(err.Error(), "plugin holder exited (exit status 0)") {
				t.Fatalf("after %v: got %v (%T), want the plugin's exit; connection: %s", took, err, err, p.ConnState())
			}
			if !strings.Contains(err.Error(), "holder: leaving") {
				t.Errorf("error %q does not carry the plugin's last stderr line", err)
			}
			if limit := 2*testOptions(h).StopGrace + time.Second; took > limit {
				t.Errorf("the call took %v to fail, want within %v", took, limit)
			}
			// A later call fails at once with the same story.
			if _, err := callTool(p, h.handle1(t, "holder"), nil); err == nil || !strings.Contains(err.Error(), "exited (exit status 0)") {
				t.Errorf("call after the exit: %v", err)
			}
		})
	}
}
