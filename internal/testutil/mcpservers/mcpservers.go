// Package mcpservers finds the real npm MCP servers scripts/mcp-servers.sh
// installs for the tests, by the same rule as that script.
package mcpservers

import (
	"fmt"
	"os"
	"path/filepath"
)

// Version is the pinned version of both servers (scripts/mcp-servers.sh).
const Version = "2026.8.31"

// Dir is the folder holding node_modules: $HERMES_MCP_SERVERS, else
// mcp-servers-VERSION in $HERMES_TOOLS_CACHE or $XDG_CACHE_HOME/hermes-tools.
func Dir() string {
	if dir := os.Getenv("HERMES_MCP_SERVERS"); dir != "" {
		return dir
	}
	cache := os.Getenv("HERMES_TOOLS_CACHE")
	if cache == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			home, _ := os.UserHomeDir()
			base = filepath.Join(home, ".cache")
		}
		cache = filepath.Join(base, "hermes-tools")
	}
	return filepath.Join(cache, "mcp-servers-"+Version)
}

// Installed returns Dir, or an error saying what to run when the servers are not there.
func Installed() (string, error) {
	dir := Dir()
	if _, err := os.Stat(filepath.Join(dir, ".installed")); err != nil {
		return dir, fmt.Errorf("the MCP test servers are not installed in %s: run scripts/mcp-servers.sh --install-only (or set HERMES_MCP_SERVERS)", dir)
	}
	return dir, nil
}

// Script is the entry point of one server package, e.g. "server-everything".
func Script(dir, pkg string) string {
	return filepath.Join(dir, "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
}
