#!/usr/bin/env bash
# Runs golangci-lint at the version hermes pins, installing it first (go install
# through the module proxy) into a cache kept across runs. With --install-only it
# only makes sure the binary is there (.ci/run does that before the tests).
set -euo pipefail
cd "$(dirname "$0")/.."

version=v2.15.0
dir="${HERMES_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hermes-tools}/golangci-lint-$version"
bin="$dir/golangci-lint"
if [[ ! -x "$bin" ]]; then
  echo "installing golangci-lint $version into $dir"
  mkdir -p "$dir"
  GOBIN="$dir" go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$version"
fi
if [[ "${1:-}" == "--install-only" ]]; then
  exit 0
fi
exec "$bin" run "$@" ./...
