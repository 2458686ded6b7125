#!/usr/bin/env bash
# Where a short hermes process spends its time before it does any work: side by side,
#   hello            a Go program that prints one line (the floor of any Go process here)
#   hello+cobra      the same with a cobra root command (what every CLI pays)
#   hello+jsonschema the same importing the JSON-schema library hermes links for tool
#                    arguments (github.com/google/jsonschema-go since 4a3d0de; before it,
#                    santhosh-tekuri/jsonschema/v6, whose init compiled five metaschemas: +14 ms)
#   hermes --version all of hermes' package inits, no work
#   hermes plugins list (200 plugins)   for scale
# plus page faults and CPU time from `perf stat` when perf is installed, and hermes'
# own package-init times (GODEBUG=inittrace=1, the largest ten).
#
# The probe programs are built from a throwaway directory under bench/out/ (ignored by
# git, and by `go ... ./...` because its name starts with "_").
#
# Usage: bench/startup.sh            (ROUNDS=3 RUNS=30 WARMUP=3 by default)
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

RUNS="${RUNS:-30}"
bench_init startup
build_hermes

probe="$OUT_DIR/_startup-$$"
trap 'rm -rf "$TMP" "$probe"' EXIT
mkdir -p "$probe/hello" "$probe/cobra" "$probe/jsonschema"
cat >"$probe/hello/main.go" <<'EOF'
package main

import "os"

func main() { os.Stdout.WriteString("hello\n") }
EOF
cat >"$probe/cobra/main.go" <<'EOF'
package main

import (
	"os"

	"github.com/spf13/cobra"
)

func main() {
	c := &cobra.Command{Use: "x", Run: func(*cobra.Command, []string) { os.Stdout.WriteString("hello\n") }}
	_ = c.Execute()
}
EOF
cat >"$probe/jsonschema/main.go" <<'EOF'
package main

import (
	"os"

	_ "github.com/google/jsonschema-go/jsonschema"
)

func main() { os.Stdout.WriteString("hello\n") }
EOF
for p in hello cobra jsonschema; do
  (cd "$ROOT" && go build -o "$TMP/$p" "./${probe#"$ROOT"/}/$p")
done

# 200 plugins for scale (same shape as bench/plugins-list.sh, shorter manifests)
export HERMES_HOME="$TMP/home" NO_COLOR=1
unset HERMES_BUNDLED_PLUGINS HERMES_ENABLE_PROJECT_PLUGINS HERMES_PLUGINS_DEBUG HERMES_SAFE_MODE
for ((i = 1; i <= 200; i++)); do
  d="$HERMES_HOME/plugins/p$i"
  mkdir -p "$d"
  printf 'name: p%d\nversion: "1.0"\ndescription: plugin %d\ntags: [a, b]\nrequires_env: [K%d]\n' "$i" "$i" "$i" >"$d/plugin.yaml"
  echo 'def register(ctx): pass' >"$d/__init__.py"
done
cd "$TMP"
"$HERMES" plugins list >/dev/null # probe the interpreter once (cached afterwards)
echo

compare \
  "hello" "$TMP/hello" \
  "hello+cobra" "$TMP/cobra" \
  "hello+jsonschema" "$TMP/jsonschema" \
  "hermes --version" "$HERMES --version" \
  "hermes plugins list (200)" "$HERMES plugins list"
echo

if command -v perf >/dev/null 2>&1 && perf stat -e task-clock true >/dev/null 2>&1; then
  echo "perf stat -r $RUNS (CPU time and page faults; each fault costs ~10-30 us in this VM):"
  for c in "$TMP/hello" "$TMP/cobra" "$TMP/jsonschema" "$HERMES --version" "$HERMES plugins list"; do
    # shellcheck disable=SC2086
    perf stat -r "$RUNS" -e task-clock,page-faults $c 2>&1 >/dev/null |
      awk -v c="${c#"$TMP"/}" '/task-clock/{t=$1} /page-faults/{f=$1} END{printf "  %-36s %8s ms CPU %8s page faults\n", c, t, f}'
  done
  echo
fi

echo "hermes package inits (GODEBUG=inittrace=1, median of 9 runs, largest ten):"
for ((i = 0; i < 9; i++)); do GODEBUG=inittrace=1 "$HERMES" --version 2>&1 >/dev/null | awk '$1=="init"{print $2, $5}'; done |
  sort -k1,1 -k2,2g | awk '{v[$1]=v[$1]" "$2; n[$1]++} END{for (k in v) {split(substr(v[k],2), a, " "); printf "%8.2f ms  %s\n", a[int((n[k]+1)/2)], k}}' |
  sort -rg | head -10
bench_done
