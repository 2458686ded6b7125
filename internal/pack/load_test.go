package pack

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const small = "name: p\nplugins: [{repo: o/r, ref: " + sha1 + "}]\n"

// useClient points HTTPClient at a loopback TLS server's trusting client for one test.
func useClient(t *testing.T, srv *httptest.Server) {
	old := HTTPClient
	c := srv.Client()
	c.CheckRedirect = old.CheckRedirect
	HTTPClient = c
	t.Cleanup(func() { HTTPClient = old })
}

func TestLoadURL(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok.yaml", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(small)) })
	mux.HandleFunc("/missing", http.NotFound)
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "2000000")
		w.Write([]byte(strings.Repeat("#", 100)))
	})
	mux.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) {
		// No Content-Length: the cap must hold while reading.
		for i := 0; i < 20; i++ {
			w.Write([]byte(strings.Repeat("#", 100_000) + "\n"))
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	mux.HandleFunc("/html", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<html><body>login</body></html>")) })
	mux.HandleFunc("/to-http", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:1/ok.yaml", http.StatusFound)
	})
	srv := httptest.NewTLSServer(mux)
	defer srv.Close()
	useClient(t, srv)
	old := FetchTimeout
	FetchTimeout = 300 * time.Millisecond
	defer func() { FetchTimeout = old }()

	ctx := context.Background()
	p, err := Load(ctx, srv.URL+"/ok.yaml?token=abc", "")
	if err != nil || p.Name != "p" || strings.Contains(p.Source, "token") {
		t.Fatalf("%v %+v", err, p)
	}
	cases := []struct{ path, want string }{
		{"/missing", "HTTP 404"},
		{"/big", "larger than 1 MiB"},
		{"/stream", "larger than 1 MiB"},
		{"/slow", "timed out"},
		{"/html", "must be a YAML mapping"},
		{"/to-http", "must stay on https://"},
	}
	for _, c := range cases {
		if _, err := Load(ctx, srv.URL+c.path, ""); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.path, err, c.want)
		}
	}
	for _, u := range []string{"http://example.com/p.yaml", "file:///etc/passwd", "ftp://h/p.yaml", "HTTP://x/y"} {
		if _, err := Load(ctx, u, ""); err == nil || !strings.Contains(err.Error(), "Pack URLs must use https:// (or pass a local file path).") {
			t.Errorf("%s: %v", u, err)
		}
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "p.yaml"), []byte(small), 0o644)
	if p, err := Load(context.Background(), "p.yaml", dir); err != nil || p.Name != "p" {
		t.Fatal(err)
	}
	if _, err := Load(context.Background(), "nope.yaml", dir); err == nil || !strings.Contains(err.Error(), "Pack nope.yaml not found") {
		t.Fatal(err)
	}
	if _, err := Load(context.Background(), dir, ""); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "big.yaml"), []byte(small+"#"+strings.Repeat("x", MaxSize)), 0o644)
	if _, err := Load(context.Background(), "big.yaml", dir); err == nil || !strings.Contains(err.Error(), "larger than 1 MiB") {
		t.Fatal(err)
	}
}
