package cli

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/hermes-go/hermes/examples"
	"github.com/hermes-go/hermes/internal/app"
	"github.com/hermes-go/hermes/internal/config"
)

type demoOptions struct {
	// ForHomeDir is the Factory of another HERMES_HOME, the demo's own.
	ForHomeDir func(dir string) *app.Factory

	Home string // --home: the directory to use and keep; "" for a temporary one
}

func newCmdDemo(f *app.Factory, runF func(*demoOptions) error) *cobra.Command {
	opts := &demoOptions{ForHomeDir: f.ForHomeDir}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Install the bundled hello-world plugin into a scratch HERMES_HOME and call its tool (no network)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return demoRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Home, "home", "", "use (and keep) this directory as HERMES_HOME instead of a temporary one")
	return cmd
}

func demoRun(ctx context.Context, opts *demoOptions) error {
	dir := opts.Home
	if dir == "" {
		tmp, err := os.MkdirTemp("", "hermes-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	f := opts.ForHomeDir(abs)
	defer f.Close()
	h, err := f.Home()
	if err != nil {
		return err
	}
	w := f.IO.Out
	fmt.Fprintf(w, "HERMES_HOME=%s\n", abs)

	target := filepath.Join(h.PluginsDir(), "hello-world")
	err = fs.WalkDir(examples.HelloWorld, examples.HelloWorldDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := examples.HelloWorld.ReadFile(p)
		if err != nil {
			return err
		}
		dst := filepath.Join(target, path.Base(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		return fmt.Errorf("install example plugin: %w", err)
	}
	fmt.Fprintf(w, "✓ Installed the example plugin hello-world into %s\n", target)
	err = config.Store{Path: h.ConfigPath()}.Update(ctx, func(d *config.Doc) error {
		_, err := d.ListAppend("plugins.enabled", "hello-world")
		return err
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "✓ Plugin hello-world enabled.")
	fmt.Fprintln(w, `$ hermes tools call hello_world --args '{"name":"Ada"}'`)
	return toolsCallRun(ctx, &toolsCallOptions{IO: f.IO, WithHost: f.WithHost,
		Name: "hello_world", Args: map[string]any{"name": "Ada"}})
}
