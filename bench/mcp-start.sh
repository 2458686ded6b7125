#!/usr/bin/env bash
# Target: `hermes chat -q` with 5 configured stdio MCP servers (server-everything)
# offers their tools to the model (and answers, against the loopback fake model)
# in at most 1.2 x the time of starting those 5 servers alone, in parallel, until
# each has answered initialize and tools/list (bench/mcp_alone.py).
#
# Also timed: `hermes chat -q` with no MCP server (the chat's own floor).
# Needs the MCP test servers: scripts/mcp-servers.sh installs them.
#
# Usage: bench/mcp-start.sh            (ROUNDS=3 RUNS=5 WARMUP=1 by default)
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

N=5
LIMIT=1.2
RUNS="${RUNS:-5}"
WARMUP="${WARMUP:-1}"
bench_init mcp-start
build_hermes
servers="$("$ROOT/scripts/mcp-servers.sh")"
script="$servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
node="$(command -v node)"
py="$(command -v python3)"

export NO_COLOR=1
cd "$TMP"
(cd "$ROOT" && go build -o "$TMP/fakellm" ./internal/llm/llmtest/cmd/fakellm)
printf 'replies:\n  - content: "ok"\n' >"$TMP/replies.yaml"
"$TMP/fakellm" -script "$TMP/replies.yaml" -repeat -addr-file "$TMP/addr" >/dev/null 2>&1 &
fake=$!
trap 'kill $fake 2>/dev/null; rm -rf "$TMP"' EXIT
for _ in $(seq 50); do [[ -s "$TMP/addr" ]] && break; sleep 0.1; done
url="$(cat "$TMP/addr")"
mkdir -p "$TMP/five" "$TMP/none"
{
  echo "model: {default: fake-model, base_url: '$url'}"
  echo "mcp_servers:"
  for i in $(seq $N); do echo "  ev$i: {command: '$node', args: ['$script', stdio]}"; done
} >"$TMP/five/config.yaml"
echo "model: {default: fake-model, base_url: '$url'}" >"$TMP/none/config.yaml"

HERMES_HOME="$TMP/five" "$HERMES" chat -q hi --json >"$TMP/check.json"
echo "check: chat -q ran (the model was offered the tools of the $N servers is checked by internal/cli/testdata/script/mcp_fs.txtar)"
echo

compare \
  "hermes chat -q ($N MCP servers)" "/usr/bin/env HERMES_HOME=$TMP/five $HERMES chat -q hi" \
  "$N servers alone" "$py $ROOT/bench/mcp_alone.py $node $script $N" \
  "hermes chat -q (no MCP)" "/usr/bin/env HERMES_HOME=$TMP/none $HERMES chat -q hi"
echo
r="$(awk -v x="${MED["hermes chat -q ($N MCP servers)"]}" -v y="${MED["$N servers alone"]}" 'BEGIN{printf "%.3f", x/y}')"
echo "ratio chat -q ($N servers) / $N servers alone: $(ratio "hermes chat -q ($N MCP servers)" "$N servers alone")"
echo
echo "TARGET chat -q offering $N stdio servers' tools <= $LIMIT x starting them alone: $r $(verdict "$r" "$LIMIT")"
bench_done
