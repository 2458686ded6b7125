package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/hermes-go/hermes/internal/mcp/server"
	"github.com/hermes-go/hermes/internal/termsafe"
	"github.com/hermes-go/hermes/internal/tools"
)

// MCPServeOptions are the choices of `hermes mcp serve`.
type MCPServeOptions struct {
	Toolsets string // --toolsets as given ("" when not), the same as hermes chat's
	Verbose  bool   // -v: the protocol's log and one line per call on stderr
}

// ServeMCP runs hermes as an MCP server on stdin and stdout until the client
// closes stdin or ctx ends (SIGTERM, Ctrl-C); every plugin is stopped before it
// returns. The tools are the command's tool set, built-in and plugin, and each
// call goes through the host's pipeline as a model's would.
func (f *Factory) ServeMCP(ctx context.Context, o MCPServeOptions) error {
	// stdin and stdout are the protocol. No approval prompt may read the one
	// (so there is none: a call needing approval is refused, as with nobody at
	// a terminal), and whatever else hermes would print goes to stderr.
	in, out := f.IO.In, f.IO.Out
	f.IO.InTTY, f.IO.OutTTY = false, false
	f.IO.Out = f.IO.Err

	h, err := f.Host(ctx)
	if err != nil {
		return err
	}
	defer h.Close()

	var log *slog.Logger
	if o.Verbose {
		log = slog.New(slog.NewTextHandler(safeLines{f.IO.Err}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	start := f.Now()
	err = server.Serve(ctx, server.Stdio(in, out), func(ctx context.Context) (server.Tools, error) {
		return h.mcpTools(ctx, o.Toolsets, log, start)
	}, server.Options{Name: "hermes", Version: f.Version, Warn: f.Warn, Log: log})
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return SilentExit(ExitInterrupted)
	}
	return nil
}

// mcpTools loads the plugins and returns the tools of the chosen tool set
// that are available now (their check_fn passes), as the model would get them.
// A --toolsets naming no toolset is the usage error hermes chat gives.
func (h *Host) mcpTools(ctx context.Context, toolsets string, log *slog.Logger, start time.Time) (server.Tools, error) {
	if err := h.Load(ctx); err != nil {
		return server.Tools{}, err
	}
	if ctx.Err() != nil {
		return server.Tools{}, ctx.Err() // the client left while plugins started
	}
	if _, err := h.chooseToolsets(toolsets, h.configToolsets()); err != nil {
		return server.Tools{}, err // the process ends with it: nothing to restore
	}
	// Stdin is the protocol: nobody can be asked, so only approved hooks run.
	if err := h.RegisterShellHooks(ctx); err != nil {
		return server.Tools{}, err
	}
	var list []*tools.Tool
	for _, t := range h.Registry.Tools().List() {
		if h.tools.allows(t) && (t.Check == nil || t.Check(ctx)) {
			list = append(list, t)
		}
	}
	if log != nil {
		log.Info("plugins loaded", "tools", len(list), "ms", h.f.Now().Sub(start).Milliseconds())
	}
	return server.Tools{List: list, Runner: h.Pipeline()}, nil
}

// safeLines writes each log record with what could steer a terminal escaped
// (tool names come from plugins, arguments from the client).
type safeLines struct{ w io.Writer }

func (s safeLines) Write(p []byte) (int, error) {
	if _, err := fmt.Fprint(s.w, termsafe.Text(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
