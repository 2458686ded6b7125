package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hermes-go/hermes/internal/app"
	"github.com/hermes-go/hermes/internal/termsafe"
)

type gatewayMigrateOptions struct {
	F    *app.Factory
	JSON bool
}

func newCmdGatewayMigrate(f *app.Factory, runF func(*gatewayMigrateOptions) error) *cobra.Command {
	opts := &gatewayMigrateOptions{F: f}
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Bring the session store's schema (gateway.store, or state.db) up to this hermes and print its version",
		Long: "hermes gateway migrate applies the session store's schema migrations, as every gateway does when it starts,\n" +
			"and prints the version: run it once before starting gateways of a new release on several machines.\n" +
			"The store is gateway.store's postgres:// URL (password: the URL's own, else HERMES_PG_PASSWORD or PGPASSWORD\n" +
			"from $HERMES_HOME/.env or the environment), or $HERMES_HOME/state.db when it is unset.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return gatewayMigrate(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print {store, schema_version} as JSON")
	return cmd
}

func gatewayMigrate(ctx context.Context, opts *gatewayMigrateOptions) error {
	where, v, err := opts.F.MigrateStore(ctx)
	if err != nil {
		return app.Failf("Error: %v", err)
	}
	if opts.JSON {
		return writeJSON(opts.F.IO.Out, map[string]any{"store": where, "schema_version": v})
	}
	fmt.Fprintf(opts.F.IO.Out, "Session store %s: schema version %d\n", termsafe.Line(where), v)
	return nil
}
