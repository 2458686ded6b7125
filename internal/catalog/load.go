package catalog

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/renameio/v2"
	"github.com/hermes-go/hermes/internal/clock"
	"github.com/hermes-go/hermes/internal/limits"
)

// Upstream's defaults (reference §8.7, §8.8).
const (
	DefaultIndexURL   = "https://raw.githubusercontent.com/NousResearch/hermes-plugin-index/main/index.json"
	DefaultCatalogURL = "https://hermes-agent.nousresearch.com/docs/api/plugin-catalog.json"

	IndexCacheFile   = "plugin_index.json"
	CatalogCacheFile = "plugin-catalog.json"

	IndexTTL   = 24 * time.Hour
	CatalogTTL = 6 * time.Hour

	IndexTimeout   = 10 * time.Second
	CatalogTimeout = 5 * time.Second

	IndexMaxBytes   = 5 << 20
	CatalogMaxBytes = 2 << 20
)

// Config keys that override the remote URLs. plugins.index_url is upstream's;
// upstream has no key for the curated catalog's live URL, so plugins.catalog_url
// is ours (docs/DESIGN.md).
const (
	IndexURLKey   = "plugins.index_url"
	CatalogURLKey = "plugins.catalog_url"
)

// EnvOffline, when truthy (1/true/yes/on), stops every remote fetch: caches, then the
// seed. The test harness sets it so no test can reach the real network.
const EnvOffline = "HERMES_OFFLINE"

//go:embed seed.json
var seedCatalog []byte

// seedIndex is upstream's own community-index seed (see its _comment).
//
//go:embed seed_index.json
var seedIndex []byte

// Seed returns the catalog embedded in the binary (our own curated file).
func Seed() ([]Entry, []Removed) {
	e, r, _, err := ParseCatalog(seedCatalog)
	if err != nil {
		panic("catalog: embedded seed is invalid: " + err.Error())
	}
	return e, r
}

// SeedIndex returns the community-index entries embedded in the binary: those
// upstream ships in its own seed, so the names its documents use resolve offline.
func SeedIndex() []Entry {
	e, _, err := ParseIndex(seedIndex)
	if err != nil {
		panic("catalog: embedded index seed is invalid: " + err.Error())
	}
	return e
}

// Loader reads both sources through fresh cache → remote → stale cache → seed.
type Loader struct {
	// CacheDir is $HERMES_HOME/cache.
	CacheDir string
	// IndexURL and CatalogURL override the defaults ("" = default). An http:// URL
	// is fetched only from a loopback host.
	IndexURL, CatalogURL string
	// Offline skips the remotes (HERMES_OFFLINE).
	Offline bool
	// Refresh ignores fresh caches and fetches first (--refresh).
	Refresh bool
	// Client is used for fetches; nil builds one. Timeouts and size caps apply
	// either way.
	Client *http.Client
	// Now is the clock for cache ages (nil: clock.Now).
	Now func() time.Time

	// Limits, zero = upstream's defaults (tests shrink them).
	IndexTimeout, CatalogTimeout   time.Duration
	IndexMaxBytes, CatalogMaxBytes int64
}

type part struct {
	entries []Entry
	lazy    *lazyIndex // a snapshot-backed part instead of entries
	removed []Removed
	skipped []string
}

type sourceSpec struct {
	what    string // "plugin index" / "plugin catalog"
	file    string
	url     string
	ttl     time.Duration
	timeout time.Duration
	max     int64
	parse   func([]byte) (part, error)
}

func parseIndexPart(b []byte) (part, error) {
	e, w, err := ParseIndex(b)
	return part{entries: e, skipped: w}, err
}

func parseCatalogPart(b []byte) (part, error) {
	e, r, w, err := ParseCatalog(b)
	return part{entries: e, removed: r, skipped: w}, err
}

