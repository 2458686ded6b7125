package discovery

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// keys lists "<key>@<dist version>" of the entry-point candidates.
func epKeys(cands []*Candidate) []string {
	var out []string
	for _, c := range cands {
		out = append(out, c.Key+"@"+c.EntryPoint.DistVersion)
	}
	return out
}

func TestEntryPointCache(t *testing.T) {
	base := t.TempDir()
	site := filepath.Join(base, "site")
	cacheFile := filepath.Join(base, "cache", "entry-points.json")
	tree(t, site, map[string]string{
		"alpha-1.0.dist-info/entry_points.txt": "[hermes_agent.plugins]\nalpha = alpha\n",
		"alpha/__init__.py":                    "",
		"other-1.0.dist-info/METADATA":         "Name: other\n",
	})
	scan := func() []string {
		t.Helper()
		c, w := scanEntryPoints([]string{site}, cacheFile)
		if len(w) > 0 {
			t.Fatalf("warnings: %v", w)
		}
		return epKeys(c)
	}
	if got := scan(); !reflect.DeepEqual(got, []string{"alpha@1.0"}) {
		t.Fatalf("first scan: %v", got)
	}
	if _, err := os.Stat(cacheFile); err != nil {
		t.Fatalf("no cache written: %v", err)
	}
	// Served from the cache: a distribution dir hidden from the scan (same site
	// mtime) does not change the answer.
	if got := scan(); !reflect.DeepEqual(got, []string{"alpha@1.0"}) {
		t.Fatalf("cached scan: %v", got)
	}

	// Installing a distribution changes the site directory: rescanned.
	tree(t, site, map[string]string{"beta-2.0.dist-info/entry_points.txt": "[hermes_agent.plugins]\nbeta = beta\n"})
	bump(t, site)
	if got := scan(); !reflect.DeepEqual(got, []string{"alpha@1.0", "beta@2.0"}) {
		t.Fatalf("after install: %v", got)
	}

	// Editing an entry_points.txt in place is noticed too.
	ep := filepath.Join(site, "alpha-1.0.dist-info", "entry_points.txt")
	if err := os.WriteFile(ep, []byte("[hermes_agent.plugins]\nalpha2 = alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bump(t, ep)
	if got := scan(); !reflect.DeepEqual(got, []string{"alpha2@1.0", "beta@2.0"}) {
		t.Fatalf("after edit: %v", got)
	}

	// A distribution whose entry_points.txt had none of our groups gains one in
	// place (legacy editable installs rewrite egg-info files): noticed, though the
	// site directory did not change.
	late := filepath.Join(site, "late-0.1.dist-info", "entry_points.txt")
	tree(t, site, map[string]string{"late-0.1.dist-info/entry_points.txt": "[console_scripts]\nlate = late:main\n"})
	bump(t, site)
	if got := scan(); !reflect.DeepEqual(got, []string{"alpha2@1.0", "beta@2.0"}) {
		t.Fatalf("with late's console scripts only: %v", got)
	}
	f, err := os.OpenFile(late, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("[hermes_agent.plugins]\nlate = alpha\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got := scan(); !reflect.DeepEqual(got, []string{"alpha2@1.0", "beta@2.0", "late@0.1"}) {
		t.Fatalf("after appending to late's entry_points.txt: %v", got)
	}

	// A distribution that had no entry_points.txt gets one.
	if err := os.WriteFile(filepath.Join(site, "other-1.0.dist-info", "entry_points.txt"), []byte("[hermes_agent.plugins]\nother = alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := scan(); !reflect.DeepEqual(got, []string{"alpha2@1.0", "beta@2.0", "late@0.1", "other@1.0"}) {
		t.Fatalf("after other gained an entry_points.txt: %v", got)
	}

	// A corrupt cache is ignored, not fatal.
	if err := os.WriteFile(cacheFile, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := scan(); !reflect.DeepEqual(got, []string{"alpha2@1.0", "beta@2.0", "late@0.1", "other@1.0"}) {
		t.Fatalf("with a corrupt cache: %v", got)
	}
}

// bump moves a path's modification time forward, so the test does not depend on the
// file system's timestamp granularity.
func bump(t *testing.T, path string) {
	t.Helper()
	later := time.Now().Add(time.Duration(2+len(path)%3) * time.Second)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
}
