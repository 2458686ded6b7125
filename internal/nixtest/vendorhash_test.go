package nixtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// nix/package.nix's vendorHash must be the hash of what go.mod vendors, or
// the flake does not build. Someone who changes go.mod learns it here, with
// the one command that fixes it.
func TestVendorHashMatchesGoMod(t *testing.T) {
	requireNix(t, "nix-hash")
	requireNix(t, "nix")
	cmd := exec.Command("bash", filepath.Join(repo, "scripts", "nix-vendor-hash.sh"))
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scripts/nix-vendor-hash.sh: %v\n%s", err, out)
	}
	want, err := os.ReadFile(filepath.Join(repo, "nix", "vendor-hash"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != strings.TrimSpace(string(want)) {
		t.Errorf("nix/vendor-hash is %s but go.mod's modules hash to %s: run scripts/nix-vendor-hash.sh --write and commit nix/vendor-hash", strings.TrimSpace(string(want)), got)
	}
}
