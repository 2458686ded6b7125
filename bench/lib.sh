# Shared helpers for the bench/*.sh scripts (sourced, not run). Each script stays
# self-contained in what it needs: it builds bin/hermes, makes its fixtures in a temp
# dir and removes them; this file only holds the timing and reporting code.
#
# Timing: hyperfine when installed (apt-get install hyperfine), else an interleaved
# bash loop timed with $EPOCHREALTIME (date +%s%N on an old bash). Every comparison
# runs ROUNDS rounds; in each round every command is timed RUNS times side by side,
# so a burst of load from other processes shows up as a spread between rounds
# instead of silently skewing one side of a ratio.
#
# Knobs (environment): ROUNDS, RUNS, WARMUP, HERMES_BIN (skip the build and time
# this binary), NO_HYPERFINE=1 (force the bash loop).

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT_DIR="$ROOT/bench/out"

# bench_init NAME: temp dir, cleanup trap, log file, machine header.
bench_init() {
  BENCH_NAME="$1"
  TMP="$(mktemp -d "${TMPDIR:-/tmp}/hermes-bench-$BENCH_NAME.XXXXXX")"
  trap 'rm -rf "$TMP"' EXIT
  mkdir -p "$OUT_DIR"
  STAMP="$(date -u +%Y%m%dT%H%M%SZ)"
  LOG="$OUT_DIR/$BENCH_NAME-$STAMP.txt"
  exec > >(tee "$LOG") 2>&1
  echo "== bench/$BENCH_NAME.sh  $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(uname -sr)"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  load_warning
  echo "commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo ' (+ uncommitted changes in the work tree)')"
  if have_hyperfine; then echo "timer: $(hyperfine --version)"; else echo "timer: bash loop ($(timer_source))"; fi
}

bench_done() {
  echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
  load_warning
  echo "log: ${LOG#"$ROOT"/}"
}

# load_warning: says so when other work keeps the cores busy (1-minute load average
# above the core count): wall-clock figures and ratios are then unreliable.
load_warning() {
  awk -v n="$(nproc)" '{ if ($1 > n) printf "WARNING: load average %s on %d cores: other processes compete for the CPU, figures are noisy; re-run on a quiet machine\n", $1, n }' /proc/loadavg
}

have_hyperfine() { [[ "${NO_HYPERFINE:-}" != 1 ]] && command -v hyperfine >/dev/null 2>&1; }

timer_source() { if [[ -n "${EPOCHREALTIME:-}" ]]; then echo 'EPOCHREALTIME'; else echo 'date +%s%N'; fi; }

now_ns() {
  if [[ -n "${EPOCHREALTIME:-}" ]]; then
    local t="${EPOCHREALTIME/[.,]/}"   # microseconds
    echo "${t}000"
  else
    date +%s%N
  fi
}

# build_hermes: builds bin/hermes exactly as the README does (or uses $HERMES_BIN).
build_hermes() {
  if [[ -n "${HERMES_BIN:-}" ]]; then
    HERMES="$HERMES_BIN"
    echo "hermes: $HERMES (HERMES_BIN, not rebuilt)"
    return
  fi
  (cd "$ROOT" && CGO_ENABLED=0 go build -o bin/hermes ./cmd/hermes)
  HERMES="$ROOT/bin/hermes"
  echo "hermes: built $HERMES ($(go version | cut -d' ' -f3), $(du -k "$HERMES" | cut -f1) KiB)"
}

# resolve_python CONFIGURED: prints the interpreter's real binary (sys.executable),
# resolved from the current directory the way hermes' probe does.
resolve_python() {
  "$1" -c 'import sys; print(sys.executable)'
}

