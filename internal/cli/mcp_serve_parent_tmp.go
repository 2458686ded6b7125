package cli

// TEMPORARY (lead: delete this file and its line in root.go at merge): the
// `mcp` parent command belongs to internal/cli/mcp.go of the MCP client branch,
// which adds newMCPServeCmd(f, nil) to its subcommands. It exists here only so
// `hermes mcp serve` runs end to end before that merge.

import (
	"github.com/spf13/cobra"

	"github.com/hermes-go/hermes/internal/app"
)

func newCmdMCPServeParentTmp(f *app.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "MCP: hermes as an MCP server",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newMCPServeCmd(f, nil))
	return cmd
}
