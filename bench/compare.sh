#!/usr/bin/env bash
# Runs the performance scripts for two builds of hermes side by side in one run:
# BEFORE (a checkout of the commit to compare with, e.g. `git worktree add
# /tmp/before <sha>`) and this tree. Each round runs every script once per side,
# the sides' order alternating, so a burst of load hits both. Reported per
# figure: the median of the sides' round figures and after/before.
#
#   BEFORE=/tmp/before ROUNDS=3 bench/compare.sh
#
# The figures: the warm tool-call round trip (each tree's own runtime benchmark),
# `plugins list` over 200 plugins, ready with 20 Python plugins, scanning a
# 200 MB tree and searching a 10,000-entry catalog (this tree's scripts, each
# side's binary through HERMES_BIN). Knobs of the scripts pass through (RUNS,
# WARMUP, COUNT, ...); each script is run with ROUNDS=1 per round here.
set -euo pipefail
dir="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$dir/.." && pwd)"
before="${BEFORE:?set BEFORE to a checkout of the commit to compare with}"
before="$(cd "$before" && pwd)"
rounds="${ROUNDS:-3}"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/hermes-compare.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$dir/out"
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
log="$dir/out/compare-$stamp.txt"
exec > >(tee "$log") 2>&1

echo "== bench/compare.sh  $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(uname -sr)"
echo "before: $before at $(git -C "$before" rev-parse --short HEAD)"
echo "after:  $root at $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD || echo ' (+ uncommitted changes)')"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for side in before after; do
  src="$before"
  [[ "$side" == after ]] && src="$root"
  (cd "$src" && CGO_ENABLED=0 go build -o "$tmp/hermes-$side" ./cmd/hermes)
done
echo

# figure SIDE NAME VALUE_MS: one round's figure of one side.
figure() { echo "$1|$2|$3" >>"$tmp/figures"; }

# row LOG NAME: the "median ms" column of NAME's row in a script's table.
row() {
  awk -v n="$2" 'index($0, n" ") == 1 { rest = substr($0, length(n) + 1); split(rest, f, " "); print f[1]; exit }' "$1"
}

run_side() {
  local side="$1" r="$2" src="$before" out
  [[ "$side" == after ]] && src="$root"
  out="$tmp/$side-$r"
  ROUNDS=1 bash "$src/bench/toolcall.sh" >"$out-toolcall.txt" 2>&1 || { cat "$out-toolcall.txt"; return 1; }
  # the script's summary line: "BenchmarkX   median   N ns/op  (n=..., ...)"
  figure "$side" "tool call (µs)" "$(awk '$1=="BenchmarkToolCallPython" && $2=="median" {printf "%.2f", $3/1000}' "$out-toolcall.txt")"
  figure "$side" "pipe echo floor (µs)" "$(awk '$1=="BenchmarkPipeEchoPython" && $2=="median" {printf "%.2f", $3/1000}' "$out-toolcall.txt")"
  local s name
  for s in plugins-list ready-20 scan search; do
    HERMES_BIN="$tmp/hermes-$side" ROUNDS=1 bash "$root/bench/$s.sh" >"$out-$s.txt" 2>&1 || { cat "$out-$s.txt"; return 1; }
  done
  figure "$side" "plugins list, 200 (ms)" "$(row "$out-plugins-list.txt" "hermes plugins list")"
  figure "$side" "ready with 20 (ms)" "$(row "$out-ready-20.txt" "hermes tools list (20 plugins)")"
  figure "$side" "scan 200 MB (ms)" "$(row "$out-scan.txt" "hermes plugins scan --json")"
  figure "$side" "search telegram (ms)" "$(row "$out-search.txt" "hermes plugins search telegram")"
  figure "$side" "hermes --version (ms)" "$(row "$out-search.txt" "hermes --version")"
}

for ((r = 1; r <= rounds; r++)); do
  order=(before after)
  ((r % 2 == 0)) && order=(after before)
  for side in "${order[@]}"; do
    echo "round $r/$rounds: $side"
    run_side "$side" "$r"
  done
done
echo
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
printf '%-26s %12s %12s %10s   %s\n' figure before after after/before "rounds (before | after)"
awk -F'|' '
  { v[$2, $1] = v[$2, $1] " " $3; if (!($2 in seen)) { seen[$2] = 1; order[++n] = $2 } }
  function median(s,   a, k, i, j, t) {
    k = split(s, a, " ")
    for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return (k % 2) ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
  }
  END {
    for (i = 1; i <= n; i++) {
      f = order[i]; b = median(v[f, "before"]); a = median(v[f, "after"])
      printf "%-26s %12.2f %12.2f %10.3f  %s |%s\n", f, b, a, (b > 0) ? a / b : 0, v[f, "before"], v[f, "after"]
    }
  }' "$tmp/figures"
echo "log: ${log#"$root"/}"
