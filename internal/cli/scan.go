package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/hermes-go/hermes/internal/app"
	"github.com/hermes-go/hermes/internal/plugins/manifest"
	"github.com/hermes-go/hermes/internal/scan"
)

// `hermes plugins scan PATH [--json]`: the scan install runs before it publishes a
// plugin, for authors to run before they publish. Exit 0 safe, 1 caution/dangerous.
func newPluginsScanCmd(f *app.Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "scan PATH",
		Short: "Security-scan a plugin directory the way install does (exit 1 unless safe)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return pluginsScan(cmd, f, args[0], asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "machine-readable output")
	return cmd
}

func pluginsScan(cmd *cobra.Command, f *app.Factory, path string, asJSON bool) error {
	dir := path
	if !filepath.IsAbs(dir) && f.Cwd != "" {
		dir = filepath.Join(f.Cwd, dir)
	}
	st, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return app.Failf("Cannot scan %s: no such file or directory.\nGive the path of a plugin directory (the one holding plugin.yaml).", path)
		}
		return app.Failf("Cannot scan %s: %v", path, err)
	}
	opts := scan.Options{Source: "local"}
	if st.IsDir() {
		// The plugin's own API keys (requires_env) are normal reads; a missing or
		// broken manifest is not the scanner's business.
		if m, _, err := manifest.LoadDir(dir); err == nil {
			for _, e := range m.RequiresEnv {
				opts.RequiresEnv = append(opts.RequiresEnv, e.Name)
			}
		}
	}
	res, err := scan.Scan(cmd.Context(), dir, opts)
	if err != nil {
		return app.Failf("Cannot scan %s: %v", path, err)
	}
	if asJSON {
		if err := writeJSON(f.IO.Out, res); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(f.IO.Out, res.Report())
	}
	if res.Verdict != scan.VerdictSafe {
		return app.SilentExit(app.ExitFail)
	}
	return nil
}
