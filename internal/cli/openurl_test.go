package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/app"
)

// linkRepo serves a plugin repository as <owner>/repo to open-url (links only name
// GitHub owner/repo; the clone base is pointed at a local folder of bare repos).
func linkRepo(t *testing.T) string {
	url := makePluginRepo(t, map[string]string{"plugin.yaml": "name: linked\n", "__init__.py": "def register(ctx):\n    pass\n"})
	bare := strings.TrimPrefix(url, "file://")
	root := filepath.Dir(bare)
	old := openURLCloneBase
	openURLCloneBase = "file://" + filepath.Dir(root) + "/"
	t.Cleanup(func() { openURLCloneBase = old })
	return filepath.Base(root) + "/repo"
}

// offline keeps the catalog lookup open-url makes on the embedded seed.
func offline(app *app.Factory) *app.Factory {
	env := app.Env
	app.Env = func(k string) string {
		if k == "HERMES_OFFLINE" {
			return "1"
		}
		return env(k)
	}
	return app
}

func TestOpenURLInstallsAfterYes(t *testing.T) {
	slug := linkRepo(t)
	app, out, hh := ttyApp(t, "y\nn\n")
	offline(app)
	if code := Run(context.Background(), app, []string{"open-url", "hermes://plugin/install?repo=" + slug + "&enable=1"}); code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	o := out.String()
	for _, want := range []string{"Repository:  " + slug, "Browse:      https://github.com/" + slug, "Enable:      yes", "Catalog:     not listed", "Install " + slug + "? [y/N]: ", "✓ Installed linked", "✓ Plugin linked enabled."} {
		if !strings.Contains(o, want) {
			t.Errorf("output lacks %q:\n%s", want, o)
		}
	}
	if _, err := os.Stat(filepath.Join(hh, "plugins", "linked", "plugin.yaml")); err != nil {
		t.Fatal(err)
	}
}

func TestOpenURLDeclinedOrNoTerminal(t *testing.T) {
	slug := linkRepo(t)
	app, out, hh := ttyApp(t, "\n")
	offline(app)
	if code := Run(context.Background(), app, []string{"open-url", "hermes-dev://plugin-agent/" + strings.Replace(slug, "/", "%2F", 1) + "?force=1"}); code != 1 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if !strings.Contains(out.String(), "Aborted — nothing installed.") || !strings.Contains(out.String(), "legacy hermes-dev://plugin-agent/") {
		t.Fatalf("%s", out)
	}
	app, out, _ = ttyApp(t, "y\n")
	offline(app)
	app.IO.InTTY = false
	if code := Run(context.Background(), app, []string{"open-url", "hermes://plugin/install?repo=" + slug + "&enable=0&force=1"}); code != 1 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if !strings.Contains(out.String(), "Not installed: confirming a link needs a terminal. To install it yourself, run:\n  hermes plugins install "+slug+" --no-enable --replace") {
		t.Fatalf("%s", out)
	}
	if _, err := os.Stat(filepath.Join(hh, "plugins", "linked")); err == nil {
		t.Fatal("installed without a yes")
	}
}

// TestOpenURLForceOnlyReplaces: a link's force=1 replaces an installed plugin
// and nothing more: a caution verdict is still asked about, and no means no.
// Before, force=1 became install --force, which skips that question.
func TestOpenURLForceOnlyReplaces(t *testing.T) {
	url := makePluginRepo(t, map[string]string{"plugin.yaml": "name: linked\n", "__init__.py": "import os\n\n\ndef register(ctx):\n    os.system('ls')\n"})
	bare := strings.TrimPrefix(url, "file://")
	old := openURLCloneBase
	openURLCloneBase = "file://" + filepath.Dir(filepath.Dir(bare)) + "/"
	t.Cleanup(func() { openURLCloneBase = old })
	slug := filepath.Base(filepath.Dir(bare)) + "/repo"
	link := "hermes://plugin/install?repo=" + slug + "&enable=0&force=1"
	const caution = "Install anyway? Only continue if you trust the source. [y/N]: "

	app, out, hh := ttyApp(t, "y\nn\n") // yes to the link, no to the caution verdict
	offline(app)
	if code := Run(context.Background(), app, []string{"open-url", link}); code != 1 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if o := out.String(); !strings.Contains(o, caution) || !strings.Contains(o, "That is all force=1 does:") || strings.Contains(o, "Force-installed") {
		t.Fatalf("output:\n%s", o)
	}
	if _, err := os.Stat(filepath.Join(hh, "plugins", "linked")); err == nil {
		t.Fatal("installed after no to the caution verdict")
	}
	home := app.Env("HOME")
	for i, want := range []string{"✓ Installed linked", "✓ Reinstalled linked"} {
		app, out, _ := ttyApp(t, "y\ny\n")
		app.Env = func(k string) string {
			return map[string]string{"HOME": home, "HERMES_HOME": hh, "PATH": os.Getenv("PATH"), "HERMES_OFFLINE": "1"}[k]
		}
		if code := Run(context.Background(), app, []string{"open-url", link}); code != 0 {
			t.Fatalf("run %d: exit %d\n%s", i, code, out)
		}
		if o := out.String(); !strings.Contains(o, caution) || !strings.Contains(o, want) {
			t.Fatalf("run %d: output lacks %q:\n%s", i, want, o)
		}
	}
}

func TestNewCmdOpenURL(t *testing.T) {
	const link = "hermes://plugin/install?repo=owner/repo&enable=1"
	tests := []struct {
		name    string
		args    []string
		want    openURLOptions
		wantErr string
	}{
		{name: "link", args: []string{link}, want: openURLOptions{URL: link}},
		{name: "link, wait", args: []string{"--wait", link}, want: openURLOptions{URL: link, Wait: true}},
		{name: "register", args: []string{"--register"}, want: openURLOptions{Register: true}},
		{name: "register takes no link", args: []string{"--register", link}, wantErr: `unknown command "` + link + `" for "open-url"`},
		{name: "no link", wantErr: "accepts 1 arg(s), received 0"},
		{name: "two links", args: []string{link, link}, wantErr: "accepts 1 arg(s), received 2"},
		{name: "unknown flag", args: []string{link, "--yes"}, wantErr: errUnknownFlag},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := testFactory()
			got, err := parseCmd(t, f, newCmdOpenURL, tt.args)
			if checkErr(t, err, tt.wantErr) {
				return
			}
			checkBuiltFrom(t, f, got.IO, got.Factory)
			if got.CloneBase != openURLCloneBase {
				t.Fatalf("clone base %q", got.CloneBase)
			}
			got.IO, got.Factory, got.CloneBase = nil, nil, ""
			if *got != tt.want {
				t.Fatalf("options %+v, want %+v", *got, tt.want)
			}
		})
	}
	if !newCmdOpenURL(testFactory(), nil).Flags().Lookup("wait").Hidden {
		t.Fatal("--wait is shown in the help")
	}
}
