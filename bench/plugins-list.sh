#!/usr/bin/env bash
# Target: `hermes plugins list` over 200 installed plugins, as a whole process, takes at
# most 0.15x the time Python needs just to import its YAML library and parse the same
# 200 manifests (the least the Python host must do).
#
# Builds bin/hermes, generates 200 realistic plugin directories (plugin.yaml of 10-14
# lines + __init__.py) in a temp HERMES_HOME, then times side by side:
#   hermes plugins list, hermes plugins list --json, hermes --version (start-up floor),
#   python: import yaml; [yaml.safe_load(open(p)) for p in paths]
#     - with the interpreter hermes would run (sys.executable of plugins.python /
#       $HERMES_PYTHON / python3, not a launcher shim), and
#     - with /usr/bin/python3 (Debian's, fast start, PyYAML built with libyaml);
#   and, stricter still, /usr/bin/python3 with yaml.CSafeLoader (the C parser).
# The target is judged against the faster safe_load baseline (what upstream does);
# the CSafeLoader ratio is printed too.
#
# Usage: bench/plugins-list.sh            (ROUNDS=3 RUNS=20 WARMUP=3 by default)
#   HERMES_BIN_B=path also times that binary's `plugins list` in the same rounds, run
#   for run beside the first (e.g. a build with -tags hermes_yamlgeneral).
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

N_PLUGINS="${N_PLUGINS:-200}"
LIMIT=0.15
bench_init plugins-list
build_hermes

unset HERMES_BUNDLED_PLUGINS HERMES_ENABLE_PROJECT_PLUGINS HERMES_PLUGINS_DEBUG HERMES_SAFE_MODE
export HERMES_HOME="$TMP/home" NO_COLOR=1
mkdir -p "$HERMES_HOME/plugins"
cd "$TMP"

# ---- fixtures ---------------------------------------------------------------------
words=(search notes github weather calendar translate summarize jira slack metrics
  docker k8s sql pdf images audio rss finance maps email)
hooks=(pre_tool_call post_tool_call pre_llm_call post_llm_call on_session_start on_session_end)
enabled=() disabled=()
for ((i = 1; i <= N_PLUGINS; i++)); do
  w="${words[i % ${#words[@]}]}"
  name="$(printf '%s-tools-%03d' "$w" "$i")"
  d="$HERMES_HOME/plugins/$name"
  mkdir -p "$d"
  {
    echo "name: $name"
    echo "version: \"1.$((i % 7)).$i\""
    echo "description: \"${w^} helpers for Hermes: lookup, sync and summaries (plugin $i)\""
    echo "author: Example Dev <dev$i@example.org>"
    echo "kind: standalone"
    echo "tags: [$w, productivity, example]"
    if ((i % 3 == 0)); then
      echo "requires_env:"
      echo "  - name: ${w^^}_API_KEY"
      echo "    description: API key for the $w service"
      echo "    secret: true"
    else
      echo "requires_env: [${w^^}_TOKEN]"
    fi
    echo "provides_tools: [${w}_lookup_$i, ${w}_sync_$i]"
    echo "provides_hooks: [${hooks[i % ${#hooks[@]}]}]"
    if ((i % 4 == 0)); then echo 'requires_hermes: ">=0.1"'; fi
    if ((i % 5 == 0)); then echo "manifest_version: 2"; echo "license: MIT"; fi
    echo "homepage: https://example.org/hermes-plugins/$name"
  } >"$d/plugin.yaml"
  cat >"$d/__init__.py" <<EOF
"""$name: ${w} helpers."""
import json


def register(ctx):
    schema = {
        "name": "${w}_lookup_$i",
        "description": "Look something up in ${w}.",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    }

    def lookup(params, **kwargs):
        return json.dumps({"success": True, "query": params.get("query", "")})

    ctx.register_tool(name="${w}_lookup_$i", toolset="$w", schema=schema, handler=lookup)
EOF
  if ((i % 10 == 0)); then enabled+=("$name"); fi
  if ((i % 40 == 1)); then disabled+=("$name"); fi
done
{
  echo "# bench fixture"
  echo "plugins:"
  echo "  enabled: [$(IFS=,; echo "${enabled[*]}" | sed 's/,/, /g')]"
  echo "  disabled: [$(IFS=,; echo "${disabled[*]}" | sed 's/,/, /g')]"
} >"$HERMES_HOME/config.yaml"
find "$HERMES_HOME/plugins" -name plugin.yaml | sort >"$TMP/paths.txt"
echo "fixtures: $(wc -l <"$TMP/paths.txt") plugins, manifests $(cat $(cat "$TMP/paths.txt") | wc -l) lines total, ${#enabled[@]} enabled, ${#disabled[@]} disabled"

cat >"$TMP/parse.py" <<'EOF'
# argv: paths-file  safe|csafe  [dir prepended to sys.path]  [--check]
import sys
if len(sys.argv) > 3 and sys.argv[3] != "-":
    sys.path.insert(0, sys.argv[3])
import yaml
paths = open(sys.argv[1]).read().split()
if sys.argv[2] == "csafe":
    docs = [yaml.load(open(p), Loader=yaml.CSafeLoader) for p in paths]
else:
    docs = [yaml.safe_load(open(p)) for p in paths]
