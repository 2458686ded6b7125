package catalog

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const indexDoc = `{"schema_version": 1, "plugins": [
  {"name": "remote-one", "repo": "acme/remote-one", "ref": "` + sha1 + `", "tags": ["telegram"]},
  {"name": "shorty", "repo": "acme/shorty", "ref": "abc1234"}
]}`

const catalogDoc = `{"entries": [
  {"name": "curated-one", "repo": "https://example.com/acme/c1", "sha": "` + sha1 + `", "tier": "official"}
], "removed": [{"name": "evil", "reason": "steals tokens"}]}`

// server serves body for every path, counting hits; mode changes how.
func server(t *testing.T, mode, body string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch mode {
		case "html":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte("<!doctype html><title>Login</title>"))
		case "html-as-json":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte("\n  <html><body>proxy</body></html>"))
		case "slow":
			select {
			case <-stop:
			case <-r.Context().Done():
			case <-time.After(30 * time.Second):
			}
		case "huge":
			w.Header().Set("Content-Type", "application/json")
			chunk := []byte(strings.Repeat(" ", 64<<10))
			w.Write([]byte(`{"plugins": [`))
			for i := 0; i < 64; i++ { // 4 MiB, past a 1 MiB cap, no Content-Length
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		case "500":
			http.Error(w, "boom", http.StatusInternalServerError)
		default:
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(body))
		}
	}))
	t.Cleanup(func() { close(stop); srv.Close() })
	return srv, &hits
}

func loader(t *testing.T, cacheDir, indexURL, catalogURL string) *Loader {
	return &Loader{
		CacheDir: cacheDir, IndexURL: indexURL, CatalogURL: catalogURL,
		IndexTimeout: 300 * time.Millisecond, CatalogTimeout: 300 * time.Millisecond,
		IndexMaxBytes: 1 << 20, CatalogMaxBytes: 1 << 20,
	}
}

func names(c *Catalog) string {
	var n []string
	for _, e := range c.All() {
		n = append(n, e.Name)
	}
	sort.Strings(n)
	return strings.Join(n, ",")
}

func TestLoadRemoteThenCache(t *testing.T) {
	ctx := context.Background()
	idx, idxHits := server(t, "", indexDoc)
	cat, catHits := server(t, "", catalogDoc)
	dir := t.TempDir()
	l := loader(t, dir, idx.URL, cat.URL)

	c := l.Load(ctx)
	if c.IndexSource != SourceRemote || c.CatalogSource != SourceRemote || c.Source() != SourceRemote || !c.Fetched {
		t.Fatalf("sources %s/%s", c.CatalogSource, c.IndexSource)
	}
	if names(c) != "curated-one,remote-one" || len(c.Skipped) != 1 || !strings.Contains(c.Skipped[0], "short SHA") {
		t.Fatalf("entries %s skipped %q", names(c), c.Skipped)
	}
	if _, ok := c.RemovedFor("evil", ""); !ok {
		t.Fatal("live kill list not applied")
	}
	for _, f := range []string{IndexCacheFile, CatalogCacheFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("cache %s not written: %v", f, err)
		}
	}
	// Fresh caches: no fetch; the second read goes through the snapshot.
	for i := 0; i < 2; i++ {
		c = l.Load(ctx)
		if c.Source() != SourceCache || names(c) != "curated-one,remote-one" || len(c.Skipped) != 1 {
			t.Fatalf("cached read %d: %s %s %q", i, c.Source(), names(c), c.Skipped)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, IndexCacheFile+snapshotSuffix)); err != nil {
		t.Fatalf("no snapshot: %v", err)
	}
	if idxHits.Load() != 1 || catHits.Load() != 1 {
		t.Fatalf("hits %d %d", idxHits.Load(), catHits.Load())
	}
	// --refresh fetches again.
	l.Refresh = true
	if c = l.Load(ctx); c.Source() != SourceRemote || idxHits.Load() != 2 {
		t.Fatalf("refresh: %s hits %d", c.Source(), idxHits.Load())
	}
	// Stale cache + a dead remote: the stale cache, with a warning.
	l.Refresh = false
	l.Now = func() time.Time { return time.Now().Add(25 * time.Hour) }
	l.IndexURL, l.CatalogURL = "http://127.0.0.1:1/index.json", "http://127.0.0.1:1/catalog.json"
	c = l.Load(ctx)
	if c.Source() != SourceCache || names(c) != "curated-one,remote-one" || len(c.Warnings) != 2 {
		t.Fatalf("stale: %s %s %q", c.Source(), names(c), c.Warnings)
	}
}

