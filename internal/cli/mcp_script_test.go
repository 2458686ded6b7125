package cli_test

import (
	"os"
	"path/filepath"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() { scriptCmds["mcpservers"] = cmdMCPServers }

// cmdMCPServers sets MCP_SERVERS to the npm servers scripts/mcp-servers.sh
// installed (node_modules inside it), failing with what to run when they are not there.
func cmdMCPServers(ts *testscript.TestScript, neg bool, args []string) {
	dir := os.Getenv("HERMES_MCP_SERVERS")
	if dir == "" {
		cache := os.Getenv("HERMES_TOOLS_CACHE")
		if cache == "" {
			base := os.Getenv("XDG_CACHE_HOME")
			if base == "" {
				home, _ := os.UserHomeDir()
				base = filepath.Join(home, ".cache")
			}
			cache = filepath.Join(base, "hermes-tools")
		}
		dir = filepath.Join(cache, "mcp-servers-2026.8.31")
	}
	if _, err := os.Stat(filepath.Join(dir, ".installed")); err != nil {
		ts.Fatalf("the MCP test servers are not installed in %s: run scripts/mcp-servers.sh --install-only (or set HERMES_MCP_SERVERS)", dir)
	}
	ts.Setenv("MCP_SERVERS", filepath.Join(dir, "node_modules", "@modelcontextprotocol"))
}
