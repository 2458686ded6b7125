#!/usr/bin/env bash
# Installs the MCP servers hermes' tests run for real (server-everything and
# server-filesystem, pinned) with npm into a cache kept across runs, so no test
# downloads anything. Prints the directory holding node_modules; tests find it
# through HERMES_MCP_SERVERS or this same default path. --install-only prints nothing.
set -euo pipefail

version=2026.8.31
dir="${HERMES_MCP_SERVERS:-${HERMES_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hermes-tools}/mcp-servers-$version}"
marker="$dir/.installed"
if [[ ! -f "$marker" ]]; then
  echo "installing @modelcontextprotocol/server-everything and server-filesystem $version into $dir" >&2
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-audit --no-fund --silent \
    "@modelcontextprotocol/server-everything@$version" \
    "@modelcontextprotocol/server-filesystem@$version" >&2
  touch "$marker"
fi
if [[ "${1:-}" != "--install-only" ]]; then
  echo "$dir"
fi