func TestLoadBadRemotes(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ mode, want string }{
		{"html", "HTML page"},
		{"html-as-json", "HTML page"},
		{"slow", "no answer within 300ms"},
		{"huge", "over the 1048576-byte limit"},
		{"500", "HTTP 500"},
		{"", "not JSON"}, // body "garbage"
	} {
		t.Run(or(tc.mode, "garbage"), func(t *testing.T) {
			srv, _ := server(t, tc.mode, "garbage")
			dir := t.TempDir()
			start := time.Now()
			c := loader(t, dir, srv.URL+"/index.json", srv.URL+"/catalog.json").Load(ctx)
			if time.Since(start) > 5*time.Second {
				t.Fatalf("took %v: the timeout did not hold", time.Since(start))
			}
			// Nothing usable: the seeds, and a warning saying why.
			seed, _ := Seed()
			if c.Source() != SourceSeed || c.Len() != len(seed)+len(SeedIndex()) {
				t.Fatalf("source %s entries %s", c.Source(), names(c))
			}
			if len(c.Warnings) != 2 || !strings.Contains(c.Warnings[0], tc.want) {
				t.Fatalf("warnings %q, want %q", c.Warnings, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, IndexCacheFile)); err == nil {
				t.Fatal("a bad answer was cached")
			}
		})
	}
}

func TestLoadCorruptCache(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, f := range []string{IndexCacheFile, CatalogCacheFile} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(`{"plugins": [ {"name": "trunc`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Offline: reported, then the seed.
	l := loader(t, dir, "", "")
	l.Offline = true
	c := l.Load(ctx)
	if c.Source() != SourceSeed || len(c.Warnings) != 2 || !strings.Contains(c.Warnings[0], "is unreadable") {
		t.Fatalf("offline corrupt: %s %q", c.Source(), c.Warnings)
	}
	// Online: refetched and replaced.
	idx, _ := server(t, "", indexDoc)
	cat, _ := server(t, "", catalogDoc)
	l = loader(t, dir, idx.URL, cat.URL)
	c = l.Load(ctx)
	if c.Source() != SourceRemote || names(c) != "curated-one,remote-one" {
		t.Fatalf("online corrupt: %s %s %q", c.Source(), names(c), c.Warnings)
	}
	c = l.Load(ctx)
	if c.Source() != SourceCache || len(c.Warnings) != 0 {
		t.Fatalf("replaced cache: %s %q", c.Source(), c.Warnings)
	}
}

func TestOfflineNeverFetches(t *testing.T) {
	srv, hits := server(t, "", indexDoc)
	l := loader(t, t.TempDir(), srv.URL, srv.URL)
	l.Offline = true
	l.Refresh = true
	c := l.Load(context.Background())
	if hits.Load() != 0 || c.Source() != SourceSeed || len(c.Warnings) != 0 {
		t.Fatalf("hits %d source %s warnings %q", hits.Load(), c.Source(), c.Warnings)
	}
}

func TestRemoteURLPolicy(t *testing.T) {
	for url, ok := range map[string]bool{
		"https://example.com/x.json": true, "http://127.0.0.1:8080/x": true, "http://localhost/x": true,
		"http://[::1]:9/x": true, "http://example.com/x.json": false, "file:///etc/passwd": false, "ftp://x/y": false, "nonsense": false,
	} {
		if err := remoteAllowed(url); (err == nil) != ok {
			t.Errorf("remoteAllowed(%q) = %v", url, err)
		}
	}
}

func TestSnapshotInvalidation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, IndexCacheFile)
	if err := os.WriteFile(path, []byte(indexDoc), 0o600); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	// Parsing the JSON writes the snapshot, and the command reads through it.
	p, err := readCache(path, st, parseIndexPart)
	if err != nil || p.lazy == nil || p.lazy.n != 1 {
		t.Fatal(p, err)
	}
	snap, ok := readSnapshot(path+snapshotSuffix, st)
	if !ok || snap.lazy == nil || snap.lazy.n != 1 || len(snap.skipped) != 1 {
		t.Fatalf("snapshot %+v %v", snap, ok)
	}
	if e := snap.lazy.all(); len(e) != 1 || e[0].Ref != sha1 || e[0].Tags[0] != "telegram" || e[0].Name != "remote-one" {
		t.Fatalf("snapshot entries %+v", e)
	}
	// Another cache file (other size or mtime): the snapshot no longer applies.
	os.WriteFile(path, []byte(`[{"name":"other","repo":"o/r","ref":"`+sha1+`"}]`), 0o600)
	os.Chtimes(path, time.Now().Add(time.Minute), time.Now().Add(time.Minute))
	st2, _ := os.Stat(path)
	if _, ok := readSnapshot(path+snapshotSuffix, st2); ok {
		t.Fatal("stale snapshot accepted")
	}
	// The rebuilt snapshot answers searches and lookups like the JSON.
	p, _ = readCache(path, st2, parseIndexPart)
	c := &Catalog{lazy: []*lazyIndex{p.lazy}}
	if all := c.All(); len(all) != 1 || all[0].Name != "other" {
		t.Fatalf("got %+v", all)
	}
	if r := c.Search("othr", ""); len(r) != 1 || r[0].Entry.Repo != "o/r" {
		t.Fatalf("lazy search %+v", r)
	}
	if e, err := c.Lookup("OTHER"); err != nil || e.Ref != sha1 {
		t.Fatalf("lazy lookup %v %v", e, err)
	}
	// A damaged snapshot is ignored, every byte of it.
	b, _ := os.ReadFile(path + snapshotSuffix)
	for i := len(snapshotMagic); i < len(b); i++ {
		bad := append([]byte{}, b...)
		bad[i] ^= 0xff
		os.WriteFile(path+snapshotSuffix, bad, 0o600)
		if _, ok := readSnapshot(path+snapshotSuffix, st2); ok {
			t.Fatalf("byte %d: damaged snapshot accepted", i)
		}
	}
	os.WriteFile(path+snapshotSuffix, b[:len(b)-3], 0o600)
	if _, ok := readSnapshot(path+snapshotSuffix, st2); ok {
		t.Fatal("truncated snapshot accepted")
	}
}

