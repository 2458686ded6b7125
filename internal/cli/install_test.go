package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/app"
)

// The terminal paths of install, driven in-process with a fake terminal (the
// scripts cover everything without one).

func makePluginRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	src := filepath.Join(root, "src")
	for name, body := range files {
		p := filepath.Join(src, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(dir string, args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e", "GIT_CONFIG_NOSYSTEM=1", "HOME="+root)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run(src, "init", "-q", "-b", "main")
	run(src, "add", "-A")
	run(src, "commit", "-qm", "one")
	run(root, "clone", "-q", "--bare", src, filepath.Join(root, "repo.git"))
	return "file://" + filepath.Join(root, "repo.git")
}

func ttyApp(t *testing.T, input string) (*app.Factory, *bytes.Buffer, string) {
	t.Helper()
	home := t.TempDir()
	env := map[string]string{"HOME": home, "HERMES_HOME": filepath.Join(home, ".hermes"), "PATH": os.Getenv("PATH")}
	var out bytes.Buffer
	app := &app.Factory{
		IO:  &app.IOStreams{In: strings.NewReader(input), Out: &out, Err: &out, InTTY: true, OutTTY: true},
		Env: func(k string) string { return env[k] },
		Cwd: home,
	}
	return app, &out, filepath.Join(home, ".hermes")
}

const capperFiles = "name: capper\ncapabilities: [tools.override]\nrequires_env:\n  - name: CAPPER_API_KEY\n    secret: true\n  - name: CAPPER_REGION\n"

func TestInstallPromptsOnATerminal(t *testing.T) {
	url := makePluginRepo(t, map[string]string{"plugin.yaml": capperFiles, "__init__.py": "def register(ctx):\n    pass\n"})
	app, out, hh := ttyApp(t, "s3cret-key\neu-west\ny\ny\n")
	if code := Run(context.Background(), app, []string{"plugins", "install", url}); code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	o := out.String()
	for _, want := range []string{"CAPPER_API_KEY: ", "✓ Saved CAPPER_API_KEY", "Enable 'capper' now? [y/N]: ", "✓ Plugin capper enabled.", "Grant these capabilities? [y/N]", "✓ Granted: tools.override"} {
		if !strings.Contains(o, want) {
			t.Errorf("output lacks %q:\n%s", want, o)
		}
	}
	if strings.Contains(o, "s3cret-key") {
		t.Error("secret echoed")
	}
	env, _ := os.ReadFile(filepath.Join(hh, ".env"))
	if string(env) != "CAPPER_API_KEY=s3cret-key\nCAPPER_REGION=eu-west\n" {
		t.Fatalf(".env = %q", env)
	}
	if st, _ := os.Stat(filepath.Join(hh, ".env")); st.Mode().Perm() != 0o600 {
		t.Fatalf(".env mode %v", st.Mode())
	}
	cfg, _ := os.ReadFile(filepath.Join(hh, "config.yaml"))
	for _, want := range []string{"- capper", "granted_capabilities:", "- tools.override", "capabilities_consent:", "allow_tool_override: true"} {
		if !strings.Contains(string(cfg), want) {
			t.Errorf("config lacks %q:\n%s", want, cfg)
		}
	}
}

func TestInstallDefaultsToNoOnATerminal(t *testing.T) {
	url := makePluginRepo(t, map[string]string{"plugin.yaml": capperFiles, "__init__.py": "def register(ctx):\n    pass\n"})
	// Empty answers: env skipped, not enabled, capabilities declined.
	app, out, hh := ttyApp(t, "\n\n\n\n")
	if code := Run(context.Background(), app, []string{"plugins", "install", url}); code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if !strings.Contains(out.String(), "Declined. capper stays enabled with these capabilities off") {
		t.Fatalf("output:\n%s", out)
	}
	cfg, _ := os.ReadFile(filepath.Join(hh, "config.yaml"))
	if strings.Contains(string(cfg), "capper") {
		t.Fatalf("config changed:\n%s", cfg)
	}
	if _, err := os.Stat(filepath.Join(hh, ".env")); err == nil {
		t.Fatal(".env written")
	}
}

func TestInstallFlagsSkipPrompts(t *testing.T) {
	url := makePluginRepo(t, map[string]string{"plugin.yaml": capperFiles, "__init__.py": "def register(ctx):\n    pass\n"})
	app, out, hh := ttyApp(t, "y\ny\ny\ny\n")
	if code := Run(context.Background(), app, []string{"plugins", "install", url, "--enable", "--skip-env", "--no-grant"}); code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	o := out.String()
	if strings.Contains(o, "[y/N]") || !strings.Contains(o, "capabilities NOT granted") || !strings.Contains(o, "needs environment variable(s) that are not set: CAPPER_API_KEY, CAPPER_REGION") {
		t.Fatalf("output:\n%s", o)
	}
	cfg, _ := os.ReadFile(filepath.Join(hh, "config.yaml"))
	if !strings.Contains(string(cfg), "- capper") || strings.Contains(string(cfg), "granted_capabilities") {
		t.Fatalf("config:\n%s", cfg)
	}
	if !app.IO.InTTY {
		t.Fatal("--no-grant left the terminal flag off")
	}
}

func TestInstallCautionAsksOnATerminal(t *testing.T) {
	url := makePluginRepo(t, map[string]string{"plugin.yaml": "name: careful\n", "__init__.py": "import os\n\n\ndef register(ctx):\n    os.system('ls')\n"})
	app, out, hh := ttyApp(t, "n\n")
	if code := Run(context.Background(), app, []string{"plugins", "install", url, "--no-enable"}); code != 1 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if !strings.Contains(out.String(), "⚠ Security scan flagged this plugin:") || !strings.Contains(out.String(), "Install anyway? Only continue if you trust the source. [y/N]: ") {
		t.Fatalf("output:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(hh, "plugins", "careful")); err == nil {
		t.Fatal("installed after no")
	}
	app, out, _ = ttyApp(t, "y\n")
	if code := Run(context.Background(), app, []string{"plugins", "install", url, "--no-enable"}); code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

// TestInstallPrivateRepoThroughCredentialHelper runs the whole CLI against a
// loopback smart-HTTP server that demands a token, which only the user's git
// credential helper knows; the token must not end up on disk or in the output.
func TestInstallPrivateRepoThroughCredentialHelper(t *testing.T) {
	const token = "helper-only-token-42"
	url := makePluginRepo(t, map[string]string{"plugin.yaml": "name: private-one\n", "__init__.py": "def register(ctx):\n    pass\n"})
	bare := strings.TrimPrefix(url, "file://")
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	backend := &cgi.Handler{Path: gitBin, Args: []string{"http-backend"}, Env: []string{"GIT_PROJECT_ROOT=" + filepath.Dir(bare), "GIT_HTTP_EXPORT_ALL=1"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pass, ok := r.BasicAuth(); !ok || pass != token {
			w.Header().Set("WWW-Authenticate", `Basic realm="x"`)
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	defer srv.Close()
	remote := srv.URL + "/repo.git"

	app, out, hh := ttyApp(t, "")
	app.IO.InTTY, app.IO.OutTTY = false, false
	if code := Run(context.Background(), app, []string{"plugins", "install", remote, "--no-enable"}); code != 1 {
		t.Fatalf("without credentials: exit %d\n%s", code, out)
	}
	if !strings.Contains(out.String(), "may be private") {
		t.Fatalf("output:\n%s", out)
	}
	home := app.Env("HOME")
	os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[credential]\n\thelper = \"!f() { echo username=me; echo password="+token+"; }; f\"\n"), 0o600)
	out.Reset()
	if code := Run(context.Background(), app, []string{"plugins", "install", remote, "--no-enable"}); code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if strings.Contains(out.String(), token) {
		t.Fatalf("token in output:\n%s", out)
	}
	filepath.Walk(hh, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), token) || strings.Contains(string(b), base64.StdEncoding.EncodeToString([]byte("me:"+token))) {
				t.Errorf("token written to %s", p)
			}
		}
		return nil
	})
}
