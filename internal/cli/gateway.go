package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/hermes-go/hermes/internal/app"
	"github.com/hermes-go/hermes/internal/termsafe"
)

func newCmdGateway(f *app.Factory) *cobra.Command {
	run := newCmdGatewayRun(f, nil)
	cmd := &cobra.Command{
		Use:   "gateway",
		Short: "Talk to the agent from Telegram: run the messaging gateway, or install it as a service",
		Long: "hermes gateway (or hermes gateway run) serves every platform enabled by its token in $HERMES_HOME/.env\n" +
			"(TELEGRAM_BOT_TOKEN) with the same model, tools, plugins and hooks as hermes chat.\n" +
			"Logs go to $HERMES_HOME/logs/gateway.log. Exit codes: 75 asks for a restart, 78 is a configuration it cannot run.",
		Args: cobra.NoArgs,
		RunE: run.RunE,
	}
	cmd.Flags().AddFlagSet(run.Flags())
	cmd.AddCommand(run, newCmdGatewayStatus(f, nil), newCmdGatewayInstall(f, nil), newCmdGatewayMigrate(f, nil))
	for _, verb := range []string{"start", "stop", "restart"} {
		cmd.AddCommand(newCmdGatewayControl(f, verb, nil))
	}
	return cmd
}

type gatewayRunOptions struct {
	F       *app.Factory
	Replace bool
	// Drain overrides gateway.drain_timeout.
	Drain time.Duration
}

func newCmdGatewayRun(f *app.Factory, runF func(*gatewayRunOptions) error) *cobra.Command {
	opts := &gatewayRunOptions{F: f}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the gateway in the foreground (SIGTERM drains: running turns finish first)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return gatewayRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Replace, "replace", false, "stop a gateway already running for this HERMES_HOME and take over")
	cmd.Flags().DurationVar(&opts.Drain, "drain-timeout", 0, "how long running turns may take to finish at a stop (default gateway.drain_timeout, 60s)")
	return cmd
}

func gatewayRun(ctx context.Context, opts *gatewayRunOptions) error {
	f := opts.F
	release, err := f.AcquireGateway(ctx, opts.Replace, 90*time.Second)
	if err != nil {
		return err
	}
	defer release()
	g, err := f.NewGateway(ctx, app.GatewayOptions{DrainTimeout: opts.Drain})
	if err != nil {
		return err
	}
	defer g.Close()
	return g.Run(ctx)
}

type gatewayStatusOptions struct {
	F    *app.Factory
	JSON bool
}

