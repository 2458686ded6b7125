#!/usr/bin/env bash
# Target: BenchmarkToolCallPython (host -> Python plugin tool -> host, warm) costs at most
# 1.5x BenchmarkPipeEchoPython (a bare Python line echo over the same kind of pipe).
# BenchmarkMinimalServerPython runs beside them: a 15-line Python JSON-RPC server
# answering the same call with the same handler, no bridge. call/minimal is the
# bridge's own overhead; minimal/echo is what Python's own work for the call costs
# on this machine, a bound no Python plugin host can beat.
#
# Runs, ROUNDS times (default 1):
#   go test -run '^$' -bench '^(BenchmarkToolCallPython|BenchmarkPipeEchoPython|BenchmarkMinimalServerPython)$' -count 5 ./internal/plugins/runtime/
# then prints benchstat's summary (installed into a temp GOBIN from the module proxy
# when it is not on PATH; skipped if that fails) and the ratio of the medians of ns/op,
# computed with awk over every run of every round. With ROUNDS>1 the ratio of each
# round is printed too, so load from other processes shows up as spread.
#
# Knobs: COUNT (5), BENCHTIME (go's default, 1s), ROUNDS (1), HERMES_PYTHON (the
# interpreter both benchmarks run, resolved to its sys.executable like hermes does),
# INTERLEAVE=1: build the test binary once and run it COUNT times with -test.count 1,
# so the two benchmarks alternate (echo, call, echo, call, ...) instead of running
# 5 x echo then 5 x call; on a busy machine a burst of load then hits both sides.
# PIN=CPULIST (default 0; PIN= to switch it off): run under `taskset -c CPULIST`.
# Unpinned, each round times where the scheduler happened to put the host and the
# Python process (same core: ~30 us a round trip here; different cores: 40-60 us of
# cross-core wake-ups), so the floor and the call can land differently and the ratio
# swings from ~1.1 to ~2 between runs. Pinned, both benchmarks run with the same
# placement and the ratio compares the work, which is what the target is about.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

COUNT="${COUNT:-5}"
ROUNDS="${ROUNDS:-1}"
LIMIT=1.5
bench_init toolcall
cd "$ROOT"

bt=()
[[ -n "${BENCHTIME:-}" ]] && bt=(-benchtime "$BENCHTIME")
pin=()
PIN="${PIN-0}"
if [[ -n "$PIN" ]]; then
  pin=(taskset -c "$PIN")
  echo "pinned: taskset -c $PIN"
fi
raw="$TMP/bench.txt"
: >"$raw"
if [[ "${INTERLEAVE:-}" == 1 ]]; then
  go test -c -o "$TMP/runtime.test" ./internal/plugins/runtime/
fi
for ((r = 1; r <= ROUNDS; r++)); do
  if [[ "${INTERLEAVE:-}" == 1 ]]; then
    tbt=()
    [[ -n "${BENCHTIME:-}" ]] && tbt=(-test.benchtime "$BENCHTIME")
    echo "round $r/$ROUNDS: $COUNT x (cd internal/plugins/runtime && runtime.test -test.run '^\$' -test.bench '^(BenchmarkToolCallPython|BenchmarkPipeEchoPython|BenchmarkMinimalServerPython)$' -test.count 1 ${tbt[*]})"
    : >"$TMP/round-$r.txt"
    for ((c = 1; c <= COUNT; c++)); do
      (cd internal/plugins/runtime && "${pin[@]}" "$TMP/runtime.test" -test.run '^$' -test.bench '^(BenchmarkToolCallPython|BenchmarkPipeEchoPython|BenchmarkMinimalServerPython)$' -test.count 1 "${tbt[@]}") |
        tee -a "$TMP/round-$r.txt"
    done
  else
    cmd=(go test -run '^$' -bench '^(BenchmarkToolCallPython|BenchmarkPipeEchoPython|BenchmarkMinimalServerPython)$' -count "$COUNT" "${bt[@]}" ./internal/plugins/runtime/)
    echo "round $r/$ROUNDS: ${cmd[*]}"
    "${pin[@]}" "${cmd[@]}" | tee "$TMP/round-$r.txt"
  fi
  grep '^Benchmark' "$TMP/round-$r.txt" | sed "s/^/$r /" >>"$raw"
done
grep -q 'BenchmarkToolCallPython' "$raw" && grep -q 'BenchmarkPipeEchoPython' "$raw" ||
  { echo "both benchmarks must run (is Python 3 installed?)"; exit 1; }
cp "$raw" "$OUT_DIR/toolcall-$STAMP.bench"
echo

# benchstat, when it can be had
bs="$(command -v benchstat || true)"
if [[ -z "$bs" ]]; then
  if GOBIN="$TMP/gobin" GOFLAGS=-mod=mod go install golang.org/x/perf/cmd/benchstat@latest >"$TMP/benchstat-install.log" 2>&1; then
    bs="$TMP/gobin/benchstat"
  else
    echo "(benchstat not available: $(tail -1 "$TMP/benchstat-install.log"))"
  fi
fi
if [[ -n "$bs" ]]; then
  cat "$TMP"/round-*.txt >"$TMP/all.txt"
  "$bs" "$TMP/all.txt" || true
  echo
fi

# median ns/op of NAME over the lines of FILE ("round Benchmark-N iters ns ns/op ...")
median_ns() {
  awk -v n="$1" '$2 ~ "^"n"(-[0-9]+)?$" {for (i=3;i<=NF;i++) if ($(i+1)=="ns/op") {print $i; break}}' "$2" |
    sort -g | awk '{v[NR]=$1} END{if (NR) printf "%.0f %d %.0f %.0f", (NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2, NR, v[1], v[NR]}'
}
read -r call n_call call_min call_max <<<"$(median_ns BenchmarkToolCallPython "$raw")"
read -r echo_ns n_echo echo_min echo_max <<<"$(median_ns BenchmarkPipeEchoPython "$raw")"
read -r mini n_mini mini_min mini_max <<<"$(median_ns BenchmarkMinimalServerPython "$raw")"
printf '%-26s median %8s ns/op  (n=%s, min %s, max %s)\n' BenchmarkToolCallPython "$call" "$n_call" "$call_min" "$call_max"
printf '%-26s median %8s ns/op  (n=%s, min %s, max %s)\n' BenchmarkPipeEchoPython "$echo_ns" "$n_echo" "$echo_min" "$echo_max"
printf '%-26s median %8s ns/op  (n=%s, min %s, max %s)\n' BenchmarkMinimalServerPython "$mini" "$n_mini" "$mini_min" "$mini_max"
if ((ROUNDS > 1)); then
  for ((r = 1; r <= ROUNDS; r++)); do
    grep "^$r " "$raw" >"$TMP/r.txt"
    a="$(median_ns BenchmarkToolCallPython "$TMP/r.txt" | cut -d' ' -f1)"
    b="$(median_ns BenchmarkPipeEchoPython "$TMP/r.txt" | cut -d' ' -f1)"
    awk -v a="$a" -v b="$b" -v r="$r" 'BEGIN{printf "round %d ratio %.3f\n", r, a/b}'
  done
fi
ratio="$(awk -v a="$call" -v b="$echo_ns" 'BEGIN{printf "%.3f", a/b}')"
echo
awk -v a="$call" -v m="$mini" -v e="$echo_ns" 'BEGIN{printf "bridge overhead (tool call / minimal server): %.3f\nPython work bound (minimal server / echo): %.3f\n", a/m, m/e}'
echo "TARGET tool call <= $LIMIT x pipe echo floor: $ratio $(verdict "$ratio" "$LIMIT")"
bench_done
