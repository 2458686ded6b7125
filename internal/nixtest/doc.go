// Package nixtest holds the tests of the NixOS module and flake in nix/: the
// Nix files parse and evaluate (with the stub lib of nix/tests, since nixpkgs
// cannot be fetched here), and the activation the module generates runs
// against real directories with the real hermes. It has no code of its own.
package nixtest
