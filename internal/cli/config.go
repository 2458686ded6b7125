package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/spf13/cobra"

	"github.com/hermes-go/hermes/internal/config"
)

func newConfigCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Read and edit config.yaml (comments and layout are kept)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	get := &cobra.Command{
		Use:         "get KEY",
		Short:       "Print the value at a dotted KEY (e.g. plugins.enabled)",
		Args:        cobra.ExactArgs(1),
		Annotations: instant(),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := app.Home()
			if err != nil {
				return err
			}
			doc, err := config.Store{Path: h.ConfigPath()}.Load()
			if err != nil {
				return err
			}
			v, ok := doc.Get(args[0])
			if !ok {
				return failf("%s is not set in %s", args[0], h.ConfigPath())
			}
			return printValue(app, v)
		},
	}
	set := &cobra.Command{
		Use:   "set KEY VALUE",
		Short: "Set the value at a dotted KEY (VALUE is read as YAML: true, 30, [a, b], text)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := app.Home()
			if err != nil {
				return err
			}
			if err := app.migrate(cmd.Context()); err != nil {
				return err
			}
			value := config.ParseValue(args[1])
			err = config.Store{Path: h.ConfigPath()}.Update(cmd.Context(), func(d *config.Doc) error {
				return d.Set(args[0], value)
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(app.IO.Out, "✓ Set %s = %s in %s\n", args[0], strings.TrimSpace(args[1]), h.ConfigPath())
			return nil
		},
	}
	path := &cobra.Command{
		Use:         "path",
		Short:       "Print the path of config.yaml",
		Args:        cobra.NoArgs,
		Annotations: instant(),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := app.Home()
			if err != nil {
				return err
			}
			fmt.Fprintln(app.IO.Out, h.ConfigPath())
			return nil
		},
	}
	cmd.AddCommand(get, set, path)
	return cmd
}

func printValue(app *App, v any) error {
	switch x := v.(type) {
	case nil:
		fmt.Fprintln(app.IO.Out, "null")
	case string:
		fmt.Fprintln(app.IO.Out, x)
	case map[string]any, []any:
		// A list of its own starts at column 0 ("- a"); lists inside a mapping are
		// indented under their key, as in config.yaml.
		_, isList := x.([]any)
		b, err := yaml.MarshalWithOptions(x, yaml.Indent(2), yaml.IndentSequence(!isList))
		if err != nil {
			return err
		}
		fmt.Fprint(app.IO.Out, string(b))
	default:
		fmt.Fprintln(app.IO.Out, x)
	}
	return nil
}

// migrate brings an existing config.yaml up to the current schema (v21: plugins are
// opt-in; existing user plugins are grandfathered into plugins.enabled). A missing
// file is a fresh install and is left alone.
func (a *App) migrate(ctx context.Context) error {
	a.configDoc = nil
	h, err := a.Home()
	if err != nil {
		return err
	}
	if _, err := os.Stat(h.ConfigPath()); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	store := config.Store{Path: h.ConfigPath()}
	doc, err := store.Load()
	if err != nil {
		return err
	}
	if v, ok := doc.Get("_config_version"); ok {
		if n, ok := toInt(v); ok && n >= config.LatestVersion {
			a.configDoc = doc // up to date: the manager reuses this parse
			return nil
		}
	}
	var msgs []string
	err = store.Update(ctx, func(d *config.Doc) error {
		var err error
		msgs, err = config.Migrate(d, h.PluginsDir())
		return err
	})
	if err != nil {
		return err
	}
	for _, m := range msgs {
		fmt.Fprintln(a.IO.Err, m)
	}
	return nil
}

func toInt(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, true
	case int64:
		return int(x), true
	case uint64:
		return int(x), true
	case float64:
		return int(x), true
	}
	return 0, false
}
