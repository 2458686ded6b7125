# The hermes binary, built from this repository with the Go toolchain of
# nixpkgs. go.mod asks for Go 1.26: use a nixpkgs whose buildGoModule has it
# (or pass buildGoModule = pkgs.buildGo126Module where that exists).
{ lib, buildGoModule }:

buildGoModule {
  pname = "hermes";
  version = "0.1.0";

  src = lib.cleanSource ../.;

  # The NAR hash of `go mod vendor`'s output. go.mod changed? Run
  # scripts/nix-vendor-hash.sh --write; internal/nixtest fails until then.
  vendorHash = lib.fileContents ./vendor-hash;

  subPackages = [ "cmd/hermes" ];

  # The suite starts Python plugins, git and npm's MCP servers: it runs in CI
  # (.ci/run), not in the Nix sandbox.
  doCheck = false;

  ldflags = [ "-s" "-w" ];

  meta = {
    description = "Hermes Agent plugin host and messaging gateway, in Go";
    mainProgram = "hermes";
    platforms = lib.platforms.linux ++ lib.platforms.darwin;
  };
}
