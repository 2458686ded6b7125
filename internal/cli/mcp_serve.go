package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/hermes-go/hermes/internal/app"
)

type mcpServeOptions struct {
	Serve func(ctx context.Context, o app.MCPServeOptions) error

	Toolsets string
	Verbose  bool
}

// newMCPServeCmd is `hermes mcp serve`: hermes as an MCP server on stdio, so
// another MCP client can call its tools (built-in and plugin).
func newMCPServeCmd(f *app.Factory, runF func(*mcpServeOptions) error) *cobra.Command {
	opts := &mcpServeOptions{Serve: f.ServeMCP}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run hermes as an MCP server on stdio, offering its tools to another MCP client",
		Long: "Run hermes as an MCP server on stdin/stdout. It offers the tools of the tool set (built-in and\n" +
			"from enabled plugins; --toolsets as for hermes chat) and runs each call through the same hooks,\n" +
			"guards and approvals as a model's. Nobody can answer an approval prompt here: a call that needs\n" +
			"one is refused. Logs go to stderr; stdout carries only the protocol.",
		Example: `  {"mcpServers": {"hermes": {"command": "hermes", "args": ["mcp", "serve", "--toolsets", "file"]}}}`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return opts.Serve(cmd.Context(), app.MCPServeOptions{Toolsets: opts.Toolsets, Verbose: opts.Verbose})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Toolsets, "toolsets", "", "comma-separated toolsets to offer (default: config toolsets, else all)")
	fl.BoolVarP(&opts.Verbose, "verbose", "v", false, "log the protocol and every call on stderr")
	return cmd
}
