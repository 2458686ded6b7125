package mcp

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/reaper"
)

var testReaper = reaper.New(reaper.Options{})

// serversDir is where scripts/mcp-servers.sh installed the npm servers.
func serversDir(t testing.TB) string {
	t.Helper()
	dir := defaultServersDir()
	if _, err := os.Stat(filepath.Join(dir, ".installed")); err != nil {
		if testing.Short() {
			t.Skip("MCP test servers not installed (-short)")
		}
		t.Fatalf("the MCP test servers are not installed in %s: run scripts/mcp-servers.sh --install-only (or set HERMES_MCP_SERVERS)", dir)
	}
	return dir
}

func defaultServersDir() string {
	dir := os.Getenv("HERMES_MCP_SERVERS")
	if dir == "" {
		cache := os.Getenv("HERMES_TOOLS_CACHE")
		if cache == "" {
			base := os.Getenv("XDG_CACHE_HOME")
			if base == "" {
				base = filepath.Join(os.Getenv("HOME"), ".cache")
			}
			cache = filepath.Join(base, "hermes-tools")
		}
		dir = filepath.Join(cache, "mcp-servers-2026.8.31")
	}
	return dir
}

func serverJS(t testing.TB, pkg string) string {
	if t == nil {
		return filepath.Join(defaultServersDir(), "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
	}
	return filepath.Join(serversDir(t), "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
}

func badServer(t testing.TB) string {
	p, err := filepath.Abs(filepath.Join("testdata", "badserver.py"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// lines collects what servers write to stderr.
type lines struct {
	mu  sync.Mutex
	all []string
}

func (l *lines) add(server, line string) {
	l.mu.Lock()
	l.all = append(l.all, server+": "+line)
	l.mu.Unlock()
}

func (l *lines) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.all, "\n")
}

func newTestManager(t *testing.T, servers ...*ServerConfig) (*Manager, *lines) {
	t.Helper()
	for _, s := range servers {
		if s.Timeout == 0 {
			s.Timeout = 10 * time.Second
		}
		if s.ConnectTimeout == 0 {
			s.ConnectTimeout = 20 * time.Second
		}
		if s.Trust == "" {
			s.Trust = TrustFull
		}
		if s.Transport == "" {
			s.Transport = "stdio"
			if s.URL != "" {
				s.Transport = "http"
			}
		}
		s.Enabled, s.Resources, s.Prompts = true, true, true
	}
	l := &lines{}
	m := New(Options{Config: &Config{Servers: servers}, Reaper: testReaper, Environ: append(os.Environ(), "LEAK_ME=should-not-pass"), Stderr: l.add,
		Sleep: func(context.Context, time.Duration) error { return nil }})
	t.Cleanup(m.Close)
	return m, l
}

func nodePath(t testing.TB) string {
	p, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is needed for the MCP server tests")
	}
	return p
}

func python(t testing.TB) string {
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed for the MCP fault tests")
	}
	return p
}