# compare NAME1 CMD1 NAME2 CMD2 ...: times the commands side by side (see the top of
# this file) and fills MED[name] (seconds, median of the rounds' medians) and
# prints a table: wall-clock median/mean/stddev/min/max, and "cpu ms", the mean
# user+system time of the process and its children (hyperfine only), which a busy
# machine inflates less than wall-clock time. Commands are strings; they are run without a shell by hyperfine
# (-N) and through eval by the fallback loop, so quote paths that may hold spaces.
declare -A MED
compare() {
  local rounds="${ROUNDS:-3}" runs="${RUNS:-20}" warmup="${WARMUP:-3}"
  local -a names=() cmds=()
  while (($#)); do names+=("$1"); cmds+=("$2"); shift 2; done
  local all="$TMP/compare-$RANDOM.csv"
  : >"$all"
  local r
  for ((r = 1; r <= rounds; r++)); do
    local csv="$TMP/round-$r.csv"
    if have_hyperfine; then
      local -a hf=(hyperfine -N --style basic --warmup "$warmup" --runs "$runs" --export-csv "$csv")
      local i
      for i in "${!names[@]}"; do hf+=(-n "${names[$i]}" "${cmds[$i]}"); done
      "${hf[@]}" >"$TMP/hyperfine-$r.log" 2>&1 || { cat "$TMP/hyperfine-$r.log"; return 1; }
    else
      loop_round "$csv" "$runs" "$warmup" names cmds
    fi
    # round,command,mean,stddev,median,user,system,min,max
    tail -n +2 "$csv" | sed "s/^/$r,/" >>"$all"
    printf 'round %d/%d:' "$r" "$rounds"
    awk -F, '{printf "  %s %.1f ms", $2, $5*1000}' <(tail -n +2 "$csv" | sed "s/^/$r,/")
    echo
  done
  echo
  printf '%-34s %10s %10s %10s %10s %10s %10s\n' command "median ms" "mean ms" "stddev" "min" "max" "cpu ms"
  local n
  for n in "${names[@]}"; do
    # median of the round medians; stddev/min/max over every run of every round
    local line
    local med rest
    med="$(awk -F, -v n="$n" '$2==n{print $5}' "$all" | sort -g | awk '{v[NR]=$1} END{printf "%.6f", (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}')"
    rest="$(awk -F, -v n="$n" -v med="$med" '$2==n {k++; mean+=$3; sd+=$4; cpu+=$6+$7; if(min==""||$8<min)min=$8; if($9>max)max=$9}
      END { printf "%.1f %.1f %.1f %.1f %.1f %s", med*1000, mean/k*1000, sd/k*1000, min*1000, max*1000, (cpu>0) ? sprintf("%.1f", cpu/k*1000) : "-" }' "$all")"
    line="$med $rest"
    MED["$n"]="${line%% *}"
    # shellcheck disable=SC2086
    printf '%-34s %10s %10s %10s %10s %10s %10s\n' "$n" ${line#* }
  done
  cp "$all" "$OUT_DIR/$BENCH_NAME-$STAMP.csv"
  RATIO_ROUNDS_CSV="$all"
}

# ratio A B: prints MED[A]/MED[B] and the per-round range of that ratio.
ratio() {
  local a="$1" b="$2"
  local per
  per="$(awk -F, -v a="$a" -v b="$b" '$2==a{x[$1]=$5} $2==b{y[$1]=$5}
    END{for(r in x) if (y[r]>0) { v=x[r]/y[r]; if(min==""||v<min)min=v; if(v>max)max=v }; printf "%.3f–%.3f", min, max}' "$RATIO_ROUNDS_CSV")"
  awk -v x="${MED[$a]}" -v y="${MED[$b]}" -v per="$per" 'BEGIN{printf "%.3f (rounds: %s)", x/y, per}'
}

# verdict RATIO_NUMBER LIMIT: "MET" when ratio <= limit.
verdict() { awk -v r="$1" -v l="$2" 'BEGIN{ if (r <= l) print "MET"; else print "NOT MET" }'; }

# loop_round CSV RUNS WARMUP NAMES_ARRAY CMDS_ARRAY: the no-hyperfine timer. Runs
# are interleaved (A B C A B C ...) and written as hyperfine-style CSV.
loop_round() {
  local csv="$1" runs="$2" warmup="$3"
  local -n _names="$4" _cmds="$5"
  local i j t0 t1
  for ((j = 0; j < warmup; j++)); do
    for i in "${!_cmds[@]}"; do eval "${_cmds[$i]}" >/dev/null 2>&1 </dev/null; done
  done
  local raw="$csv.raw"
  : >"$raw"
  for ((j = 0; j < runs; j++)); do
    for i in "${!_cmds[@]}"; do
      t0="$(now_ns)"
      eval "${_cmds[$i]}" >/dev/null 2>&1 </dev/null
      t1="$(now_ns)"
      echo "$i $(((t1 - t0)))" >>"$raw"
    done
  done
  echo "command,mean,stddev,median,user,system,min,max" >"$csv"
  for i in "${!_names[@]}"; do
    awk -v i="$i" '$1==i{print $2/1e9}' "$raw" | sort -g | awk -v n="${_names[$i]}" '
      {v[NR]=$1; s+=$1; ss+=$1*$1}
      END { k=NR; mean=s/k; sd=(k>1)?sqrt((ss-k*mean*mean)/(k-1)):0;
            med=(k%2)?v[(k+1)/2]:(v[k/2]+v[k/2+1])/2;
            printf "%s,%.9f,%.9f,%.9f,0,0,%.9f,%.9f\n", n, mean, sd, med, v[1], v[k] }' >>"$csv"
  done
}
