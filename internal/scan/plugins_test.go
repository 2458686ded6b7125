package scan

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSamplePlugins scans the whole plugins under testdata/plugins against the
// verdicts and pattern ids listed in testdata/plugins.txt.
func TestSamplePlugins(t *testing.T) {
	f, err := os.Open("testdata/plugins.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	seen := 0
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		seen++
		name, want, ids := fields[0], fields[1], fields[2:]
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", "plugins", name)
			var env []string
			if name == "provider-ok" {
				env = []string{"ACME_API_KEY"}
			}
			res, err := Scan(context.Background(), dir, Options{RequiresEnv: env, Source: "local", Python: testPython(t)})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != want {
				t.Errorf("verdict %s, want %s\n%s", res.Verdict, want, res.Report())
			}
			have := map[string]bool{}
			for _, f := range res.Findings {
				have[f.PatternID] = true
			}
			if len(ids) == 1 && ids[0] == "-" {
				if len(res.Findings) > 0 {
					t.Errorf("want no findings\n%s", res.Report())
				}
				return
			}
			for _, id := range ids {
				if !have[id] {
					t.Errorf("no %s finding\n%s", id, res.Report())
				}
			}
		})
	}
	if seen == 0 {
		t.Fatal("plugins.txt lists no plugin")
	}
}
