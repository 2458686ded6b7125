package cli

import (
	"bytes"
	"context"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/app"
	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/install"
	"github.com/hermes-go/hermes/internal/pack"
)

// Pack install end to end: plugins served by a loopback https git server (packs
// refuse file:// and http:// sources, so the test serves git the way a forge does),
// a scripted terminal answering the pack confirmation and each plugin's own prompts.

type gitHTTPS struct {
	root string // GIT_PROJECT_ROOT: <name>.git bare repositories
	url  string
	home string // HOME whose .gitconfig trusts the server's certificate
}

func newGitHTTPS(t *testing.T) *gitHTTPS {
	t.Helper()
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	g := &gitHTTPS{root: t.TempDir(), home: t.TempDir()}
	backend := &cgi.Handler{Path: gitBin, Args: []string{"http-backend"}, Env: []string{"GIT_PROJECT_ROOT=" + g.root, "GIT_HTTP_EXPORT_ALL=1"}}
	srv := httptest.NewTLSServer(backend)
	t.Cleanup(srv.Close)
	g.url = srv.URL
	ca := filepath.Join(g.home, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(g.home, ".gitconfig"), []byte("[http]\n\tsslCAInfo = "+ca+"\n"), 0o644)
	return g
}

// repo creates <name>.git with files and returns its https URL and HEAD commit.
func (g *gitHTTPS) repo(t *testing.T, name string, files map[string]string) (string, string) {
	t.Helper()
	src := filepath.Join(t.TempDir(), name)
	for p, body := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(src, p)), 0o755)
		os.WriteFile(filepath.Join(src, p), []byte(body), 0o644)
	}
	run := func(dir string, args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e", "GIT_CONFIG_NOSYSTEM=1", "HOME="+g.home)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run(src, "init", "-q", "-b", "main")
	run(src, "add", "-A")
	run(src, "commit", "-qm", "one")
	run(g.root, "clone", "-q", "--bare", src, name+".git")
	return g.url + "/" + name + ".git", run(src, "rev-parse", "HEAD")
}

// app is a hermes invocation with HOME = the server-trusting home and its own
// HERMES_HOME; tty says whether it has a terminal answering input.
func (g *gitHTTPS) app(hermesHome, input string, tty bool) (*app.Factory, *bytes.Buffer) {
	// HERMES_OFFLINE: catalog lookups for bare names use the embedded seed, never the network.
	env := map[string]string{"HOME": g.home, "HERMES_HOME": hermesHome, "PATH": os.Getenv("PATH"), "HERMES_OFFLINE": "1"}
	var out bytes.Buffer
	return &app.Factory{
		IO:  &app.IOStreams{In: strings.NewReader(input), Out: &out, Err: &out, InTTY: tty, OutTTY: tty},
		Env: func(k string) string { return env[k] },
		Cwd: g.home,
	}, &out
}

const alphaManifest = "name: alpha\ncapabilities: [tools.override]\nrequires_env:\n  - name: ALPHA_REGION\n"

func packFixture(t *testing.T) (*gitHTTPS, map[string]string) {
	g := newGitHTTPS(t)
	aURL, aSHA := g.repo(t, "alpha", map[string]string{"plugin.yaml": alphaManifest, "__init__.py": "def register(ctx):\n    pass\n"})
	bURL, bSHA := g.repo(t, "mono", map[string]string{"plugins/beta/plugin.yaml": "name: beta\n", "plugins/beta/__init__.py": "def register(ctx):\n    pass\n", "README.md": "x\n"})
	return g, map[string]string{"aURL": aURL, "aSHA": aSHA, "bURL": bURL, "bSHA": bSHA}
}

