#!/usr/bin/env bash
# The whole test suite: vet, unit and end-to-end tests (race detector on), then every
# fuzz target for a short run. Used by the README and by CI (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

fuzztime="${FUZZTIME:-10s}"

echo "== go vet"
go vet ./...

echo "== go test -race"
go test -race -count=1 -timeout 30m ./...

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
