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

func newToolsCmd(f *app.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "List and call the tools the model can use (built-in and from enabled plugins)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newToolsListCmd(f), newToolsCallCmd(f))
	return cmd
}

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

func newToolsListCmd(f *app.Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List every available tool",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.WithHost(cmd.Context(), func(m *app.Host) error {
				rows := toolRows(cmd.Context(), m.Registry.Tools().List())
				if asJSON {
					return writeJSON(f.IO.Out, rows)
				}
				if len(rows) == 0 {
					fmt.Fprintln(f.IO.Out, "No tools available. Enable a plugin with: hermes plugins enable <name>")
					return nil
				}
				t := &table{color: f.Color()}
				t.header("Name", "Toolset", "Source", "Description")
				for _, r := range rows {
					desc := r.Description
					if !r.Available {
						desc = "(unavailable: " + r.Unavailable + ") " + desc
					}
					t.row(r.Name, r.Toolset, r.Source, truncate(desc, 70))
				}
				t.write(f.IO.Out)
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "machine-readable output")
	return cmd
}

func newToolsCallCmd(f *app.Factory) *cobra.Command {
	var argsJSON string
	cmd := &cobra.Command{
		Use:     "call NAME",
		Short:   "Call one tool through the full pipeline (hooks, approval, validation) and print its result",
		Example: `  hermes tools call hello_world --args '{"name":"Ada"}'`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return toolsCall(cmd.Context(), f, args[0], argsJSON)
		},
	}
	cmd.Flags().StringVar(&argsJSON, "args", "{}", "tool arguments as a JSON object")
	return cmd
}

func toolsCall(ctx context.Context, f *app.Factory, name, argsJSON string) error {
	args, err := parseToolArgs(argsJSON)
	if err != nil {
		return &app.ExitError{Code: app.ExitUsage, Message: fmt.Sprintf("Error: --args must be a JSON object, e.g. --args '{\"name\":\"Ada\"}': %v", err)}
	}
	return f.WithHost(ctx, func(m *app.Host) error {
		if _, ok := m.Registry.Tools().Get(name); !ok {
			msg := fmt.Sprintf("unknown tool %q", name)
			failed := 0
			for _, p := range m.Plugins() {
				if p.Decision.Starts() && p.ErrorText() != "" {
					failed++
				}
			}
			switch {
			case failed > 0:
				msg += fmt.Sprintf("; %d enabled plugin(s) failed to load (see above), it may be one of theirs", failed)
			case len(m.Registry.Tools().List()) == 0:
				msg += "; no tools are available (enable a plugin with: hermes plugins enable <name>)"
			default:
				msg += "; see: hermes tools list"
			}
			return app.Failf("Error: %s", msg)
		}
		out := m.Pipeline().Run(ctx, tools.Call{Name: name, Args: args, TaskID: "cli"})
		fmt.Fprintln(f.IO.Out, out.Result)
		if ctx.Err() != nil {
			return app.SilentExit(app.ExitInterrupted) // Ctrl-C: 130, as a plugin CLI command exits
		}
		if out.Status != tools.StatusOK {
			return app.SilentExit(app.ExitFail)
		}
		return nil
	})
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