if sys.argv[-1] == "--check":
    print(len(docs), "libyaml" if yaml.__with_libyaml__ else "pure-python", yaml.__file__)
EOF

# ---- the interpreters ---------------------------------------------------------------
configured="${HERMES_PYTHON:-python3}"
hpy="$(resolve_python "$configured")"
echo "hermes' Python: $configured -> $hpy ($("$hpy" -c 'import sys; print(sys.version.split()[0])'))"
hpy_path="-"
if ! "$hpy" -c 'import yaml' 2>/dev/null; then
  # PyYAML is not installed for that interpreter (and only Debian's packages are at
  # hand): borrow Debian's pure-Python package through a one-entry sys.path dir.
  if [[ -x /usr/bin/python3 ]] && ydir="$(/usr/bin/python3 -c 'import yaml, os; print(os.path.dirname(yaml.__file__))' 2>/dev/null)"; then
    mkdir -p "$TMP/pyyaml"
    ln -s "$ydir" "$TMP/pyyaml/yaml"
    hpy_path="$TMP/pyyaml"
    echo "  it has no PyYAML; using Debian's $ydir through sys.path for the baseline"
  else
    hpy=""
    echo "  it has no PyYAML and none can be borrowed: its baseline is skipped"
  fi
fi
[[ -n "$hpy" ]] && echo "  check: $("$hpy" "$TMP/parse.py" "$TMP/paths.txt" safe "$hpy_path" --check)"
sys_py=""
if [[ -x /usr/bin/python3 ]] && /usr/bin/python3 -c 'import yaml' 2>/dev/null; then
  sys_py=/usr/bin/python3
  echo "Debian's Python: $sys_py ($($sys_py -c 'import sys; print(sys.version.split()[0])')); check: $($sys_py "$TMP/parse.py" "$TMP/paths.txt" safe - --check)"
fi
n_listed="$("$HERMES" plugins list --json --user | grep -c '"name"')"
echo "check: hermes plugins list --json --user shows $n_listed plugins"
[[ "$n_listed" == "$N_PLUGINS" ]] || { echo "expected $N_PLUGINS plugins"; exit 1; }
if [[ -n "${HERMES_BIN_B:-}" ]]; then
  n_b="$("$HERMES_BIN_B" plugins list --json --user | grep -c '"name"')"
  echo "check: $HERMES_BIN_B plugins list --json --user shows $n_b plugins"
  [[ "$n_b" == "$N_PLUGINS" ]] || { echo "expected $N_PLUGINS plugins"; exit 1; }
fi
echo

# ---- timing ---------------------------------------------------------------------------
args=(
  "hermes plugins list" "$HERMES plugins list"
  "hermes plugins list --json" "$HERMES plugins list --json"
  "hermes --version" "$HERMES --version"
)
[[ -n "${HERMES_BIN_B:-}" ]] && args+=("hermes-B plugins list" "$HERMES_BIN_B plugins list")
[[ -n "$hpy" ]] && args+=("hermes-python safe_load" "$hpy $TMP/parse.py $TMP/paths.txt safe $hpy_path")
[[ -n "$sys_py" ]] && args+=(
  "usr-bin-python3 safe_load" "$sys_py $TMP/parse.py $TMP/paths.txt safe"
  "usr-bin-python3 CSafeLoader" "$sys_py $TMP/parse.py $TMP/paths.txt csafe"
)
compare "${args[@]}"
echo

# ---- ratios ---------------------------------------------------------------------------
best=""
for b in "usr-bin-python3 safe_load" "hermes-python safe_load"; do
  [[ -n "${MED[$b]:-}" ]] || continue
  if [[ -z "$best" ]] || awk -v x="${MED[$b]}" -v y="${MED[$best]}" 'BEGIN{exit !(x < y)}'; then best="$b"; fi
done
for b in "hermes-python safe_load" "usr-bin-python3 safe_load" "usr-bin-python3 CSafeLoader"; do
  [[ -n "${MED[$b]:-}" ]] || continue
  echo "ratio plugins list        / $b: $(ratio "hermes plugins list" "$b")"
  echo "ratio plugins list --json / $b: $(ratio "hermes plugins list --json" "$b")"
done
if [[ -n "$best" ]]; then
  r="$(awk -v x="${MED["hermes plugins list"]}" -v y="${MED[$best]}" 'BEGIN{printf "%.3f", x/y}')"
  rj="$(awk -v x="${MED["hermes plugins list --json"]}" -v y="${MED[$best]}" 'BEGIN{printf "%.3f", x/y}')"
  echo
  echo "TARGET plugins list <= $LIMIT x faster safe_load baseline ($best): list $r $(verdict "$r" "$LIMIT"), --json $rj $(verdict "$rj" "$LIMIT")"
  if [[ -n "${MED["usr-bin-python3 CSafeLoader"]:-}" ]]; then
    rc="$(awk -v x="${MED["hermes plugins list"]}" -v y="${MED["usr-bin-python3 CSafeLoader"]}" 'BEGIN{printf "%.3f", x/y}')"
    echo "stricter: plugins list / CSafeLoader baseline: $rc ($(verdict "$rc" "$LIMIT") at $LIMIT)"
  fi
fi
bench_done
