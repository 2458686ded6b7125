package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/spf13/cobra"

	"github.com/hermes-go/hermes/internal/app"
	"github.com/hermes-go/hermes/internal/config"
)

func newCmdConfig(f *app.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Read and edit config.yaml (comments and layout are kept)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newCmdConfigGet(f, nil), newCmdConfigSet(f, nil), newCmdConfigPath(f, nil), newCmdConfigMerge(f, nil))
	return cmd
}

type configGetOptions struct {
	IO *app.IOStreams
	// Store is config.yaml of the command's HERMES_HOME.
	Store      func() (config.Store, error)
	WarnConfig func(doc *config.Doc)

	Key string
}

func newCmdConfigGet(f *app.Factory, runF func(*configGetOptions) error) *cobra.Command {
	opts := &configGetOptions{IO: f.IO, Store: f.Store, WarnConfig: f.WarnConfig}
	return &cobra.Command{
		Use:         "get KEY",
		Short:       "Print the value at a dotted KEY (e.g. plugins.enabled)",
		Args:        cobra.ExactArgs(1),
		Annotations: instant(),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Key = args[0]
			if runF != nil {
				return runF(opts)
			}
			return configGetRun(opts)
		},
	}
}

func configGetRun(opts *configGetOptions) error {
	store, err := opts.Store()
	if err != nil {
		return err
	}
	if _, err := config.SplitPath(opts.Key); err != nil {
		return app.Failf("%v", err)
	}
	doc, err := config.Store{Path: store.Path}.Load()
	if err != nil {
		return err
	}
	opts.WarnConfig(doc)
	v, ok := doc.GetOrdered(opts.Key)
	if !ok {
		return app.Failf("%s is not set in %s", opts.Key, store.Path)
	}
	return printValue(opts.IO.Out, v)
}

type configSetOptions struct {
	IO    *app.IOStreams
	Store func() (config.Store, error)

	Key   string
	Value string // as typed; read as YAML by the run
}

func newCmdConfigSet(f *app.Factory, runF func(*configSetOptions) error) *cobra.Command {
	opts := &configSetOptions{IO: f.IO, Store: f.Store}
	cmd := &cobra.Command{
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
			opts.Key, opts.Value = args[0], args[1]
			if runF != nil {
				return runF(opts)
			}
			return configSetRun(cmd.Context(), opts)
		},
	}
	// Nothing after KEY is a flag, so a VALUE such as -1 or -x reaches ParseValue.
	cmd.Flags().SetInterspersed(false)
	return cmd
}

func configSetRun(ctx context.Context, opts *configSetOptions) error {
	store, err := opts.Store()
	if err != nil {
		return err
	}
	value := config.ParseValue(opts.Value)
	// The edit and the config migration are one write: an edit saved over an
	// unmigrated file would lose the plugins it is about to grandfather. Setting
	// first lets `config set plugins {}` repair a section the migration refuses
	// (hence a Store without PluginsDir, which would migrate before the edit).
	var msgs []string
	err = config.Store{Path: store.Path}.Update(ctx, func(d *config.Doc) error {
		if err := d.Set(opts.Key, value); err != nil {
			return err
		}
		var err error
		msgs, err = config.Migrate(d, store.PluginsDir)
		return err
	})
	if err != nil {
		return err
	}
	for _, m := range msgs {
		fmt.Fprintln(opts.IO.Err, safeText(m))
	}
	sayf(opts.IO.Out, "✓ Set %s = %s in %s\n", opts.Key, strings.TrimSpace(opts.Value), store.Path)
	return nil
}

type configPathOptions struct {
	IO    *app.IOStreams
	Store func() (config.Store, error)
}

func newCmdConfigPath(f *app.Factory, runF func(*configPathOptions) error) *cobra.Command {
	opts := &configPathOptions{IO: f.IO, Store: f.Store}
	return &cobra.Command{
		Use:         "path",
		Short:       "Print the path of config.yaml",
		Args:        cobra.NoArgs,
		Annotations: instant(),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return configPathRun(opts)
		},
	}
}

func configPathRun(opts *configPathOptions) error {
	store, err := opts.Store()
	if err != nil {
		return err
	}
	fmt.Fprintln(opts.IO.Out, store.Path)
	return nil
}

// setArgs drops a "--" between KEY and VALUE: with flag parsing stopped at KEY (so
// VALUE may be -1), the habitual `config set KEY -- -1` would otherwise pass it on.
func setArgs(args []string) []string {
	if len(args) == 3 && args[1] == "--" {
		return []string{args[0], args[2]}
	}
	return args
}

// printValue prints a config value; plugins write config too (ctx.set_config),
// so it is shown escaped.
func printValue(w io.Writer, v any) error {
	switch x := v.(type) {
	case nil:
		fmt.Fprintln(w, "null")
	case string:
		fmt.Fprintln(w, safeText(x))
	case yaml.MapSlice, []any:
		// A list of its own starts at column 0 ("- a"); lists inside a mapping are
		// indented under their key, as in config.yaml.
		_, isList := x.([]any)
		b, err := yaml.MarshalWithOptions(x, yaml.Indent(2), yaml.IndentSequence(!isList))
		if err != nil {
			return err
		}
		fmt.Fprint(w, safeText(string(b)))
	default:
		fmt.Fprintln(w, safeText(fmt.Sprint(x)))
	}
	return nil
}
