#!/usr/bin/env bash
# Prints the vendorHash nix/package.nix needs: the NAR hash (SRI form) of
# `go mod vendor`'s output, which is what buildGoModule's module derivation
# holds. --write stores it in nix/vendor-hash. Needs nix-hash (Debian nix-bin).
set -euo pipefail
cd "$(dirname "$0")/.."
tmp="$(mktemp -d "${TMPDIR:-/tmp}/hermes-vendor.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
go mod vendor -o "$tmp/vendor"
base32="$(nix-hash --type sha256 --base32 "$tmp/vendor")"
sri="$(nix --extra-experimental-features nix-command hash to-sri --type sha256 "$base32")"
if [[ "${1:-}" == "--write" ]]; then
  printf '%s\n' "$sri" >nix/vendor-hash
  echo "nix/vendor-hash: $sri"
else
  echo "$sri"
fi