// A snapshot truncated in place under a running search (hermes never does that;
// a user might) faults on the mapping: the search goes on without it.
func TestSnapshotTruncatedWhileMapped(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, IndexCacheFile)
	if err := os.WriteFile(path, []byte(indexDoc), 0o600); err != nil {
		t.Fatal(err)
	}
	l := &Loader{CacheDir: dir, Offline: true}
	l.Load(context.Background()) // parses the JSON, writes the snapshot
	c := l.Load(context.Background())
	if len(c.lazy) != 1 {
		t.Fatalf("not read through the snapshot")
	}
	if err := os.Truncate(path+snapshotSuffix, 0); err != nil {
		t.Fatal(err)
	}
	r := c.Search("hello", "")
	if len(r) != 1 || r[0].Entry.Name != "hello-world" || len(c.lazy) != 0 {
		t.Fatalf("after truncation: %+v lazy %d", r, len(c.lazy))
	}
	if !strings.Contains(strings.Join(c.Warnings, "\n"), "changed while it was read") {
		t.Fatalf("warnings %q", c.Warnings)
	}
}

// A failed fetch is not retried for a while (every search would wait for the
// timeout), unless the URL changed or --refresh asks.
func TestFailedFetchBackoff(t *testing.T) {
	ctx := context.Background()
	srv, hits := server(t, "500", "")
	dir := t.TempDir()
	l := loader(t, dir, srv.URL+"/index.json", srv.URL+"/catalog.json")
	if c := l.Load(ctx); len(c.Warnings) != 2 || !strings.Contains(c.Warnings[0], "not retried for 10m0s") || hits.Load() != 2 {
		t.Fatalf("first: %q hits %d", c.Warnings, hits.Load())
	}
	if c := l.Load(ctx); len(c.Warnings) != 0 || c.Source() != SourceSeed || hits.Load() != 2 {
		t.Fatalf("second: %q hits %d", c.Warnings, hits.Load())
	}
	l.IndexURL = srv.URL + "/other.json"
	if l.Load(ctx); hits.Load() != 3 {
		t.Fatalf("a new URL is tried at once: hits %d", hits.Load())
	}
	l.Refresh = true
	if l.Load(ctx); hits.Load() != 5 {
		t.Fatalf("--refresh retries: hits %d", hits.Load())
	}
	l.Refresh = false
	l.Now = func() time.Time { return time.Now().Add(11 * time.Minute) }
	if l.Load(ctx); hits.Load() != 7 {
		t.Fatalf("retried after the pause: hits %d", hits.Load())
	}
}

// Upstream's own seed entries ship in the binary: its documents' names resolve
// offline, from the index seed.
func TestSeedIndexOffline(t *testing.T) {
	if n := len(SeedIndex()); n != 6 {
		t.Fatalf("index seed has %d entries, want upstream's 6", n)
	}
	c := (&Loader{CacheDir: t.TempDir(), Offline: true}).Load(context.Background())
	e, err := c.Lookup("hermes-media-studio")
	if err != nil {
		t.Fatal(err)
	}
	if e.Origin != OriginIndex || e.GitURL() != "https://github.com/NousResearch/hermes-media-studio.git" ||
		e.Ref != "e8d59971d2b7901405b39dac7b03bdd616272d0d" {
		t.Fatalf("entry %+v", e)
	}
	if c.IndexSource != SourceSeed || c.CatalogSource != SourceSeed {
		t.Fatalf("sources %q %q", c.CatalogSource, c.IndexSource)
	}
}
