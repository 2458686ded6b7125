#!/usr/bin/env bash
# The whole test suite: vet, unit and end-to-end tests (race detector on), then every
# fuzz target for a short run. Used by the README and by CI (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

# An execution count, not a duration: a duration-based -fuzztime races the fuzz
# coordinator's own deadline in Go 1.26 (go.dev/issue/75804) and fails a clean run
# with a bare "context deadline exceeded" on a busy machine.
fuzztime="${FUZZTIME:-100000x}"

echo "== gofmt"
unformatted="$(gofmt -l $(git ls-files '*.go'))"
if [[ -n "$unformatted" ]]; then
  echo "not gofmt-formatted (run gofmt -w on them):" >&2
  echo "$unformatted" >&2
  exit 1
fi

echo "== go vet"
go vet ./...

echo "== golangci-lint"
# forbidigo holds each OS concern to the package that owns it (.golangci.yml).
scripts/golangci-lint.sh

echo "== go test -race"
# Unanswered plugin calls in the end-to-end scripts write stall reports here
# (hermes' goroutines, the protocol connection, the plugin's threads).
HERMES_DEBUG_STALL="$(mktemp -d "${TMPDIR:-/tmp}/hermes-stalls.XXXXXX")"
export HERMES_DEBUG_STALL
testlog="$HERMES_DEBUG_STALL/go-test.log"
if ! go test -race -count=1 -timeout 30m ./... 2>&1 | tee "$testlog"; then
  for f in "$HERMES_DEBUG_STALL"/stall-*; do
    [[ -f "$f" ]] && { echo "== stall report $f"; cat "$f"; }
  done
  # Repeat what failed last, so the end of the log names it.
  echo "== failed"
  grep -E '^(--- FAIL|FAIL|panic:|WARNING: DATA RACE)' "$testlog" || true
  exit 1
fi
rm -rf "$HERMES_DEBUG_STALL"
unset HERMES_DEBUG_STALL

echo "== fuzz targets (${fuzztime} each)"
# Every `func FuzzX(` in a _test.go file, run on its own package.
grep -rl --include='*_test.go' '^func Fuzz' . | while read -r file; do
  pkg="./$(dirname "${file#./}")"
  grep -o '^func Fuzz[A-Za-z0-9_]*' "$file" | sed 's/^func //' | while read -r target; do
    echo "-- $pkg $target"
    go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" "$pkg"
  done
done
echo "== all tests passed"
