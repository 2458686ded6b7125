#!/usr/bin/env bash
# Target (issue 4): `hermes plugins scan` over a generated ~200 MB source tree takes at
# most 1.5x the time ripgrep needs to search the same tree for the same rule set; a
# typical plugin (< 1 MB) scans in well under the time Python needs to start.
#
# Builds bin/hermes, generates the tree with bench/scangen in a temp dir (mixed .py/.js/
# .md/.sh of realistic lines, a rule hit about every 20000 lines; removed at exit) and
# the scanner's rule set as an rg patterns file (scan.Patterns(): every rule's regular
# expression, look-around dropped, plus the invisible-Unicode class), then times side
# by side, ROUNDS rounds of RUNS runs each (hyperfine -N -i: a scan that finds
# something exits 1):
#   hermes plugins scan --json TREE
#   rg -i --no-ignore --hidden -n -f PATTERNS TREE      (every matching line printed)
# rg does less than the scanner: no per-line context (docstrings, comments, test trees,
# demotions), no correlation, no structural checks, no report. Both read the tree from
# the page cache (a warm-up run first) and use every core.
# Then the typical plugin: hermes plugins scan on each examples/plugins/* against
# `python3 -c pass` (the interpreter hermes runs, and Debian's /usr/bin/python3).
#
# Usage: bench/scan.sh        (MB=200 ROUNDS=3 RUNS=5 WARMUP=1; SMALL_RUNS=30)
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

LIMIT=1.5
MB="${MB:-200}" ROUNDS="${ROUNDS:-3}" RUNS="${RUNS:-5}" WARMUP="${WARMUP:-1}" SMALL_RUNS="${SMALL_RUNS:-30}"
bench_init scan
build_hermes
if ! command -v rg >/dev/null; then
  echo "installing ripgrep (benchmark only)"
  apt-get install -y ripgrep >/dev/null
fi
command -v hyperfine >/dev/null || { echo "bench/scan.sh needs hyperfine (apt-get install hyperfine)"; exit 1; }
echo "rg: $(rg --version | head -1)"

TREE="$TMP/tree" PAT="$TMP/patterns.txt"
(cd "$ROOT" && go run ./bench/scangen -out "$TREE" -mb "$MB" -patterns "$PAT")
echo "tree: $(find "$TREE" -type f | wc -l) files, $(du -sm "$TREE" | cut -f1) MB on disk; rule set: $(wc -l <"$PAT") patterns"
"$HERMES" plugins scan --json "$TREE" >"$TMP/scan.json" || true
rg -i --no-ignore --hidden -n -f "$PAT" "$TREE" >"$TMP/rg.out" || true
echo "check: scanner verdict $(grep -m1 '"verdict"' "$TMP/scan.json" | tr -d ' ,'), $(grep -c '"pattern_id"' "$TMP/scan.json") findings; rg printed $(wc -l <"$TMP/rg.out") matching lines"
echo

# median FILE NAME: median over rounds of the per-round median (seconds) of NAME.
median() {
  awk -F, -v n="$2" '$2==n{print $5}' "$1" | sort -g |
    awk '{v[NR]=$1} END{printf "%.6f", (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'
}
# rounds CSV RUNS WARMUP NAME CMD ...: hyperfine rounds into CSV (round,command,mean,...)
rounds() {
  local all="$1" runs="$2" warmup="$3"; shift 3
  local -a hf=(hyperfine -N -i --style basic --warmup "$warmup" --runs "$runs")
  while (($#)); do hf+=(-n "$1" "$2"); shift 2; done
  : >"$all"
  local r
  for ((r = 1; r <= ROUNDS; r++)); do
    "${hf[@]}" --export-csv "$TMP/r.csv" >"$TMP/hf.log" 2>&1 || { cat "$TMP/hf.log"; exit 1; }
    tail -n +2 "$TMP/r.csv" | sed "s/^/$r,/" >>"$all"
    printf 'round %d/%d:' "$r" "$ROUNDS"
    awk -F, '{printf "  %s %.1f ms", $1, $4*1000}' <(tail -n +2 "$TMP/r.csv")
    echo
  done
  cat "$all" >>"$OUT_DIR/$BENCH_NAME-$STAMP.csv"
}
table() {
  local all="$1"; shift
  printf '%-40s %10s %10s %10s %10s %10s\n' command "median ms" "mean ms" "min" "max" "cpu ms"
  local n
  for n in "$@"; do
    awk -F, -v n="$n" -v med="$(median "$all" "$n")" '$2==n {k++; mean+=$3; cpu+=$6+$7; if(min==""||$8<min)min=$8; if($9>max)max=$9}
      END { printf "%-40s %10.1f %10.1f %10.1f %10.1f %10.1f\n", n, med*1000, mean/k*1000, min*1000, max*1000, cpu/k*1000 }' "$all"
  done
}

echo "== 200 MB tree: scanner vs rg (ROUNDS=$ROUNDS RUNS=$RUNS)"
BIG="$TMP/big.csv"
rounds "$BIG" "$RUNS" "$WARMUP" \
  "hermes plugins scan --json" "$HERMES plugins scan --json $TREE" \
  "rg -i -n -f patterns" "rg -i --no-ignore --hidden -n -f $PAT $TREE"
table "$BIG" "hermes plugins scan --json" "rg -i -n -f patterns"
r="$(awk -v a="$(median "$BIG" "hermes plugins scan --json")" -v b="$(median "$BIG" "rg -i -n -f patterns")" 'BEGIN{printf "%.3f", a/b}')"
per="$(awk -F, '$2=="hermes plugins scan --json"{x[$1]=$5} $2=="rg -i -n -f patterns"{y[$1]=$5}
  END{for(k in x){v=x[k]/y[k]; if(min==""||v<min)min=v; if(v>max)max=v}; printf "%.3f–%.3f", min, max}' "$BIG")"
echo "ratio scanner/rg: $r (rounds: $per), limit $LIMIT: $(verdict "$r" "$LIMIT")"
echo

echo "== typical plugin: scan vs Python start (ROUNDS=$ROUNDS RUNS=$SMALL_RUNS)"
hpy="$(resolve_python "${HERMES_PYTHON:-python3}")"
SMALL="$TMP/small.csv"
args=()
for p in "$ROOT"/examples/plugins/*/; do
  n="$(basename "$p")"
  args+=("hermes plugins scan $n ($(du -sk "$p" | cut -f1) KiB)" "$HERMES plugins scan $p")
done
args+=("python3 -c pass (hermes' $(basename "$hpy"))" "$hpy -c pass")
[[ -x /usr/bin/python3 ]] && args+=("/usr/bin/python3 -c pass" "/usr/bin/python3 -c pass")
args+=("hermes --version (start-up floor)" "$HERMES --version")
rounds "$SMALL" "$SMALL_RUNS" 3 "${args[@]}"
names=()
for ((i = 0; i < ${#args[@]}; i += 2)); do names+=("${args[i]}"); done
table "$SMALL" "${names[@]}"
echo
echo "== the scan alone, in process (no start-up): scan.Scan over examples/plugins (all three)"
(cd "$ROOT" && go test -run '^$' -bench BenchmarkScanTree -benchtime 300x -benchmem ./internal/scan | grep '^Benchmark')
bench_done
