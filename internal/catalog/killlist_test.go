package catalog

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestKillListMatch(t *testing.T) {
	kl := KillList{
		{Name: "evil", Reason: "steals tokens", Date: "2026-09-01"},
		{Repo: "https://github.com/Bad/Actor.git/"},
		{Repo: "https://example.com/mono#plugins/bad"},
	}
	tests := []struct {
		name   string
		names  []string
		source string
		want   bool
	}{
		{"name", []string{"other", "evil"}, "", true},
		{"name case-insensitive", []string{" EVIL "}, "", true},
		{"repo as GitHub shorthand", nil, "bad/actor", true},
		{"repo as clone URL with subdir", []string{"x"}, "https://github.com/bad/actor.git#plugins/x", true},
		{"repo without .git, upper case", nil, "HTTPS://GITHUB.COM/BAD/ACTOR", true},
		{"another repo", []string{"good"}, "https://github.com/good/actor", false},
		{"the folder a row names", nil, "https://example.com/mono.git#plugins/bad/", true},
		{"another folder of that repo", nil, "https://example.com/mono#plugins/good", false},
		{"the repo's root", nil, "https://example.com/mono", false},
		{"nothing", nil, "", false},
		{"empty name never matches a repo row", []string{""}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, got := kl.Match(tt.names, tt.source); got != tt.want {
				t.Fatalf("Match(%q, %q) = %v, want %v", tt.names, tt.source, got, tt.want)
			}
		})
	}
}

func TestRemovedWhy(t *testing.T) {
	for _, tt := range []struct {
		r    Removed
		want string
	}{
		{Removed{Reason: "leaked tokens", Date: "2026-09-01"}, " on 2026-09-01: leaked tokens"},
		{Removed{Reason: "leaked tokens"}, ": leaked tokens"},
		{Removed{Date: "2026-09-01"}, " on 2026-09-01: no reason given"},
	} {
		if got := tt.r.Why(); got != tt.want {
			t.Errorf("%+v: Why() = %q, want %q", tt.r, got, tt.want)
		}
	}
}

// The kill list at load comes from the cached catalog, however old, without a
// fetch, read through its snapshot as search reads it.
func TestLoadKillListFromCache(t *testing.T) {
	dir := t.TempDir()
	if got := LoadKillList(dir); len(got) != 0 {
		t.Fatalf("no cache: %v", got)
	}
	path := filepath.Join(dir, CatalogCacheFile)
	if err := os.WriteFile(path, []byte(catalogDoc), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-30 * 24 * time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	for _, round := range []string{"parsed", "from the snapshot"} {
		kl := LoadKillList(dir)
		if r, ok := kl.Match([]string{"evil"}, ""); !ok || r.Reason != "steals tokens" {
			t.Fatalf("%s: kill list %v", round, kl)
		}
	}
	if _, err := os.Stat(path + snapshotSuffix); err != nil {
		t.Fatalf("no snapshot written: %v", err)
	}
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := LoadKillList(dir); len(got) != 0 {
		t.Fatalf("corrupt cache: %v", got)
	}
}

// BenchmarkLoadKillList is what the kill list adds to every `plugins list`: with
// no cached catalog (one stat beside the seed), and with a cached catalog of 200
// entries and 20 kill-list rows read through its snapshot.
func BenchmarkLoadKillList(b *testing.B) {
	b.Run("no-cache", func(b *testing.B) {
		dir := b.TempDir()
		for b.Loop() {
			LoadKillList(dir)
		}
	})
	b.Run("cache-200", func(b *testing.B) {
		dir := b.TempDir()
		var doc strings.Builder
		doc.WriteString(`{"entries": [`)
		for i := 0; i < 200; i++ {
			if i > 0 {
				doc.WriteString(",")
			}
			fmt.Fprintf(&doc, `{"name": "p%03d", "repo": "https://github.com/acme/p%03d", "sha": "%s", "description": "plugin %d", "tier": "community"}`, i, i, sha1, i)
		}
		doc.WriteString(`], "removed": [`)
		for i := 0; i < 20; i++ {
			if i > 0 {
				doc.WriteString(",")
			}
			fmt.Fprintf(&doc, `{"name": "gone%02d", "reason": "reason %d", "date": "2026-09-01"}`, i, i)
		}
		doc.WriteString(`]}`)
		if err := os.WriteFile(filepath.Join(dir, CatalogCacheFile), []byte(doc.String()), 0o600); err != nil {
			b.Fatal(err)
		}
		if n := len(LoadKillList(dir)); n != 20 {
			b.Fatalf("%d rows", n)
		}
		for b.Loop() {
			LoadKillList(dir)
		}
	})
}
