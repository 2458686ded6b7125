package cli_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
)

// scriptConds are the custom [conditions] of the scripts; other _test.go files of
// this package may add theirs from init.
var scriptConds = map[string]func() bool{
	// [shareddata]: the real index files of ../shared/data/plugin-index are there
	// (scripts that use them start with `[!shareddata] skip`).
	"shareddata": func() bool {
		_, err := os.Stat(filepath.Join(sharedIndexDir(), "community-index.json"))
		return err == nil
	},
}

func scriptCondition(cond string) (bool, error) {
	if f, ok := scriptConds[cond]; ok {
		return f(), nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// sharedIndexDir is ../shared/data/plugin-index beside the repository (read in
// place, never copied into it); HERMES_SHARED_DATA overrides shared/data.
func sharedIndexDir() string {
	base := os.Getenv("HERMES_SHARED_DATA")
	if base == "" {
		base = filepath.Join("..", "..", "..", "shared", "data")
	}
	p, _ := filepath.Abs(filepath.Join(base, "plugin-index"))
	return p
}

// catalogserve PATH=SOURCE...: serve files on a loopback HTTP server for the
// catalog scripts and set $CATALOG_URL to its base URL. SOURCE is a file in $WORK,
// shared:NAME (a real index file from ../shared/data/plugin-index, read in place;
// guard the script with [!shareddata] skip), or one of html, huge (6 MiB) and 500.
// Every request is appended to $WORK/catalogserve.log.
func init() {
	scriptCmds["catalogserve"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) == 0 {
			ts.Fatalf("usage: catalogserve PATH=SOURCE...")
		}
		routes := map[string]string{}
		for _, a := range args {
			path, src, ok := strings.Cut(a, "=")
			if !ok || !strings.HasPrefix(path, "/") {
				ts.Fatalf("catalogserve: %q is not PATH=SOURCE", a)
			}
			if name, ok := strings.CutPrefix(src, "shared:"); ok {
				src = filepath.Join(sharedIndexDir(), name)
			}
			routes[path] = src
		}
		logPath := ts.MkAbs("catalogserve.log")
		var mu sync.Mutex
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			if f, err := os.OpenFile(logPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
				fmt.Fprintln(f, r.Method, r.URL.Path)
				f.Close()
			}
			mu.Unlock()
			src, ok := routes[r.URL.Path]
			switch {
			case !ok:
				http.NotFound(w, r)
			case src == "html":
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprint(w, "<!DOCTYPE html><html><body>Please sign in</body></html>")
			case src == "huge":
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(`{"plugins": [`))
				pad := []byte(strings.Repeat(" ", 1<<20))
				for i := 0; i < 6; i++ {
					if _, err := w.Write(pad); err != nil {
						return
					}
				}
			case src == "500":
				http.Error(w, "internal error", http.StatusInternalServerError)
			default:
				p := src
				if !filepath.IsAbs(p) {
					p = ts.MkAbs(p)
				}
				b, err := os.ReadFile(p)
				if err != nil {
					http.Error(w, err.Error(), http.StatusInternalServerError)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				w.Write(b)
			}
		}))
		ts.Defer(srv.Close)
		ts.Setenv("CATALOG_URL", srv.URL)
	}
}
