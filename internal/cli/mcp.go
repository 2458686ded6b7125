package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/hermes-go/hermes/internal/app"
	"github.com/hermes-go/hermes/internal/mcp"
)

// newCmdMCP is `hermes mcp`; each verb has its own constructor so others
// (add, remove, serve) join with one line in AddCommand.
func newCmdMCP(f *app.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "The MCP servers whose tools the model can use (mcp_servers in config.yaml)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newCmdMCPList(f, nil), newCmdMCPTest(f, nil), newCmdMCPTools(f, nil),
		newMCPAddCmd(f, nil), newMCPRemoveCmd(f, nil), newMCPServeCmd(f, nil))
	return cmd
}

// withMCP runs fn on the command's MCP client; its servers are stopped after.
func withMCP(ctx context.Context, f *app.Factory, fn func(m *mcp.Manager) error) error {
	h, err := f.Host(ctx)
	if err != nil {
		return err
	}
	defer h.Close()
	m, err := h.MCP()
	if err != nil {
		return err
	}
	return fn(m)
}

type mcpListOptions struct {
	IO    *app.IOStreams
	With  func(ctx context.Context, fn func(m *mcp.Manager) error) error
	Color func() bool
	JSON  bool
}

func newCmdMCPList(f *app.Factory, runF func(*mcpListOptions) error) *cobra.Command {
	opts := &mcpListOptions{IO: f.IO, Color: f.Color,
		With: func(ctx context.Context, fn func(m *mcp.Manager) error) error { return withMCP(ctx, f, fn) }}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the configured MCP servers (without connecting: hermes mcp test NAME connects)",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return mcpListRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "machine-readable output")
	return cmd
}

func mcpListRun(ctx context.Context, opts *mcpListOptions) error {
	return opts.With(ctx, func(m *mcp.Manager) error {
		rows := m.Statuses()
		out := opts.IO.Out
		if opts.JSON {
			if rows == nil {
				rows = []mcp.Status{}
			}
			return writeJSON(out, rows)
		}
		if len(rows) == 0 {
			fmt.Fprintln(out, "No MCP servers configured. Add one under mcp_servers in config.yaml (or: hermes mcp add NAME -- COMMAND ARGS...)")
			return nil
		}
		t := &table{color: opts.Color()}
		t.header("Name", "Transport", "Enabled", "Trust", "State", "Tools")
		for _, r := range rows {
			tools := "?"
			if r.Tools >= 0 {
				tools = strconv.Itoa(r.Tools)
			}
			t.row(r.Name, r.Transport, strconv.FormatBool(r.Enabled), r.Trust, r.State, tools)
		}
		t.write(out)
		return nil
	})
}

type mcpTestOptions struct {
	IO   *app.IOStreams
	With func(ctx context.Context, fn func(m *mcp.Manager) error) error
	Now  func() time.Time
	Name string
	JSON bool
}

func newCmdMCPTest(f *app.Factory, runF func(*mcpTestOptions) error) *cobra.Command {
	opts := &mcpTestOptions{IO: f.IO, Now: f.Now,
		With: func(ctx context.Context, fn func(m *mcp.Manager) error) error { return withMCP(ctx, f, fn) }}
	cmd := &cobra.Command{
		Use:   "test NAME",
		Short: "Connect to an MCP server, list its tools and measure a round trip",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(opts)
			}
			return mcpTestRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "machine-readable output")
	return cmd
}

type mcpTestResult struct {
	Name      string  `json:"name"`
	OK        bool    `json:"ok"`
	ConnectMS float64 `json:"connect_ms"`
	Tools     int     `json:"tools"`
	PingMS    float64 `json:"round_trip_ms"`
	Error     string  `json:"error,omitempty"`
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func mcpTestRun(ctx context.Context, opts *mcpTestOptions) error {
	return opts.With(ctx, func(m *mcp.Manager) error {
		res := mcpTestResult{Name: opts.Name}
		start := opts.Now()
		_, list, err := m.Connect(ctx, opts.Name)
		res.ConnectMS = ms(opts.Now().Sub(start))
		if err == nil {
			var rtt time.Duration
			if rtt, err = m.Ping(ctx, opts.Name); err == nil {
				res.OK, res.Tools, res.PingMS = true, len(list), ms(rtt)
			}
		}
		if err != nil {
			res.Error = mcp.Redact(err.Error())
		}
		if opts.JSON {
			if werr := writeJSON(opts.IO.Out, res); werr != nil {
				return werr
			}
			if !res.OK {
				return app.SilentExit(1)
			}
			return nil
		}
		if !res.OK {
			return app.Failf("✗ %s", safeText(res.Error))
		}
		out := opts.IO.Out
		fmt.Fprintf(out, "✓ Connected (%.0f ms)\n", res.ConnectMS)
		fmt.Fprintf(out, "✓ Tools discovered: %d\n", res.Tools)
		fmt.Fprintf(out, "✓ Round trip: %.1f ms\n", res.PingMS)
		return nil
	})
}

type mcpToolsOptions struct {
	IO   *app.IOStreams
	With func(ctx context.Context, fn func(m *mcp.Manager) error) error
	Name string
}

func newCmdMCPTools(f *app.Factory, runF func(*mcpToolsOptions) error) *cobra.Command {
	opts := &mcpToolsOptions{IO: f.IO,
		With: func(ctx context.Context, fn func(m *mcp.Manager) error) error { return withMCP(ctx, f, fn) }}
	return &cobra.Command{
		Use:   "tools NAME",
		Short: "List an MCP server's tools with their input schemas",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(opts)
			}
			return mcpToolsRun(cmd.Context(), opts)
		},
	}
}

func mcpToolsRun(ctx context.Context, opts *mcpToolsOptions) error {
	return opts.With(ctx, func(m *mcp.Manager) error {
		_, list, err := m.Connect(ctx, opts.Name)
		if err != nil {
			return app.Failf("Error: %s", safeText(mcp.Redact(err.Error())))
		}
		out := opts.IO.Out
		for _, t := range list {
			name, _ := mcp.ToolName(opts.Name, t.Name)
			sayf(out, "%s (%s)\n", t.Name, name)
			if t.Description != "" {
				sayf(out, "  %s\n", firstLine(t.Description))
			}
			schema, _ := json.MarshalIndent(t.InputSchema, "  ", "  ")
			fmt.Fprintf(out, "  %s\n", safeText(string(schema)))
		}
		return nil
	})
}
