package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

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
			if _, err := config.SplitPath(args[0]); err != nil {
				return failf("%v", err)
			}
			doc, err := config.Store{Path: h.ConfigPath()}.Load()
			if err != nil {
				return err
			}
			app.warnConfig(doc)
			v, ok := doc.GetOrdered(args[0])
			if !ok {
				return failf("%s is not set in %s", args[0], h.ConfigPath())
			}
			return printValue(app, v)
		},
	}
	set := &cobra.Command{
		Use:   "set KEY VALUE",
		Short: "Set the value at a dotted KEY (VALUE is read as YAML: true, 30, [a, b], text)",
		Args: func(cmd *cobra.Command, args []string) error {
			args = setArgs(args)
			if len(args) > 2 && strings.HasPrefix(args[2], "-") {
				// Nothing after KEY is parsed as a flag (so VALUE may be -1).
				return fmt.Errorf("%q after VALUE is not read as a flag here: put flags before KEY (hermes config set [flags] KEY VALUE), or quote a VALUE that has spaces", args[2])
			}
			return cobra.ExactArgs(2)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			args = setArgs(args)
			h, err := app.Home()
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
				fmt.Fprintln(app.IO.Err, m)
			}
			fmt.Fprintf(app.IO.Out, "✓ Set %s = %s in %s\n", args[0], strings.TrimSpace(args[1]), h.ConfigPath())
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

// setArgs drops a "--" between KEY and VALUE: with flag parsing stopped at KEY (so
// VALUE may be -1), the habitual `config set KEY -- -1` would otherwise pass it on.
func setArgs(args []string) []string {
	if len(args) == 3 && args[1] == "--" {
		return []string{args[0], args[2]}
	}
	return args
}

func printValue(app *App, v any) error {
	switch x := v.(type) {
	case nil:
		fmt.Fprintln(app.IO.Out, "null")
	case string:
		fmt.Fprintln(app.IO.Out, x)
	case yaml.MapSlice, []any:
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

// migrateLockWait bounds how long a command waits for the config lock to save the
// migration; writers hold it for milliseconds, so a longer wait means something is
// stuck, and the command goes on with the migration applied in memory.
const migrateLockWait = 2 * time.Second

// migrate brings an existing config.yaml up to the current schema (v21: plugins are
// opt-in; existing user plugins are grandfathered into plugins.enabled). A missing
// file is a fresh install and is left alone.
//
// When the migrated file cannot be saved (a read-only HERMES_HOME, the lock held by
// something else) the command still runs: the migration is applied in memory, for
// this command only, and one warning says why it was not saved. Edits of a file that
// cannot be written fail anyway when they try to write.
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
	a.warnConfig(doc)
	if v, ok := doc.Get("_config_version"); ok {
		if n, ok := toInt(v); ok && n >= config.LatestVersion {
			a.configDoc = doc // up to date: the manager reuses this parse
			return nil
		}
	}
	if a.migrationUnsaved {
		// Saving already failed once in this command: no second wait, no second warning.
		if _, err := config.Migrate(doc, h.PluginsDir()); err != nil {
			return err
		}
		a.configDoc = doc
		return nil
	}
	var msgs []string
	var migErr error
	lockCtx, cancel := context.WithTimeout(ctx, migrateLockWait)
	defer cancel()
	err = store.Update(lockCtx, func(d *config.Doc) error {
		msgs, migErr = config.Migrate(d, h.PluginsDir())
		return migErr
	})
	var pe *config.ParseError
	switch {
	case err == nil:
		for _, m := range msgs {
			fmt.Fprintln(a.IO.Err, m)
		}
		return nil
	case errors.Is(migErr, config.ErrPluginsNotMapping):
		// Such a section enables nothing, as upstream reads it, and the manager warns
		// about it; only edits need the migration, and they report the error.
		a.configDoc = doc
		return nil
	case migErr != nil, ctx.Err() != nil, errors.As(err, &pe):
		return err
	}
	// The migration itself is fine; only saving it failed.
	msgs, merr := config.Migrate(doc, h.PluginsDir())
	if merr != nil {
		return merr
	}
	what := fmt.Sprintf("config version %d", config.LatestVersion)
	if len(msgs) > 0 {
		what += " (" + strings.TrimPrefix(msgs[0], "✓ ") + ")"
	}
	a.warn(fmt.Sprintf("could not save the update of %s to %s: %v; it applies to this command only, and hermes tries again next time", h.ConfigPath(), what, err))
	a.migrationUnsaved = true
	a.configDoc = doc
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

// warnConfig shows, once per command, what the user should fix in config.yaml
// though it reads (a key written twice).
func (a *App) warnConfig(doc *config.Doc) {
	if a.configWarned {
		return
	}
	a.configWarned = true
	for _, w := range doc.Warnings() {
		a.warn(w)
	}
}