func TestPackExportInstallRoundTrip(t *testing.T) {
	g, f := packFixture(t)
	first := filepath.Join(t.TempDir(), "first")
	ctx := context.Background()

	// 1. Install the two plugins the ordinary way (no terminal, flags instead).
	for _, args := range [][]string{
		{"plugins", "install", f["aURL"], "--enable", "--skip-env", "--no-grant"},
		{"plugins", "install", f["bURL"] + "#plugins/beta", "--ref", f["bSHA"], "--enable"},
		{"config", "set", "plugins.entries.alpha.settings.mode", "fast"},
		{"config", "set", "plugins.entries.alpha.settings.api_key", "SECRET-VALUE"},
		{"config", "set", "plugins.entries.alpha.allow_tool_override", "true"},
		{"config", "set", "plugins.entries.beta.settings.limits.max", "5"},
	} {
		app, out := g.app(first, "", false)
		if code := Run(ctx, app, args); code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, out)
		}
	}
	// A plugin without git provenance.
	os.MkdirAll(filepath.Join(first, "plugins", "handmade"), 0o755)
	os.WriteFile(filepath.Join(first, "plugins", "handmade", "plugin.yaml"), []byte("name: handmade\n"), 0o644)

	// 2. Export.
	app, out := g.app(first, "", false)
	var stderr bytes.Buffer
	app.IO.Err = &stderr
	if code := Run(ctx, app, []string{"plugins", "pack", "export", "--name", "team"}); code != 0 {
		t.Fatalf("export: exit %d\n%s%s", code, out, &stderr)
	}
	exported := out.String()
	if strings.Contains(exported, "SECRET") || strings.Contains(exported, "api_key") || strings.Contains(exported, "allow_tool_override") {
		t.Fatalf("secret or gate exported:\n%s", exported)
	}
	for _, want := range []string{"# WARNING (not exported): handmade: no Git provenance", "name: team", "ref: " + f["aSHA"], "subdir: plugins/beta", "mode: fast"} {
		if !strings.Contains(exported, want) {
			t.Errorf("export lacks %q:\n%s", want, exported)
		}
	}
	if !strings.Contains(stderr.String(), "left out secret-shaped or reserved config keys: alpha.allow_tool_override, alpha.settings.api_key") {
		t.Errorf("stderr:\n%s", &stderr)
	}
	packFile := filepath.Join(g.home, "team-pack.yaml")
	os.WriteFile(packFile, []byte(exported), 0o644)

	// 3. A fresh HERMES_HOME, where the user already has a value the pack seeds.
	second := filepath.Join(t.TempDir(), "second")
	app, out = g.app(second, "", false)
	if code := Run(ctx, app, []string{"config", "set", "plugins.entries.beta.settings.limits.max", "9"}); code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	// Answers: the pack; alpha's ALPHA_REGION, its capability grant; beta's legacy
	// tool-override question.
	app, out = g.app(second, "y\neu-west\ny\nn\n", true)
	if code := Run(ctx, app, []string{"plugins", "pack", "install", packFile}); code != 0 {
		t.Fatalf("pack install: exit %d\n%s", code, out)
	}
	o := out.String()
	for _, want := range []string{
		"Pack team 1.0.0", "Install 2 plugin(s) from pack 'team'? [y/N] ",
		"[1/2] alpha", "ALPHA_REGION: ", "Grant these capabilities? [y/N]", "✓ Granted: tools.override",
		"[2/2] beta", "✓ alpha.settings.mode = \"fast\"", "• beta.settings.limits.max already set — keeping your value",
		"Pack 'team': 2 installed, 0 failed.",
	} {
		if !strings.Contains(o, want) {
			t.Errorf("output lacks %q:\n%s", want, o)
		}
	}
	if strings.Count(o, "[y/N]") < 2 {
		t.Errorf("consent must be asked per plugin, not in bulk:\n%s", o)
	}

	// 4. Same plugins, same commits, same sources; settings seeded; user value kept.
	md1, _ := install.ReadMetadata(filepath.Join(first, "plugins", install.MetadataFile))
	md2, _ := install.ReadMetadata(filepath.Join(second, "plugins", install.MetadataFile))
	for _, n := range []string{"alpha", "beta"} {
		a, b := md1.Rows[n], md2.Rows[n]
		if a.Source != b.Source || a.Revision != b.Revision || b.Revision == "" || !b.Pinned {
			t.Errorf("%s: first %+v, second %+v", n, a, b)
		}
	}
	if len(md2.Rows) != 2 {
		t.Errorf("rows: %v", md2.Rows)
	}
	doc, err := config.Store{Path: filepath.Join(second, "config.yaml")}.Load()
	if err != nil {
		t.Fatal(err)
	}
	s, _ := config.Plugins(doc)
	if !contains(s.Enabled, "alpha") || !contains(s.Enabled, "beta") {
		t.Errorf("enabled: %v", s.Enabled)
	}
	if v, _ := doc.Get("plugins.entries.alpha.settings.mode"); v != "fast" {
		t.Errorf("mode = %v", v)
	}
	if v, _ := doc.Get("plugins.entries.beta.settings.limits.max"); v != 9 {
		t.Errorf("user value replaced: %v", v)
	}
	if _, ok := doc.Get("plugins.entries.alpha.settings.api_key"); ok {
		t.Error("secret travelled")
	}
	if v, _ := doc.Get("plugins.entries.alpha.granted_capabilities"); fmt.Sprint(v) != "[tools.override]" {
		t.Errorf("granted = %v (consent answered yes)", v)
	}

	// 5. Running the same pack again changes nothing and succeeds.
	before, _ := os.ReadFile(filepath.Join(second, "config.yaml"))
	app, out = g.app(second, "y\n", true)
	if code := Run(ctx, app, []string{"plugins", "pack", "install", packFile}); code != 0 {
		t.Fatalf("second pack install: exit %d\n%s", code, out)
	}
	for _, want := range []string{"✓ alpha is already installed from " + f["aURL"], "• alpha.settings.mode already set", "Pack 'team': 2 installed, 0 failed."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("rerun output lacks %q:\n%s", want, out)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(second, "config.yaml")); !bytes.Equal(before, after) {
		t.Errorf("rerun changed config:\n%s\n---\n%s", before, after)
	}
}

