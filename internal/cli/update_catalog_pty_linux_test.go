package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hermes-go/hermes/internal/app"
	"github.com/hermes-go/hermes/internal/testutil/pty"
)

// TestCatalogUpdateConfirmsGrowthOnATerminal: when the catalog re-pins an installed
// plugin to a commit that declares new tools or hooks, `plugins update` asks on the
// terminal (upstream's "Apply this update? [y/N]"); yes re-pins, no changes nothing.
// The answer is typed into a real pseudo-terminal.
func TestCatalogUpdateConfirmsGrowthOnATerminal(t *testing.T) {
	for _, tt := range []struct {
		answer  string
		code    int
		applied bool
	}{{"y\n", 0, true}, {"n\n", 1, false}} {
		t.Run(strings.TrimSpace(tt.answer), func(t *testing.T) {
			root := t.TempDir()
			first, grown, bare := grownRepo(t, root)
			if err := os.WriteFile(filepath.Join(root, ".gitconfig"),
				[]byte("[url \"file://"+bare+"\"]\n\tinsteadOf = https://example.com/acme/relay\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			var pin atomic.Value
			pin.Store(first)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				if r.URL.Path == "/index.json" {
					w.Write([]byte(`{"plugins": []}`))
					return
				}
				w.Write([]byte(`{"entries": [{"name": "relay", "repo": "https://example.com/acme/relay", "subdir": "plugins/relay", "sha": "` +
					pin.Load().(string) + `", "tier": "official"}], "removed": []}`))
			}))
			defer srv.Close()

			master, tty := pty.Open(t)
			hh := filepath.Join(root, ".hermes")
			env := map[string]string{"HOME": root, "HERMES_HOME": hh, "PATH": os.Getenv("PATH")}
			var out bytes.Buffer
			f := &app.Factory{
				IO:  &app.IOStreams{In: tty, Out: &out, Err: &out, InTTY: true, OutTTY: true},
				Env: func(k string) string { return env[k] },
				Cwd: root,
			}
			ctx := context.Background()
			for _, args := range [][]string{
				{"config", "set", "plugins.catalog_url", srv.URL + "/catalog.json"},
				{"config", "set", "plugins.index_url", srv.URL + "/index.json"},
				{"plugins", "install", "relay", "--no-enable"},
			} {
				if code := Run(ctx, f, args); code != 0 {
					t.Fatalf("%v: exit %d\n%s", args, code, out.String())
				}
			}

			pin.Store(grown)
			out.Reset()
			if _, err := master.Write([]byte(tt.answer)); err != nil {
				t.Fatal(err)
			}
			code := Run(ctx, f, []string{"plugins", "update", "relay"})
			o := out.String()
			if code != tt.code {
				t.Fatalf("update: exit %d, want %d\n%s", code, tt.code, o)
			}
			for _, want := range []string{"  new tools: relay_wipe\n", "  new hooks: pre_tool_call\n", "  Apply this update? [y/N]: "} {
				if !strings.Contains(o, want) {
					t.Errorf("output lacks %q:\n%s", want, o)
				}
			}
			meta, err := os.ReadFile(filepath.Join(hh, "plugins", ".install-metadata.json"))
			if err != nil {
				t.Fatal(err)
			}
			manifest, err := os.ReadFile(filepath.Join(hh, "plugins", "relay", "plugin.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(meta), `"revision": "`+grown+`"`); got != tt.applied {
				t.Errorf("re-pinned to the new commit: %v, want %v\n%s", got, tt.applied, meta)
			}
			if got := strings.Contains(string(manifest), "relay_wipe"); got != tt.applied {
				t.Errorf("new tree in place: %v, want %v", got, tt.applied)
			}
			if tt.applied && !strings.Contains(o, "✓ Plugin relay updated") {
				t.Errorf("output:\n%s", o)
			}
			if !tt.applied && !strings.Contains(o, "Update not applied; relay stays at "+first[:12]) {
				t.Errorf("output:\n%s", o)
			}
		})
	}
}

// grownRepo makes a bare repository whose plugin relay declares one tool and one
// hook at its first commit and more at its second; it returns both commits.
func grownRepo(t *testing.T, root string) (first, grown, bare string) {
	t.Helper()
	src := filepath.Join(root, "src")
	dir := filepath.Join(src, "plugins", "relay")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	git := func(dir string, args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t",
			"GIT_COMMITTER_EMAIL=t@e", "GIT_CONFIG_NOSYSTEM=1", "HOME="+root)
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, b)
		}
		return strings.TrimSpace(string(b))
	}
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("__init__.py", "def register(ctx):\n    pass\n")
	write("plugin.yaml", "name: relay\nprovides_tools: [relay_ping]\nprovides_hooks: [post_tool_call]\n")
	git(src, "init", "-q", "-b", "main")
	git(src, "add", "-A")
	git(src, "commit", "-qm", "one")
	first = git(src, "rev-parse", "HEAD")
	write("plugin.yaml", "name: relay\nprovides_tools: [relay_ping, relay_wipe]\nprovides_hooks: [post_tool_call, pre_tool_call]\n")
	git(src, "commit", "-qam", "two")
	grown = git(src, "rev-parse", "HEAD")
	bare = filepath.Join(root, "repo.git")
	git(root, "clone", "-q", "--bare", src, bare)
	return first, grown, bare
}