func or[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Load reads both sources and merges them: curated entries first, then the index.
// It never fails: what cannot be read is a warning and the next link of the chain
// is used, down to the embedded seed.
func (l *Loader) Load(ctx context.Context) *Catalog {
	c := &Catalog{}
	catSpec := sourceSpec{
		what: "plugin catalog", file: CatalogCacheFile, url: or(l.CatalogURL, DefaultCatalogURL), ttl: CatalogTTL,
		timeout: or(l.CatalogTimeout, CatalogTimeout), max: or(l.CatalogMaxBytes, CatalogMaxBytes), parse: parseCatalogPart,
	}
	idxSpec := sourceSpec{
		what: "plugin index", file: IndexCacheFile, url: or(l.IndexURL, DefaultIndexURL), ttl: IndexTTL,
		timeout: or(l.IndexTimeout, IndexTimeout), max: or(l.IndexMaxBytes, IndexMaxBytes), parse: parseIndexPart,
	}
	seedEntries, seedRemoved := Seed()
	// The two sources load side by side: a dead network costs one timeout, not two.
	var catRes partResult
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.loadPart(ctx, catSpec, &catRes)
	}()
	var idxRes partResult
	l.loadPart(ctx, idxSpec, &idxRes)
	<-done
	cat, idx := catRes.part, idxRes.part
	if cat == nil {
		cat = &part{entries: seedEntries}
	}
	if idx == nil {
		idx = &part{entries: SeedIndex()}
	}
	c.CatalogSource, c.IndexSource = catRes.source, idxRes.source
	c.Warnings = append(catRes.warnings, idxRes.warnings...)
	c.Fetched = catRes.fetched || idxRes.fetched
	c.entries = append(append(c.entries, cat.entries...), idx.entries...)
	for _, p := range []*part{cat, idx} {
		if p.lazy != nil {
			c.lazy = append(c.lazy, p.lazy)
		}
	}
	// The kill list is the union of ours and the live one (as upstream unions the
	// in-tree and live lists).
	c.Removed = append(append([]Removed{}, seedRemoved...), cat.removed...)
	c.Skipped = append(c.Skipped, append(cat.skipped, idx.skipped...)...)
	return c
}

// RetryAfterFailure is how long a failed fetch is not retried (unless --refresh):
// with the network down, every search would otherwise wait for the timeout.
const RetryAfterFailure = 10 * time.Minute

// failedSuffix names the marker file holding the URL whose fetch failed last; its
// mtime says when.
const failedSuffix = ".failed"

// partResult is what loading one source produced; part nil means "use the seed".
type partResult struct {
	part     *part
	source   string
	warnings []string
	fetched  bool
}

func (r *partResult) warn(format string, args ...any) {
	r.warnings = append(r.warnings, fmt.Sprintf(format, args...))
}

// loadPart walks the chain for one source.
func (l *Loader) loadPart(ctx context.Context, s sourceSpec, res *partResult) {
	res.part, res.source = l.walk(ctx, s, res)
}

func (l *Loader) walk(ctx context.Context, s sourceSpec, c *partResult) (*part, string) {
	cachePath := ""
	if l.CacheDir != "" {
		cachePath = filepath.Join(l.CacheDir, s.file)
	}
	now := clock.Now
	if l.Now != nil {
		now = l.Now
	}
	var stale *part
	if cachePath != "" {
		st, err := os.Stat(cachePath)
		switch {
		case err == nil:
			p, perr := readCache(cachePath, st, s.parse)
			if perr != nil {
				c.warn("cached %s %s is unreadable (%v); it will be replaced", s.what, cachePath, perr)
				break
			}
			if !l.Refresh && now().Sub(st.ModTime()) < s.ttl {
				return p, SourceCache
			}
			stale = p
		case !errors.Is(err, fs.ErrNotExist):
			c.warn("cannot read the cached %s: %v", s.what, err)
		}
	}
	marker := ""
	if cachePath != "" {
		marker = cachePath + failedSuffix
	}
	if !l.Offline && !l.Refresh && marker != "" {
		// The same URL failed a moment ago: do not wait for the network again (the
		// warning said so then). Another URL is tried at once.
		if st, err := os.Stat(marker); err == nil && now().Sub(st.ModTime()) < RetryAfterFailure && now().Sub(st.ModTime()) >= 0 {
			if b, err := os.ReadFile(marker); err == nil && string(b) == s.url {
				goto fallback
			}
		}
	}
	if !l.Offline {
		body, err := fetch(ctx, l.Client, s.url, s.timeout, s.max)
		if err == nil {
			var p part
			if p, err = s.parse(body); err == nil {
				if cachePath != "" {
					if werr := writeCache(cachePath, body); werr != nil {
						c.warn("cannot cache the %s: %v", s.what, werr)
					}
					_ = os.Remove(marker)
				}
				c.fetched = true
				return &p, SourceRemote
			}
		}
		c.warn("could not fetch the %s from %s: %v (not retried for %s; --refresh retries now)", s.what, redactURL(s.url), err, RetryAfterFailure)
		if marker != "" && os.MkdirAll(l.CacheDir, 0o700) == nil {
			_ = os.WriteFile(marker, []byte(s.url), 0o600)
			t := now()
			_ = os.Chtimes(marker, t, t)
		}
	}
fallback:
	if stale != nil {
		return stale, SourceCache
	}
	return nil, SourceSeed
}

