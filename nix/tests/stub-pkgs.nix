# Stand-ins for the few nixpkgs packages and builders the module and
# package.nix use. A "store path" is storeDir/NAME; the Go test makes the ones
# the activation script runs (hermes, the scripts it writes) real files there.
{ lib, storeDir }:

let
  drv = name: extra: { type = "derivation"; inherit name; outPath = "${storeDir}/${name}"; } // extra;
  pkgs = {
    writeText = name: text: drv name { inherit text; };
    writeShellScript = name: text: drv name { inherit text; executable = true; };
    callPackage = fn: args:
      let f = if builtins.isFunction fn then fn else import fn; in
      f (builtins.intersectAttrs (builtins.functionArgs f) (pkgs // { inherit lib; }) // args);
    # buildGoModule's result keeps its inputs, so tests can look at them.
    buildGoModule = attrs: drv "${attrs.pname}-${attrs.version}" {
      inherit (attrs) pname version vendorHash subPackages;
      meta = attrs.meta or { };
    };
    python312 = drv "python3-3.12" {
      withPackages = f: drv "python3-3.12-env" { packages = map (p: p.name) (f { }); };
    };
    runtimeShell = "/bin/sh";
    stdenv.hostPlatform.system = "x86_64-linux";
  };
in
pkgs
