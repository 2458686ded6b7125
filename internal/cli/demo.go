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
	"github.com/hermes-go/hermes/internal/home"
)

func newDemoCmd(f *app.Factory) *cobra.Command {
	var keep string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Install the bundled hello-world plugin into a scratch HERMES_HOME and call its tool (no network)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDemo(cmd.Context(), f, keep)
		},
	}
	cmd.Flags().StringVar(&keep, "home", "", "use (and keep) this directory as HERMES_HOME instead of a temporary one")
	return cmd
}

func runDemo(ctx context.Context, f *app.Factory, dir string) error {
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
	h := home.Home{Dir: abs, Profile: "custom"}
	f = f.ForHome(h)
	defer f.Close()
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
	return toolsCall(ctx, f, "hello_world", `{"name":"Ada"}`)
}
