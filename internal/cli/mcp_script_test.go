package cli_test

import (
	"path/filepath"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/hermes-go/hermes/internal/testutil/mcpservers"
)

func init() { scriptCmds["mcpservers"] = cmdMCPServers }

// cmdMCPServers sets MCP_SERVERS to the npm servers scripts/mcp-servers.sh
// installed (node_modules inside it), failing with what to run when they are not there.
func cmdMCPServers(ts *testscript.TestScript, neg bool, args []string) {
	dir, err := mcpservers.Installed()
	if err != nil {
		ts.Fatalf("%v", err)
	}
	ts.Setenv("MCP_SERVERS", filepath.Join(dir, "node_modules", "@modelcontextprotocol"))
}
