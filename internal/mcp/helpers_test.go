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
	"github.com/hermes-go/hermes/internal/testutil/mcpservers"
)

var testReaper = reaper.New(reaper.Options{})

// serversDir is where scripts/mcp-servers.sh installed the npm servers.
func serversDir(t testing.TB) string {
	t.Helper()
	dir, err := mcpservers.Installed()
	if err != nil {
		if testing.Short() {
			t.Skip("MCP test servers not installed (-short)")
		}
		t.Fatal(err)
	}
	return dir
}

func serverJS(t testing.TB, pkg string) string {
	if t == nil {
		return mcpservers.Script(mcpservers.Dir(), pkg)
	}
	return mcpservers.Script(serversDir(t), pkg)
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
