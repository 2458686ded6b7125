# Evaluates nix/module.nix (or the flake's nixosModules.default) with the stub
# lib and pkgs and returns what a test checks, as plain data:
#
#   nix-instantiate --eval --strict --json -E \
#     'import ./nix/tests/eval.nix { storeDir = "/tmp/s"; modules = [ { services.hermes-agent.enable = true; } ]; }'
{ storeDir ? "/nix/store", modules ? [ ], viaFlake ? false }:

let
  lib = import ./stub-lib.nix;
  pkgs = import ./stub-pkgs.nix { inherit lib storeDir; };
  # A stub nixpkgs input: the flake only takes lib and legacyPackages from it.
  nixpkgs = { inherit lib; legacyPackages = lib.genAttrs lib.platforms.linux (_: pkgs) // lib.genAttrs lib.platforms.darwin (_: pkgs); };
  flake = (import ../../flake.nix).outputs { self = flake; inherit nixpkgs; };
  module = if viaFlake then flake.nixosModules.default else ../module.nix;
  eval = lib.evalModules { modules = [ module ] ++ modules; specialArgs = { inherit pkgs; }; };
  cfg = eval.config.services.hermes-agent;
  service = eval.config.systemd.services.hermes-agent or null;
  activation = eval.config.system.activationScripts.hermes-agent or null;
in
{
  inherit (eval) failedAssertions;
  inherit service;
  activation = if activation == null then null else activation.text;
  activationAfter = if activation == null then [ ] else activation.deps;
  users = eval.config.users;
  settings = cfg.settings;
  packageName = cfg.package.name;
  packagePath = cfg.package.outPath;
  vendorHash = cfg.package.vendorHash or null;
  flakePackage = flake.packages.x86_64-linux.default.name;
  # What the stub store must hold for the activation script to run.
  files = {
    "hermes-settings.json" = builtins.toJSON cfg.settings;
    "hermes-activate-plugins" = builtins.readFile ../activate-plugins.sh;
  };
}
