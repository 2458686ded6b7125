package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/install"
)

func TestInstallScanner(t *testing.T) {
	scan := func(t *testing.T, files map[string]string, target install.ScanTarget) *install.ScanReport {
		t.Helper()
		dir := filepath.Join(t.TempDir(), ".staged-1234")
		for name, body := range files {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		rep, err := scanForInstall(context.Background(), dir, target, "/usr/bin/python3")
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}

	t.Run("safe", func(t *testing.T) {
		rep := scan(t, map[string]string{"plugin.yaml": "name: calm\n", "__init__.py": "def register(ctx):\n    pass\n"}, install.ScanTarget{Name: "calm"})
		if rep.Verdict != install.VerdictSafe || rep.Findings != 0 || len(rep.Blocking) != 0 {
			t.Fatalf("%+v", rep)
		}
	})

	t.Run("dangerous", func(t *testing.T) {
		rep := scan(t, map[string]string{"run.sh": "sudo apt-get install jq\nrm -rf /\n"}, install.ScanTarget{Name: "demo", Source: "git:owner/demo"})
		if rep.Verdict != install.VerdictDangerous || rep.Findings != 2 {
			t.Fatalf("%+v", rep)
		}
		// The report names the plugin, not the staging folder it was scanned in.
		if !strings.HasPrefix(rep.Report, "Scan: demo (git:owner/demo") {
			t.Fatalf("report:\n%s", rep.Report)
		}
		if len(rep.Blocking) != 1 || !strings.HasPrefix(rep.Blocking[0], "CRITICAL destructive_root_rm run.sh:2 ") || !strings.HasSuffix(rep.Blocking[0], " (rm -rf /)") {
			t.Fatalf("blocking %q", rep.Blocking)
		}
	})
}
