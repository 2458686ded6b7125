#!/usr/bin/env bash
# Runs every performance target's script in turn and ends with their verdict lines.
# Knobs are passed through (ROUNDS, RUNS, WARMUP, COUNT, BENCHTIME, HERMES_BIN, ...).
# Logs: bench/out/<script>-<UTC stamp>.txt
set -euo pipefail
dir="$(cd "$(dirname "$0")" && pwd)"
summary="$(mktemp)"
trap 'rm -f "$summary"' EXIT
status=0
for s in toolcall plugins-list ready-20; do
  echo "################ bench/$s.sh"
  if ! bash "$dir/$s.sh" | tee -a "$summary"; then
    echo "bench/$s.sh failed" | tee -a "$summary"
    status=1
  fi
  echo
done
echo "################ summary"
grep -E '^(TARGET|stricter|bench/.* failed)' "$summary" || true
exit "$status"
