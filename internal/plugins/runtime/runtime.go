package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/hermes-go/hermes/pkg/protocol"
)

// Spec describes one plugin to start.
type Spec struct {
	Init    protocol.InitializeParams // Plugin info, home, profile
	Runtime string                    // "python" | "exec"
	Command []string                  // exec: argv from the manifest
	Env     []string                  // base environment for the process
	WorkDir string                    // python: the user's cwd; exec: defaults to the plugin dir
}

// Runtime starts plugin processes of one kind. Start returns after the handshake.
type Runtime interface {
	Start(ctx context.Context, spec Spec, host protocol.Handler) (*Process, protocol.InitializeResult, error)
}

// Python runs directory and entry-point plugins through the embedded bridge.
type Python struct {
	Interpreter string // absolute path of the interpreter to run
	Script      string // unpacked bridge entry script
	Options     Options
	// Fork, when set and alive, forks plugin processes from a pre-started bridge
	// instead of starting an interpreter for each.
	Fork *ForkServer
}

// Start launches the bridge for one plugin.
func (r *Python) Start(ctx context.Context, spec Spec, host protocol.Handler) (*Process, protocol.InitializeResult, error) {
	cmd := Command{
		PluginID: spec.Init.Plugin.ID,
		Argv:     []string{r.Interpreter, r.Script},
		Dir:      spec.WorkDir,
		Env:      PythonEnv(spec.Env),
	}
	launch := func() (*Process, error) { return start(cmd, host, r.Options) }
	if r.Fork != nil && r.Fork.Alive() {
		launch = func() (*Process, error) { return startForked(ctx, r.Fork, cmd, host, r.Options) }
	}
	return handshake(ctx, cmd, launch, spec, r.Options)
}

// PythonEnv is the environment of a Python plugin process (and of the fork server,
// whose children all share it).
func PythonEnv(base []string) []string {
	return append(append([]string{}, base...), "PYTHONUNBUFFERED=1")
}

// Exec runs any executable that speaks the protocol (Go plugins built with pkg/pluginsdk,
// or any other language).
type Exec struct {
	Options Options
}

// Start launches the manifest's command in the plugin directory.
func (r *Exec) Start(ctx context.Context, spec Spec, host protocol.Handler) (*Process, protocol.InitializeResult, error) {
	if len(spec.Command) == 0 {
		return nil, protocol.InitializeResult{}, errors.New("runtime exec needs `command: [program, args...]` in plugin.yaml")
	}
	dir := spec.Init.Plugin.Dir
	argv := append([]string{}, spec.Command...)
	prog, err := resolveProgram(argv[0], dir)
	if err != nil {
		return nil, protocol.InitializeResult{}, err
	}
	argv[0] = prog
	wd := spec.WorkDir
	if wd == "" {
		wd = dir
	}
	cmd := Command{PluginID: spec.Init.Plugin.ID, Argv: argv, Dir: wd, Env: spec.Env}
	return handshake(ctx, cmd, func() (*Process, error) { return start(cmd, host, r.Options) }, spec, r.Options)
}

// resolveProgram finds argv[0]: a path with a separator is relative to the plugin
// directory; a bare name is looked up on PATH.
func resolveProgram(name, dir string) (string, error) {
	if strings.ContainsRune(name, '/') {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("plugin command %q not found in %s: build it first or fix `command` in plugin.yaml", name, dir)
		}
		return p, nil
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("plugin command %q is not on PATH: install it or give a path in `command`", name)
	}
	return p, nil
}

func handshake(ctx context.Context, cmd Command, launch func() (*Process, error), spec Spec, opts Options) (*Process, protocol.InitializeResult, error) {
	var res protocol.InitializeResult
	p, err := launch()
	if err != nil {
		return nil, res, err
	}
	hctx, cancel := context.WithTimeout(ctx, opts.handshakeTimeout())
	defer cancel()
	init := spec.Init
	init.ProtocolVersion = protocol.Version
	if err := p.Call(hctx, protocol.MethodInitialize, init, &res); err != nil {
		// It never became a plugin: nothing to shut down politely.
		p.abort()
		var ee *ExitError
		switch {
		case errors.As(err, &ee):
			return nil, res, fmt.Errorf("failed to start: %w", err)
		case ctx.Err() != nil:
			return nil, res, fmt.Errorf("plugin %s: start interrupted before the protocol handshake completed: %w", cmd.PluginID, ctx.Err())
		case errors.Is(err, context.DeadlineExceeded):
			return nil, res, fmt.Errorf("plugin %s did not complete the protocol handshake within %s and was stopped: check that %s speaks the hermes plugin protocol (it must answer %q on the pipe named by %s)",
				cmd.PluginID, opts.handshakeTimeout(), cmd.Argv[0], protocol.MethodInitialize, protocol.EnvFDIn)
		}
		return nil, res, fmt.Errorf("plugin %s handshake failed: %w", cmd.PluginID, err)
	}
	if res.ProtocolVersion != protocol.Version {
		p.Stop(context.Background())
		return nil, res, fmt.Errorf("plugin %s speaks protocol version %d, this hermes speaks %d: update the plugin or hermes",
			cmd.PluginID, res.ProtocolVersion, protocol.Version)
	}
	return p, res, nil
}
