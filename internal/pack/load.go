package pack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// MaxSize caps a pack file or download (upstream's 1 MiB).
const MaxSize = 1 << 20

// FetchTimeout bounds a pack download as a whole (a variable for tests).
var FetchTimeout = 15 * time.Second

// HTTPClient fetches https packs. Tests replace it with a client that trusts their
// loopback TLS server; nothing else should.
var HTTPClient = &http.Client{
	CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if req.URL.Scheme != "https" {
			return fmt.Errorf("redirected to %s: pack URLs must stay on https://", req.URL.Redacted())
		}
		if len(via) >= 5 {
			return errors.New("too many redirects")
		}
		return nil
	},
}

// IsURL reports whether src is meant as a URL rather than a local path.
func IsURL(src string) bool { return strings.Contains(src, "://") }

// Load reads a pack from a local path (relative to cwd) or an https:// URL and
// parses it.
func Load(ctx context.Context, src, cwd string) (*Pack, error) {
	data, err := Read(ctx, src, cwd)
	if err != nil {
		return nil, err
	}
	if IsURL(src) {
		src = redactURL(src)
	}
	return Parse(data, src)
}

// Read returns a pack's bytes, at most MaxSize.
func Read(ctx context.Context, src, cwd string) ([]byte, error) {
	if IsURL(src) {
		if !strings.HasPrefix(strings.ToLower(src), "https://") {
			return nil, errf("Pack URLs must use https:// (or pass a local file path). Got %s", redactURL(src))
		}
		return fetch(ctx, src)
	}
	p := src
	if !filepath.IsAbs(p) && cwd != "" {
		p = filepath.Join(cwd, p)
	}
	f, err := os.Open(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, errf("Pack %s not found: give the path of a hermes-pack.yaml or an https:// URL.", src)
		}
		return nil, errf("Pack %s cannot be read: %v", src, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, errf("Pack %s cannot be read: %v", src, err)
	}
	if !st.Mode().IsRegular() {
		return nil, errf("Pack %s is not a regular file.", src)
	}
	return readCapped(f, src)
}

func readCapped(r io.Reader, src string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxSize+1))
	if err != nil {
		return nil, errf("Pack %s cannot be read: %v", src, err)
	}
	if len(data) > MaxSize {
		return nil, errf("Pack %s is larger than 1 MiB; a pack lists plugins, not their code.", src)
	}
	return data, nil
}

func fetch(ctx context.Context, src string) ([]byte, error) {
	shown := redactURL(src)
	ctx, cancel := context.WithTimeout(ctx, FetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
	if err != nil {
		return nil, errf("Pack URL %s is not valid: %v", shown, err)
	}
	req.Header.Set("Accept", "application/yaml, text/yaml, text/plain;q=0.9, */*;q=0.1")
	resp, err := HTTPClient.Do(req)
	if err != nil {
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, errf("Fetching pack %s timed out after %s.", shown, FetchTimeout)
		}
		return nil, errf("Fetching pack %s failed: %v", shown, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, errf("Fetching pack %s failed: HTTP %s.", shown, resp.Status)
	}
	if resp.ContentLength > MaxSize {
		return nil, errf("Pack %s is larger than 1 MiB (%d bytes); a pack lists plugins, not their code.", shown, resp.ContentLength)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxSize+1))
	if err != nil {
		if ctx.Err() != nil {
			return nil, errf("Fetching pack %s timed out after %s.", shown, FetchTimeout)
		}
		return nil, errf("Fetching pack %s failed: %v", shown, err)
	}
	if len(data) > MaxSize {
		return nil, errf("Pack %s is larger than 1 MiB; a pack lists plugins, not their code.", shown)
	}
	return data, nil
}

// redactURL drops user info and query from a URL before it is printed.
func redactURL(s string) string {
	if i := strings.Index(s, "://"); i >= 0 {
		rest := s[i+3:]
		if at := strings.IndexByte(rest, '@'); at >= 0 && at < strings.IndexAny(rest+"/", "/") {
			rest = rest[at+1:]
		}
		if q := strings.IndexAny(rest, "?#"); q >= 0 {
			rest = rest[:q]
		}
		return s[:i+3] + rest
	}
	return s
}
