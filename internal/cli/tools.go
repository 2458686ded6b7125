package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/hermes-go/hermes/internal/app"
	"github.com/hermes-go/hermes/internal/jsonx"
	"github.com/hermes-go/hermes/internal/tools"
)

func newCmdTools(f *app.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "List and call the tools the model can use (built-in and from enabled plugins)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newCmdToolsList(f, nil), newCmdToolsCall(f, nil))
	return cmd
}

// withHost runs fn on the loaded plugin host (see app.Factory.WithHost).
type withHost func(ctx context.Context, fn func(h *app.Host) error) error

type toolRow struct {
	Name        string `json:"name"`
	Toolset     string `json:"toolset"`
	Source      string `json:"source"`
	Description string `json:"description"`
	Available   bool   `json:"available"`
	Unavailable string `json:"unavailable_reason,omitempty"`
}

// toolRows lists every tool with its availability. Only tools with a check_fn
// cost a call, and those run side by side: one slow check must not add up.
func toolRows(ctx context.Context, list []*tools.Tool) []toolRow {
	rows := make([]toolRow, len(list))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i, t := range list {
		rows[i] = toolRow{Name: t.Name, Toolset: t.Toolset, Source: t.Source, Description: t.ModelDescription(), Available: true}
		if t.Check == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			ok, err := t.Available(ctx)
			rows[i].Available = ok
			switch {
			case err != nil:
				rows[i].Unavailable = "check_fn raised " + err.Error()
			case !ok:
				rows[i].Unavailable = "check_fn returned False"
			}
		}()
	}
	wg.Wait()
	return rows
}

type toolsListOptions struct {
	IO       *app.IOStreams
	WithHost withHost
	Color    func() bool

	JSON bool
}

func newCmdToolsList(f *app.Factory, runF func(*toolsListOptions) error) *cobra.Command {
	opts := &toolsListOptions{IO: f.IO, WithHost: f.WithHost, Color: f.Color}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List every available tool",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return toolsListRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "machine-readable output")
	return cmd
}

func toolsListRun(ctx context.Context, opts *toolsListOptions) error {
	return opts.WithHost(ctx, func(h *app.Host) error {
		rows := toolRows(ctx, h.Registry.Tools().List())
		out := opts.IO.Out
		if opts.JSON {
			return writeJSON(out, rows)
		}
		if len(rows) == 0 {
			fmt.Fprintln(out, "No tools available. Enable a plugin with: hermes plugins enable <name>")
			return nil
		}
		t := &table{color: opts.Color()}
		t.header("Name", "Toolset", "Source", "Description")
		for _, r := range rows {
			desc := r.Description
			if !r.Available {
				desc = "(unavailable: " + r.Unavailable + ") " + desc
			}
			t.row(r.Name, r.Toolset, r.Source, truncate(desc, 70))
		}
		t.write(out)
		return nil
	})
}

type toolsCallOptions struct {
	IO       *app.IOStreams
	WithHost withHost

	Name string
	Args map[string]any // --args, decoded
}

func newCmdToolsCall(f *app.Factory, runF func(*toolsCallOptions) error) *cobra.Command {
	opts := &toolsCallOptions{IO: f.IO, WithHost: f.WithHost}
	var argsJSON string
	cmd := &cobra.Command{
		Use:     "call NAME",
		Short:   "Call one tool through the full pipeline (hooks, approval, validation) and print its result",
		Example: `  hermes tools call hello_world --args '{"name":"Ada"}'`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			var err error
			if opts.Args, err = parseToolArgs(argsJSON); err != nil {
				return &app.ExitError{Code: app.ExitUsage, Message: fmt.Sprintf("Error: --args must be a JSON object, e.g. --args '{\"name\":\"Ada\"}': %v", err)}
			}
			if runF != nil {
				return runF(opts)
			}
			return toolsCallRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&argsJSON, "args", "{}", "tool arguments as a JSON object")
	return cmd
}

func toolsCallRun(ctx context.Context, opts *toolsCallOptions) error {
	return opts.WithHost(ctx, func(h *app.Host) error {
		t, ok := h.Registry.Tools().Get(opts.Name)
		if !ok && strings.HasPrefix(opts.Name, "mcp__") {
			// An MCP server's tool: connect the servers (only now: a plain
			// tools call starts none) and look again.
			if err := h.OfferMCPTools(ctx); err != nil {
				return app.Failf("Error: %v", err)
			}
			t, ok = h.Registry.Tools().Get(opts.Name)
		}
		if !ok {
			return unknownTool(h, opts.Name)
		}
		if why := h.ToolDisabled(t); why != "" {
			return app.Failf("Error: %s", why)
		}
		if err := h.RegisterShellHooks(ctx); err != nil {
			return err
		}
		// The user asked on the command line: an approval prompt says so.
		out := h.Pipeline().Run(ctx, tools.Call{Name: opts.Name, Args: opts.Args, TaskID: "cli", Origin: tools.Origin{Kind: tools.FromUser}})
		// The result is what a plugin's tool returned: --json-like text, shown escaped.
		fmt.Fprintln(opts.IO.Out, safeText(h.Redact(out.Result)))
		if ctx.Err() != nil {
			return app.SilentExit(app.ExitInterrupted) // Ctrl-C: 130, as a plugin CLI command exits
		}
		if out.Status != tools.StatusOK {
			return app.SilentExit(app.ExitFail)
		}
		return nil
	})
}

// unknownTool says why no tool is called name, and where to look.
func unknownTool(h *app.Host, name string) error {
	msg := fmt.Sprintf("unknown tool %q", name)
	failed := 0
	for _, p := range h.Plugins() {
		if p.Decision.Starts() && p.ErrorText() != "" {
			failed++
		}
	}
	switch {
	case failed > 0:
		msg += fmt.Sprintf("; %d enabled plugin(s) failed to load (see above), it may be one of theirs", failed)
	case len(h.Registry.Tools().List()) == 0:
		msg += "; no tools are available (enable a plugin with: hermes plugins enable <name>)"
	default:
		msg += "; see: hermes tools list"
	}
	return app.Failf("Error: %s", msg)
}

// parseToolArgs decodes --args: exactly one JSON object, nothing after it but
// spaces (a decoder alone would stop after the first value and drop the rest).
// Errors say where the text went wrong.
func parseToolArgs(text string) (map[string]any, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			return nil, fmt.Errorf("invalid JSON at offset %d: %w (got %q)", se.Offset, err, text)
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return nil, fmt.Errorf("the JSON ends early at offset %d (got %q)", len(text), text)
		}
		return nil, fmt.Errorf("invalid JSON: %w (got %q)", err, text)
	}
	end := dec.InputOffset()
	if rest := strings.TrimLeft(text[end:], " \t\r\n"); rest != "" {
		return nil, fmt.Errorf("unexpected data after the JSON object at offset %d: %q", int64(len(text)-len(rest)), truncate(rest, 40))
	}
	args, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("got %s instead", jsonx.KindOf(v))
	}
	return jsonx.ExactArgs(args).(map[string]any), nil
}
