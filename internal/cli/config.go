package cli

import (
	"fmt"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/spf13/cobra"

	"github.com/hermes-go/hermes/internal/app"
	"github.com/hermes-go/hermes/internal/config"
)

func newConfigCmd(f *app.Factory) *cobra.Command {
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
			h, err := f.Home()
			if err != nil {
				return err
			}
			if _, err := config.SplitPath(args[0]); err != nil {
				return app.Failf("%v", err)
			}
			doc, err := config.Store{Path: h.ConfigPath()}.Load()
			if err != nil {
				return err
			}
			f.WarnConfig(doc)
			v, ok := doc.GetOrdered(args[0])
			if !ok {
				return app.Failf("%s is not set in %s", args[0], h.ConfigPath())
			}
			return printValue(f, v)
		},
	}
	set := &cobra.Command{
		Use:   "set KEY VALUE",
		Short: "Set the value at a dotted KEY (VALUE is read as YAML: true, 30, [a, b], text)",
		Args: func(cmd *cobra.Command, args []string) error {
			args = setArgs(args)
			if len(args) > 2 && strings.HasPrefix(args[2], "-") {
				// Nothing after KEY is parsed as a flag (so VALUE may be -1).
				return argsError{fmt.Errorf("%q after VALUE is not read as a flag here: put flags before KEY (hermes config set [flags] KEY VALUE), or quote a VALUE that has spaces", args[2])}
			}
			return cobra.ExactArgs(2)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			args = setArgs(args)
			h, err := f.Home()
			if err != nil {
				return err
			}
			value := config.ParseValue(args[1])
			// The edit and the config migration are one write: an edit saved over an
			// unmigrated file would lose the plugins it is about to grandfather. Setting
			// first lets `config set plugins {}` repair a section the migration refuses.
			var msgs []string
			err = config.Store{Path: h.ConfigPath()}.Update(cmd.Context(), func(d *config.Doc) error {
				if err := d.Set(args[0], value); err != nil {
					return err
				}
				var err error
				msgs, err = config.Migrate(d, h.PluginsDir())
				return err
			})
			if err != nil {
				return err
			}
			for _, m := range msgs {
				fmt.Fprintln(f.IO.Err, m)
			}
			fmt.Fprintf(f.IO.Out, "✓ Set %s = %s in %s\n", args[0], strings.TrimSpace(args[1]), h.ConfigPath())
			return nil
		},
	}
	// Nothing after KEY is a flag, so a VALUE such as -1 or -x reaches ParseValue.
	set.Flags().SetInterspersed(false)
	path := &cobra.Command{
		Use:         "path",
		Short:       "Print the path of config.yaml",
		Args:        cobra.NoArgs,
		Annotations: instant(),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := f.Home()
			if err != nil {
				return err
			}
			fmt.Fprintln(f.IO.Out, h.ConfigPath())
			return nil
		},
	}
	cmd.AddCommand(get, set, path)
	return cmd
}

// setArgs drops a "--" between KEY and VALUE: with flag parsing stopped at KEY (so
// VALUE may be -1), the habitual `config set KEY -- -1` would otherwise pass it on.
func setArgs(args []string) []string {
	if len(args) == 3 && args[1] == "--" {
		return []string{args[0], args[2]}
	}
	return args
}

func printValue(f *app.Factory, v any) error {
	switch x := v.(type) {
	case nil:
		fmt.Fprintln(f.IO.Out, "null")
	case string:
		fmt.Fprintln(f.IO.Out, x)
	case yaml.MapSlice, []any:
		// A list of its own starts at column 0 ("- a"); lists inside a mapping are
		// indented under their key, as in config.yaml.
		_, isList := x.([]any)
		b, err := yaml.MarshalWithOptions(x, yaml.Indent(2), yaml.IndentSequence(!isList))
		if err != nil {
			return err
		}
		fmt.Fprint(f.IO.Out, string(b))
	default:
		fmt.Fprintln(f.IO.Out, x)
	}
	return nil
}
