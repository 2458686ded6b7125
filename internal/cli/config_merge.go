package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/hermes-go/hermes/internal/app"
	"github.com/hermes-go/hermes/internal/config"
)

type configMergeOptions struct {
	IO    *app.IOStreams
	Store func() (config.Store, error)

	From string // a JSON or YAML file whose top level is a mapping
}

// newCmdConfigMerge lays a file of settings over config.yaml. The NixOS module
// runs it on every activation with the settings it rendered as JSON, so a
// declarative deploy never discards what the user added by hand.
func newCmdConfigMerge(f *app.Factory, runF func(*configMergeOptions) error) *cobra.Command {
	opts := &configMergeOptions{IO: f.IO, Store: f.Store}
	cmd := &cobra.Command{
		Use:   "merge --from FILE",
		Short: "Deep-merge the settings in FILE (JSON or YAML) into config.yaml; FILE's values win, comments and other keys stay",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.From == "" {
				return app.FlagErrorf("--from FILE is required: the JSON or YAML file of settings to merge")
			}
			if runF != nil {
				return runF(opts)
			}
			return configMergeRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.From, "from", "", "the settings file to merge (JSON, as the NixOS module writes it, or YAML)")
	return cmd
}

func configMergeRun(ctx context.Context, opts *configMergeOptions) error {
	store, err := opts.Store()
	if err != nil {
		return err
	}
	over, err := loadSettingsFile(opts.From)
	if err != nil {
		return err
	}
	var changed, msgs []string
	err = config.Store{Path: store.Path}.Update(ctx, func(d *config.Doc) error {
		var err error
		if changed, err = d.Merge(over); err != nil {
			return err
		}
		// As for config set: the merge and the migration are one write.
		msgs, err = config.Migrate(d, store.PluginsDir)
		return err
	})
	if err != nil {
		return err
	}
	for _, m := range msgs {
		fmt.Fprintln(opts.IO.Err, safeText(m))
	}
	if len(changed) == 0 {
		sayf(opts.IO.Out, "✓ %s already has every setting in %s\n", store.Path, opts.From)
		return nil
	}
	sayf(opts.IO.Out, "✓ Merged %d setting(s) from %s into %s\n", len(changed), opts.From, store.Path)
	for _, k := range changed {
		sayf(opts.IO.Out, "  %s\n", k)
	}
	return nil
}

// loadSettingsFile reads FILE through the config parser (JSON is YAML), so the
// same size and nesting caps apply as to config.yaml itself.
func loadSettingsFile(path string) (map[string]any, error) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, app.Failf("settings file %s does not exist: pass the file to merge with --from", path)
	case err != nil:
		return nil, fmt.Errorf("settings file: %w", err)
	case fi.IsDir():
		return nil, app.Failf("settings file %s is a directory: pass a JSON or YAML file with --from", path)
	}
	doc, err := config.Store{Path: path}.Load()
	if err != nil {
		return nil, err
	}
	return doc.Map(), nil
}
