package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/hermes-go/hermes/internal/app"
	"github.com/hermes-go/hermes/internal/termsafe"
)

func newCmdModel(f *app.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "model",
		Short: "The models of the configured provider (model.provider) or of another",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	var provider string
	list := &cobra.Command{
		Use:   "list",
		Short: "List the provider's models (its fetch_models, else the endpoint's /models)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return modelList(cmd.Context(), f, provider) },
	}
	list.Flags().StringVar(&provider, "provider", "", "list this provider's models instead of model.provider's")
	cmd.AddCommand(list)
	return cmd
}

func modelList(ctx context.Context, f *app.Factory, provider string) error {
	h, err := f.Host(ctx)
	if err != nil {
		return err
	}
	defer h.Close()
	if err := h.Load(ctx); err != nil {
		return err
	}
	ml, err := h.ListModels(ctx, provider)
	if err != nil {
		return err
	}
	out := f.IO.Out
	tag := ""
	if ml.Bundled {
		tag = " [bundled]"
	}
	sayf(out, "Models of %s%s (from %s):\n", termsafe.Line(ml.Provider), tag, termsafe.Line(ml.Source))
	for _, m := range ml.Models {
		sayf(out, "  %s\n", termsafe.Line(m))
	}
	if len(ml.Models) == 0 {
		sayf(out, "  (none listed)\n")
	}
	return nil
}
