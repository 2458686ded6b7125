package cli

import (
	"github.com/spf13/cobra"

	"github.com/hermes-go/hermes/internal/app"
)

// TEMPORARY — lead: delete this file (and its line in root.go) at merge. The real
// `mcp` parent lives in mcp.go (the client's branch); hang newMCPAddCmd and
// newMCPRemoveCmd under it instead. This one registers only add and remove so
// they run end to end before the merge.
func newCmdMCPTmp(f *app.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Manage the MCP servers hermes connects to",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newMCPAddCmd(f, nil), newMCPRemoveCmd(f, nil), newMCPServeCmd(f, nil))
	return cmd
}
