#!/usr/bin/env bash
# Target: ready-to-run with 20 enabled Python plugins (all registered) takes at most the
# time of 20 sequential `-c pass` starts of the very interpreter binary the bridge runs
# (its resolved sys.executable, not a launcher shim such as pyenv's).
#
# Builds bin/hermes, generates 20 enabled Python plugins in a temp HERMES_HOME (each
# imports json and registers one tool and one hook), checks that `hermes tools list`
# shows all 20 tools with no load error, then times side by side:
#   hermes tools list            discover + start 20 bridges + register() + print + stop
#   20 x <sys.executable> -c pass   sequential, from one /bin/sh loop
# and, to split the cost: `hermes -p one tools list` (1 plugin), `hermes -p none tools
# list` (0 plugins: the host's own floor) and one `<sys.executable> -c pass`.
#
# Usage: bench/ready-20.sh            (ROUNDS=3 RUNS=10 WARMUP=2 by default)
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

N=20
LIMIT=1.0
RUNS="${RUNS:-10}"
WARMUP="${WARMUP:-2}"
bench_init ready-20
build_hermes

unset HERMES_BUNDLED_PLUGINS HERMES_ENABLE_PROJECT_PLUGINS HERMES_PLUGINS_DEBUG HERMES_SAFE_MODE
export HERMES_HOME="$TMP/home" NO_COLOR=1
cd "$TMP"

# ---- fixtures ---------------------------------------------------------------------
# make_plugin DIR I
make_plugin() {
  local d="$1/bench-$2"
  mkdir -p "$d"
  cat >"$d/plugin.yaml" <<EOF
name: bench-$2
version: "1.0.$2"
description: Benchmark plugin $2 (one tool, one hook)
provides_tools: [bench_echo_$2]
provides_hooks: [post_tool_call]
EOF
  cat >"$d/__init__.py" <<EOF
"""bench-$2: registers one tool and one hook."""
import json


def register(ctx):
    schema = {
        "name": "bench_echo_$2",
        "description": "Echoes its text argument (benchmark plugin $2).",
        "parameters": {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "what to echo"}},
            "required": ["text"],
        },
    }

    def echo(params, **kwargs):
        return json.dumps({"success": True, "text": params.get("text", "")})

    ctx.register_tool(name="bench_echo_$2", toolset="bench_$2", schema=schema, handler=echo)

    def after(tool_name, params, result, **kwargs):
        pass

    ctx.register_hook("post_tool_call", after)
EOF
}
names=()
for ((i = 1; i <= N; i++)); do
  id="$(printf '%02d' "$i")"
  make_plugin "$HERMES_HOME/plugins" "$id"
  names+=("bench-$id")
done
printf 'plugins:\n  enabled: [%s]\n' "$(IFS=,; echo "${names[*]}" | sed 's/,/, /g')" >"$HERMES_HOME/config.yaml"
mkdir -p "$HERMES_HOME/profiles/one/plugins" "$HERMES_HOME/profiles/none"
make_plugin "$HERMES_HOME/profiles/one/plugins" 01
printf 'plugins:\n  enabled: [bench-01]\n' >"$HERMES_HOME/profiles/one/config.yaml"
printf 'plugins:\n  enabled: []\n' >"$HERMES_HOME/profiles/none/config.yaml"

configured="${HERMES_PYTHON:-python3}"
py="$(resolve_python "$configured")"
echo "interpreter: $configured -> sys.executable $py ($("$py" -c 'import sys; print(sys.version.split()[0])'))"
[[ -n "${PYTHONDONTWRITEBYTECODE:-}" ]] && echo "note: PYTHONDONTWRITEBYTECODE=$PYTHONDONTWRITEBYTECODE is set (no .pyc is written for the bridge or the plugins)"
{
  echo '#!/bin/sh'
  echo "for i in $(seq -s ' ' 1 "$N"); do"
  echo "  '$py' -c pass"
  echo 'done'
} >"$TMP/seq.sh"

# ---- check: all 20 registered, nothing failed --------------------------------------------
"$HERMES" tools list --json >"$TMP/tools.json" 2>"$TMP/tools.err"
got="$(grep -c '"name": "bench_echo_' "$TMP/tools.json" || true)"
if [[ "$got" != "$N" || -s "$TMP/tools.err" ]]; then
  echo "check failed: $got of $N tools registered"; cat "$TMP/tools.err"; exit 1
fi
echo "check: hermes tools list shows all $N plugin tools, stderr empty"
echo

# ---- timing ---------------------------------------------------------------------------
compare \
  "hermes tools list (20 plugins)" "$HERMES tools list" \
  "$N x python -c pass" "/bin/sh $TMP/seq.sh" \
  "hermes -p one tools list (1)" "$HERMES -p one tools list" \
  "hermes -p none tools list (0)" "$HERMES -p none tools list" \
  "python -c pass (1)" "$py -c pass"
echo

r="$(awk -v x="${MED["hermes tools list (20 plugins)"]}" -v y="${MED["$N x python -c pass"]}" 'BEGIN{printf "%.3f", x/y}')"
echo "ratio tools list (20) / $N x -c pass: $(ratio "hermes tools list (20 plugins)" "$N x python -c pass")"
awk -v h20="${MED["hermes tools list (20 plugins)"]}" -v h1="${MED["hermes -p one tools list (1)"]}" -v h0="${MED["hermes -p none tools list (0)"]}" -v p="${MED["python -c pass (1)"]}" \
  'BEGIN{printf "split: host floor %.1f ms; first plugin +%.1f ms; 20 plugins +%.1f ms over the floor (%.1f ms each); one -c pass %.1f ms\n", h0*1000, (h1-h0)*1000, (h20-h0)*1000, (h20-h0)*1000/20, p*1000}'
echo
echo "TARGET ready with $N plugins <= $LIMIT x $N sequential -c pass: $r $(verdict "$r" "$LIMIT")"
bench_done