func newCmdGatewayStatus(f *app.Factory, runF func(*gatewayStatusOptions) error) *cobra.Command {
	opts := &gatewayStatusOptions{F: f}
	cmd := &cobra.Command{
		Use:         "status",
		Short:       "Say whether a gateway runs here and, on a PostgreSQL store, the cluster's processes and queue (exit 1 when none runs)",
		Args:        cobra.NoArgs,
		Annotations: instant(),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return gatewayStatus(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print {running, pid, unit, unit_installed} as JSON")
	return cmd
}

func gatewayStatus(ctx context.Context, opts *gatewayStatusOptions) error {
	f := opts.F
	cst, err := f.ClusterStatus(ctx)
	if err != nil {
		return app.Failf("Error: reading the cluster's status from gateway.store: %v", err)
	}
	pid, err := f.GatewayPID()
	if err != nil {
		return app.Failf("Error: %v", err)
	}
	svc, err := f.GatewayService(false)
	if err != nil {
		return app.Failf("Error: %v", err)
	}
	unitPath := svc.Unit.FilePath(svc.ConfigDir)
	_, statErr := os.Stat(unitPath)
	installed := statErr == nil
	if opts.JSON {
		out := map[string]any{"running": pid > 0, "pid": pid, "unit": svc.Unit.Name(), "unit_installed": installed}
		if cst != nil {
			out["cluster"] = clusterJSON(cst)
		}
		if err := writeJSON(f.IO.Out, out); err != nil {
			return err
		}
	} else {
		if pid > 0 {
			fmt.Fprintf(f.IO.Out, "Gateway: running (pid %d)\n", pid)
		} else {
			fmt.Fprintln(f.IO.Out, "Gateway: not running (start it with: hermes gateway run)")
		}
		if installed {
			fmt.Fprintf(f.IO.Out, "Service: %s (%s)\n", svc.Unit.Name(), termsafe.Line(unitPath))
		} else {
			fmt.Fprintln(f.IO.Out, "Service: not installed (hermes gateway install)")
		}
		if cst != nil {
			printCluster(f.IO.Out, cst)
		}
	}
	if cst != nil {
		for _, m := range cst.Members {
			if m.Alive {
				return nil // a gateway of the cluster runs, here or elsewhere
			}
		}
	}
	if pid == 0 {
		return app.SilentExit(app.ExitFail)
	}
	return nil
}

type gatewayInstallOptions struct {
	F      *app.Factory
	System bool
	Force  bool
	Print  bool
}

func newCmdGatewayInstall(f *app.Factory, runF func(*gatewayInstallOptions) error) *cobra.Command {
	opts := &gatewayInstallOptions{F: f}
	cmd := &cobra.Command{
		Use:   "install",
		Short: "Install the gateway as a systemd service (a user unit; --system for a system one)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return gatewayInstall(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.System, "system", false, "a system unit in /etc/systemd/system (needs root), running as you")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "replace a unit file that differs")
	cmd.Flags().BoolVar(&opts.Print, "print", false, "print the unit instead of installing it")
	return cmd
}

func gatewayInstall(ctx context.Context, opts *gatewayInstallOptions) error {
	f := opts.F
	svc, err := f.GatewayService(opts.System)
	if err != nil {
		return app.Failf("Error: %v", err)
	}
	if opts.Print {
		text, err := svc.Unit.Text()
		if err != nil {
			return app.Failf("Error: %v", err)
		}
		fmt.Fprint(f.IO.Out, text)
		return nil
	}
	path, changed, err := svc.Install(ctx, opts.Force)
	if err != nil {
		return err
	}
	if changed {
		fmt.Fprintf(f.IO.Out, "Wrote %s\n", termsafe.Line(path))
	} else {
		fmt.Fprintf(f.IO.Out, "%s is up to date\n", termsafe.Line(path))
	}
	flag := ""
	if opts.System {
		flag = " --system"
	}
	if svc.Systemctl.Path == "" {
		fmt.Fprintf(f.IO.Out, "systemctl is not here: enable the unit where systemd runs, or run hermes gateway run in the foreground.\n")
		return nil
	}
	fmt.Fprintf(f.IO.Out, "Enabled %s. Start it with: hermes gateway start%s\n", svc.Unit.Name(), flag)
	return nil
}

type gatewayControlOptions struct {
	F      *app.Factory
	Verb   string
	System bool
}

func newCmdGatewayControl(f *app.Factory, verb string, runF func(*gatewayControlOptions) error) *cobra.Command {
	opts := &gatewayControlOptions{F: f, Verb: verb}
	cmd := &cobra.Command{
		Use:   verb,
		Short: fmt.Sprintf("systemctl %s the installed gateway service", verb),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return gatewayControl(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.System, "system", false, "the system unit rather than the user's")
	return cmd
}

func gatewayControl(ctx context.Context, opts *gatewayControlOptions) error {
	svc, err := opts.F.GatewayService(opts.System)
	if err != nil {
		return app.Failf("Error: %v", err)
	}
	if _, err := os.Stat(svc.Unit.FilePath(svc.ConfigDir)); errors.Is(err, os.ErrNotExist) {
		return app.Failf("Error: the gateway service is not installed (%s): run hermes gateway install first", svc.Unit.FilePath(svc.ConfigDir))
	}
	out, err := svc.Control(ctx, opts.Verb)
	if err != nil {
		return err
	}
	if out != "" {
		fmt.Fprintln(opts.F.IO.Out, termsafe.Text(out))
	}
	fmt.Fprintf(opts.F.IO.Out, "%s: %s done\n", svc.Unit.Name(), opts.Verb)
	return nil
}