// readCache parses a cache file through its snapshot when the snapshot still
// describes it (same size and modification time), else parses the JSON and writes
// a new snapshot for the next command.
func readCache(path string, st fs.FileInfo, parse func([]byte) (part, error)) (*part, error) {
	snap := path + snapshotSuffix
	if p, ok := readSnapshot(snap, st); ok {
		return p, nil
	}
	b, err := readLimited(path, limits.Index.MaxBytes) // the larger of the two caps; parse applies its own
	if err != nil {
		return nil, err
	}
	p, err := parse(b)
	if err != nil {
		return nil, err
	}
	// Best effort: without a snapshot the parsed entries serve this command.
	if writeSnapshot(snap, st, &p) == nil {
		if lp, ok := readSnapshot(snap, st); ok {
			return lp, nil
		}
	}
	return &p, nil
}

func writeCache(path string, body []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if err := renameio.WriteFile(path, body, 0o600); err != nil {
		return err
	}
	_ = os.Remove(path + snapshotSuffix)
	return nil
}

// remoteAllowed refuses plain http except to a loopback host: a tampered index
// could point installs at any repository.
func remoteAllowed(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%q is not a URL", raw)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		host := u.Hostname()
		if host == "localhost" {
			return nil
		}
		if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
			return nil
		}
		return fmt.Errorf("refusing plain http:// (use https://; http is accepted for loopback test servers only)")
	}
	return fmt.Errorf("unsupported URL scheme %q (use https://)", u.Scheme)
}

func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.User = nil
	u.RawQuery = ""
	return u.String()
}

// fetch GETs url with a whole-request timeout and a size cap.
func fetch(ctx context.Context, client *http.Client, raw string, timeout time.Duration, max int64) ([]byte, error) {
	if err := remoteAllowed(raw); err != nil {
		return nil, err
	}
	if client == nil {
		client = &http.Client{}
	}
	cl := *client
	cl.Timeout = timeout
	cl.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("too many redirects")
		}
		return remoteAllowed(req.URL.String())
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "hermes-go")
	resp, err := cl.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
			return nil, fmt.Errorf("no answer within %s", timeout)
		}
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %s", resp.Status)
	}
	if resp.ContentLength > max {
		return nil, fmt.Errorf("response of %d bytes is over the %d-byte limit", resp.ContentLength, max)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
			return nil, fmt.Errorf("no complete answer within %s", timeout)
		}
		return nil, err
	}
	if int64(len(body)) > max {
		return nil, fmt.Errorf("response is over the %d-byte limit", max)
	}
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(strings.ToLower(ct), "text/html") {
		return nil, ErrHTML
	}
	return body, nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Truthy is upstream's reading of boolean environment variables.
func Truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// readLimited reads at most limit+1 bytes of path: enough for the size cap to
// refuse a runaway file without holding all of it.
func readLimited(path string, limit int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, int64(limit)+1))
}