func TestPackInstallDeclineAndNoTerminal(t *testing.T) {
	g, f := packFixture(t)
	packFile := filepath.Join(g.home, "p.yaml")
	os.WriteFile(packFile, []byte("name: p\nplugins:\n  - repo: "+f["aURL"]+"\n    ref: "+f["aSHA"]+"\n"), 0o644)
	hh := filepath.Join(t.TempDir(), "hh")
	ctx := context.Background()

	app, out := g.app(hh, "n\n", true)
	if code := Run(ctx, app, []string{"plugins", "pack", "install", packFile}); code != 1 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if !strings.Contains(out.String(), "Aborted — nothing installed.") {
		t.Fatalf("%s", out)
	}
	app, out = g.app(hh, "y\n", false)
	if code := Run(ctx, app, []string{"plugins", "pack", "install", packFile}); code != 1 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if !strings.Contains(out.String(), "Pack install requires an interactive terminal") {
		t.Fatalf("%s", out)
	}
	if names := install.Installed(filepath.Join(hh, "plugins")); len(names) != 0 {
		t.Fatalf("installed: %v", names)
	}
}

func TestPackInstallPartialFailure(t *testing.T) {
	g, f := packFixture(t)
	packFile := filepath.Join(g.home, "p.yaml")
	wrong := strings.Repeat("0", 40)
	os.WriteFile(packFile, []byte(fmt.Sprintf(`name: mixed
plugins:
  - repo: %s/missing.git
    ref: %s
  - name: not-in-any-catalog
    ref: %s
  - repo: %s
    ref: %s
    subdir: plugins/beta
  - repo: %s
    ref: %s
`, g.url, wrong, wrong, f["bURL"], f["bSHA"], f["aURL"], wrong)), 0o644)
	hh := filepath.Join(t.TempDir(), "hh")
	app, out := g.app(hh, "y\nn\n", true)
	if code := Run(context.Background(), app, []string{"plugins", "pack", "install", packFile}); code != 1 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	o := out.String()
	for _, want := range []string{"✗ '" + g.url + "/missing.git': Git clone failed", "✗ 'not-in-any-catalog': unresolved:", "✗ '" + f["aURL"] + "': Commit 0000000000000000000000000000000000000000 is not in", "Pack 'mixed': 1 installed, 3 failed."} {
		if !strings.Contains(o, want) {
			t.Errorf("output lacks %q:\n%s", want, o)
		}
	}
	if names := install.Installed(filepath.Join(hh, "plugins")); len(names) != 1 || names[0] != "beta" {
		t.Fatalf("installed: %v", names)
	}
}

func TestPackShowFromHTTPS(t *testing.T) {
	body := "name: remote-pack\nplugins:\n  - repo: owner/remote\n    ref: " + strings.Repeat("a", 40) + "\n"
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/hermes-pack.yaml" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(body))
	}))
	defer srv.Close()
	old := pack.HTTPClient
	pack.HTTPClient = srv.Client()
	defer func() { pack.HTTPClient = old }()

	app, out, _ := ttyApp(t, "")
	if code := Run(context.Background(), app, []string{"plugins", "pack", "show", srv.URL + "/hermes-pack.yaml"}); code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if !strings.Contains(out.String(), "Pack remote-pack") || !strings.Contains(out.String(), "owner/remote") {
		t.Fatalf("%s", out)
	}
	app, out, _ = ttyApp(t, "")
	if code := Run(context.Background(), app, []string{"plugins", "pack", "install", srv.URL + "/nope.yaml"}); code != 1 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if !strings.Contains(out.String(), "HTTP 404") {
		t.Fatalf("%s", out)
	}
}
