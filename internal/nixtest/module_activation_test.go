package nixtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// stubStore lays out what the stub store paths of an evaluation must hold for
// its activation to run: the files the module writes, and bin/hermes (this
// test binary, which TestMain turns into hermes).
func stubStore(t *testing.T, store string, r *evalResult) {
	t.Helper()
	for name, text := range r.Files {
		if err := os.WriteFile(filepath.Join(store, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(r.PackagePath, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(filepath.Join(bin, "hermes"))
	if err := os.Symlink(self, filepath.Join(bin, "hermes")); err != nil {
		t.Fatal(err)
	}
}

func pluginDrv(name, version, path string) string {
	return `{ type = "derivation"; pname = ` + nixString(name) + `; name = ` + nixString(name+"-"+version) + `; outPath = ` + nixString(path) + `; }`
}

// deploy evaluates the module for this configuration and runs its activation
// as NixOS would (sh, errexit), returning the output.
func deploy(t *testing.T, store string, module string) (string, error) {
	t.Helper()
	r, stderr, err := evalModule(t, store, false, module)
	if err != nil {
		t.Fatalf("evaluation failed: %v\n%s", err, stderr)
	}
	if len(r.FailedAssertions) > 0 {
		t.Fatalf("assertions failed: %q", r.FailedAssertions)
	}
	stubStore(t, store, r)
	cmd := exec.Command("sh", "-eu", "-c", *r.Activation)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Three deploys of the module's own activation against real directories: the
// first merges settings into a hand-edited config.yaml, writes .env and links
// a plugin hermes then discovers; the second relinks a new version and drops
// a plugin; the third is refused for a plugin without plugin.yaml.
func TestModuleActivation(t *testing.T) {
	requireNix(t, "nix-instantiate")
	store, state := t.TempDir(), t.TempDir()
	home := filepath.Join(state, ".hermes")
	owner, group := currentOwner(t)
	makePlugin(t, filepath.Join(home, "plugins", "hand-made"), "plugin.yaml")
	userConfig := "# mine, keep this\nmodel:\n  default: old   # was\n  provider: openrouter\nstreaming: true\n"
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(userConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	secrets := filepath.Join(t.TempDir(), "hermes.env")
	if err := os.WriteFile(secrets, []byte("TELEGRAM_BOT_TOKEN=123:abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	weather1 := makePlugin(t, filepath.Join(store, "weather-1.0"), "plugin.yaml")
	weather2 := makePlugin(t, filepath.Join(store, "weather-2.0"), "plugin.yaml")
	notes := makePlugin(t, filepath.Join(store, "notes-0.3"), "plugin.yaml")
	bare := makePlugin(t, filepath.Join(store, "bare-1.0"), "")

	module := func(settings string, plugins ...string) string {
		return `{ services.hermes-agent = {
			enable = true; user = ` + nixString(owner) + `; group = ` + nixString(group) + `;
			stateDir = ` + nixString(state) + `;
			settings = ` + settings + `;
			environment.GATEWAY_ALLOW_ALL_USERS = "false";
			environmentFiles = [ ` + nixString(secrets) + ` ];
			extraPlugins = [ ` + strings.Join(plugins, " ") + ` ];
		}; }`
	}

	out, err := deploy(t, store, module(`{ model.default = "nix"; plugins.enabled = [ "weather" "notes" ]; }`,
		pluginDrv("weather", "1.0", weather1), pluginDrv("notes", "0.3", notes)))
	if err != nil {
		t.Fatalf("first activation: %v\n%s", err, out)
	}
	wantConfig := "# mine, keep this\nmodel:\n  default: nix   # was\n  provider: openrouter\nstreaming: true\nplugins:\n  enabled:\n    - weather\n    - notes\n_config_version: 21\n"
	if got := readFile(t, filepath.Join(home, "config.yaml")); got != wantConfig {
		t.Errorf("config.yaml:\n%s\nwant:\n%s", got, wantConfig)
	}
	if got, want := readFile(t, filepath.Join(home, ".env")), "GATEWAY_ALLOW_ALL_USERS=false\n\nTELEGRAM_BOT_TOKEN=123:abc\n"; got != want {
		t.Errorf(".env %q, want %q", got, want)
	}
	if fi, err := os.Stat(filepath.Join(home, ".env")); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf(".env mode: %v %v, want 0640", fi, err)
	}
	if _, err := os.Stat(filepath.Join(home, ".managed")); err != nil {
		t.Errorf("no .managed marker: %v", err)
	}
	for _, d := range []string{"logs", "plugins", "sessions"} {
		if fi, err := os.Stat(filepath.Join(home, d)); err != nil || !fi.IsDir() {
			t.Errorf("%s not made: %v", d, err)
		}
	}
	wantTree := []string{"hand-made/", "nix-managed-notes -> " + notes, "nix-managed-weather -> " + weather1}
	if got := tree(t, filepath.Join(home, "plugins")); !slices.Equal(got, wantTree) {
		t.Errorf("plugins %q, want %q", got, wantTree)
	}

	// hermes itself finds the linked plugins under their manifest names.
	list := exec.Command(filepath.Join(store, "hermes-0.1.0", "bin", "hermes"), "plugins", "list")
	list.Env = append(os.Environ(), "HERMES_HOME="+home)
	listed, err := list.CombinedOutput()
	if err != nil {
		t.Fatalf("hermes plugins list: %v\n%s", err, listed)
	}
	t.Logf("hermes plugins list:\n%s", listed)
	// Enabled by manifest name (settings.plugins.enabled), not by link name.
	for _, re := range []string{`(?m)^weather +enabled `, `(?m)^notes +enabled `, `(?m)^hand +not enabled `} {
		if !regexp.MustCompile(re).Match(listed) {
			t.Errorf("hermes plugins list does not match %s:\n%s", re, listed)
		}
	}

	// A new version relinks; a plugin left out of the configuration goes; the
	// user's edit since the last deploy stays.
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(wantConfig+"display:\n  skin: mono # by hand\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = deploy(t, store, module(`{ model.default = "nix2"; plugins.enabled = [ "weather" ]; }`, pluginDrv("weather", "2.0", weather2)))
	if err != nil {
		t.Fatalf("second activation: %v\n%s", err, out)
	}
	if !strings.Contains(out, "relinked "+filepath.Join(home, "plugins", "nix-managed-weather")+" -> "+weather2) ||
		!strings.Contains(out, "removed "+filepath.Join(home, "plugins", "nix-managed-notes")) {
		t.Errorf("second activation said:\n%s", out)
	}
	wantTree = []string{"hand-made/", "nix-managed-weather -> " + weather2}
	if got := tree(t, filepath.Join(home, "plugins")); !slices.Equal(got, wantTree) {
		t.Errorf("plugins %q, want %q", got, wantTree)
	}
	cfg := readFile(t, filepath.Join(home, "config.yaml"))
	if !strings.Contains(cfg, "default: nix2   # was") || !strings.Contains(cfg, "skin: mono # by hand") || strings.Contains(cfg, "- notes") {
		t.Errorf("config.yaml after the second deploy:\n%s", cfg)
	}

	// A plugin without plugin.yaml fails the activation and leaves the links.
	out, err = deploy(t, store, module(`{ }`, pluginDrv("weather", "2.0", weather2), pluginDrv("bare", "1.0", bare)))
	if err == nil || !strings.Contains(out, "extraPlugins entry '"+bare+"' has no plugin.yaml") {
		t.Fatalf("activation with a bare plugin: err %v\n%s", err, out)
	}
	if got := tree(t, filepath.Join(home, "plugins")); !slices.Equal(got, wantTree) {
		t.Errorf("plugins %q after the refused activation, want %q", got, wantTree)
	}
}
