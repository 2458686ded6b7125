package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hermes-go/hermes/internal/app"
	"github.com/hermes-go/hermes/internal/plugins/manifest"
	"github.com/hermes-go/hermes/internal/scan"
)

type scanOptions struct {
	IO  *app.IOStreams
	Cwd string // what a relative PATH is relative to
	// Python names the interpreter of the Python analysis (the plugins' one).
	Python func(context.Context) string

	Path    string
	JSON    bool
	Explain bool
}

// `hermes plugins scan PATH [--json|--explain]`: the scan install runs before it
// publishes a plugin, for authors to run before they publish. Exit 0 safe, 1
// caution/dangerous.
func newCmdPluginsScan(f *app.Factory, runF func(*scanOptions) error) *cobra.Command {
	opts := &scanOptions{IO: f.IO, Cwd: f.Cwd, Python: f.ScanPython}
	cmd := &cobra.Command{
		Use:   "scan PATH",
		Short: "Security-scan a plugin directory the way install does (exit 1 unless safe)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path = args[0]
			if opts.JSON && opts.Explain {
				return app.Failf("--explain and --json cannot be combined: --json already carries each finding's chain.\nUse one of them.")
			}
			if runF != nil {
				return runF(opts)
			}
			return pluginsScanRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "machine-readable output")
	cmd.Flags().BoolVar(&opts.Explain, "explain", false, "walk each critical and high finding step by step, with what to do")
	return cmd
}

func pluginsScanRun(ctx context.Context, opts *scanOptions) error {
	path := opts.Path
	dir := path
	if !filepath.IsAbs(dir) && opts.Cwd != "" {
		dir = filepath.Join(opts.Cwd, dir)
	}
	st, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return app.Failf("Cannot scan %s: no such file or directory.\nGive the path of a plugin directory (the one holding plugin.yaml).", path)
		}
		return app.Failf("Cannot scan %s: %v", path, err)
	}
	so := scan.Options{Source: "local"}
	if opts.Python != nil {
		so.Python = opts.Python(ctx)
	}
	if st.IsDir() {
		// The plugin's own API keys (requires_env) are normal reads; a missing or
		// broken manifest is not the scanner's business.
		if m, _, err := manifest.LoadDir(dir); err == nil {
			for _, e := range m.RequiresEnv {
				so.RequiresEnv = append(so.RequiresEnv, e.Name)
			}
		}
	}
	res, err := scan.Scan(ctx, dir, so)
	if err != nil {
		return app.Failf("Cannot scan %s: %v", path, err)
	}
	if opts.JSON {
		if err := writeJSON(opts.IO.Out, res); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(opts.IO.Out, safeText(res.Report())) // it quotes the files scanned
		if opts.Explain {
			writeExplanation(opts.IO.Out, res)
		}
	}
	if res.Verdict != scan.VerdictSafe {
		return app.SilentExit(app.ExitFail)
	}
	return nil
}

// writeExplanation walks each critical and high finding: its steps numbered with
// file:line, the rule id and what to do. Every field comes from the plugin (names,
// matched text, the analysis's step texts) and is made safe one line at a time, so
// a file name cannot forge a step.
func writeExplanation(w io.Writer, res *scan.Result) {
	fs := res.Explained()
	fmt.Fprintln(w)
	if len(fs) == 0 {
		fmt.Fprintln(w, "Explanation: no critical or high findings.")
		return
	}
	fmt.Fprintf(w, "Explanation (%d critical or high findings):\n", len(fs))
	for i, f := range fs {
		fmt.Fprintln(w)
		sayf(w, "%d. %s %s (%s) at %s\n", i+1, strings.ToUpper(f.Severity), f.PatternID, f.Category, scan.Step{File: f.File, Line: f.Line}.Where())
		for j, st := range f.Steps() {
			sayf(w, "   step %d  %s  %s\n", j+1, st.Where(), st.What)
		}
		sayf(w, "   what to do: %s\n", scan.Advice(f))
	}
}
