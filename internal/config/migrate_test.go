package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pluginFixture creates plugin directories: name → manifest file name → manifest text
// ("" manifest file name = a directory without a manifest).
func pluginFixture(t *testing.T, dirs map[string][2]string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "plugins")
	for dir, m := range dirs {
		p := filepath.Join(root, dir)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if m[0] != "" {
			if err := os.WriteFile(filepath.Join(p, m[0]), []byte(m[1]), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

func TestMigrate(t *testing.T) {
	standard := map[string][2]string{
		"zeta":          {"plugin.yaml", "name: zeta\nversion: 1.0.0\n"},
		"alpha-dir":     {"plugin.yaml", "name: alpha\n"},
		"beta":          {"plugin.yml", "name: beta\n"},
		"no-manifest":   {"", ""},
		"broken":        {"plugin.yaml", "name: [unclosed\n"},
		"nameless":      {"plugin.yaml", "version: 2\n"},
		"skip-me":       {"plugin.yaml", "name: skipped\n"},
		".hidden-dir":   {"plugin.yaml", "name: hidden\n"},
		"numeric-name1": {"plugin.yaml", "name: 42\n"},
	}
	tests := []struct {
		name     string
		src      string
		dirs     map[string][2]string
		noDir    bool
		wantMsgs []string
		want     string // exact resulting bytes
	}{
		{
			name: "grandfathers sorted plugins, skipping disabled",
			src:  "# my config\nplugins:\n  disabled: [skipped]   # never\n",
			dirs: standard,
			wantMsgs: []string{
				"✓ Plugins now opt-in: grandfathered 7 existing plugin(s) into plugins.enabled",
			},
			want: "# my config\nplugins:\n  disabled: [skipped]   # never\n  enabled:\n    - hidden\n    - alpha\n    - beta\n    - broken\n    - nameless\n    - \"42\"\n    - zeta\n_config_version: 21\n",
		},
		{
			// The names must be the keys discovery gives these plugins, or the
			// grandfathered plugins come out "not enabled".
			name: "names as discovery reads them",
			src:  "_config_version: 20\n",
			dirs: map[string][2]string{
				"bom-dir":   {"plugin.yaml", "\ufeffname: realname\n"},
				"g-intname": {"plugin.yaml", "name: 2048\n"},
				"ver-dir":   {"plugin.yaml", "name: \"a/b\"\n"},
				"float-dir": {"plugin.yaml", "name: 1.10\n"},
				"yml-dir":   {"plugin.yml", "name: from-yml\n"},
			},
			wantMsgs: []string{"✓ Plugins now opt-in: grandfathered 5 existing plugin(s) into plugins.enabled"},
			want:     "_config_version: 21\nplugins:\n  enabled:\n    - realname\n    - \"1.10\"\n    - \"2048\"\n    - ver-dir\n    - from-yml\n",
		},
		{
			name:     "no plugins installed writes an explicit empty list",
			src:      "model: x\n",
			noDir:    true,
			wantMsgs: []string{"✓ Plugins now opt-in: no existing plugins to grandfather. Use `hermes plugins enable <name>` to activate."},
			want:     "model: x\nplugins:\n  enabled: []\n_config_version: 21\n",
		},
		{
			name:     "plugins dir without manifests",
			src:      "_config_version: 20\nplugins:\n",
			dirs:     map[string][2]string{"empty": {"", ""}},
			wantMsgs: []string{"✓ Plugins now opt-in: no existing plugins to grandfather. Use `hermes plugins enable <name>` to activate."},
			want:     "_config_version: 21\nplugins:\n  enabled: []\n",
		},
		{
			name: "enabled already present is left alone, version bumped",
			src:  "_config_version: 20  # old\nplugins:\n  enabled: [mine]\n",
			dirs: standard,
			want: "_config_version: 21  # old\nplugins:\n  enabled: [mine]\n",
		},
		{
			name: "explicit empty enabled counts as present",
			src:  "plugins:\n  enabled: []\n",
			dirs: standard,
			want: "plugins:\n  enabled: []\n_config_version: 21\n",
		},
		{
			name: "version 21 is untouched",
			src:  "_config_version: 21\nmodel: x\n",
			dirs: standard,
			want: "_config_version: 21\nmodel: x\n",
		},
		{
			name: "higher version is never lowered",
			src:  "_config_version: 34\n",
			dirs: standard,
			want: "_config_version: 34\n",
		},
		{
			name:     "unreadable version counts as 0",
			src:      "_config_version: soon\n",
			noDir:    true,
			wantMsgs: []string{"✓ Plugins now opt-in: no existing plugins to grandfather. Use `hermes plugins enable <name>` to activate."},
			want:     "_config_version: 21\nplugins:\n  enabled: []\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "absent")
			if !tc.noDir {
				dir = pluginFixture(t, tc.dirs)
			}
			d := mustParse(t, tc.src)
			msgs, err := Migrate(d, dir)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(msgs, "\n") != strings.Join(tc.wantMsgs, "\n") {
				t.Errorf("messages = %q\nwant %q", msgs, tc.wantMsgs)
			}
			if got := string(d.Bytes()); got != tc.want {
				t.Errorf("result =\n%s\nwant\n%s", got, tc.want)
			}
			// Migrating again changes nothing.
			again, err := Migrate(d, dir)
			if err != nil || len(again) != 0 || string(d.Bytes()) != tc.want {
				t.Errorf("second Migrate = %q, %v and changed the document", again, err)
			}
		})
	}
}

func TestMigrateRefusesNonMappingPlugins(t *testing.T) {
	src := "plugins: [a, b]\n"
	d := mustParse(t, src)
	if _, err := Migrate(d, t.TempDir()); err == nil || !strings.Contains(err.Error(), "plugins is a list, not a mapping") {
		t.Fatalf("Migrate error = %v, want a clear refusal", err)
	}
	if string(d.Bytes()) != src {
		t.Errorf("document changed: %q", d.Bytes())
	}
}

func TestMigrateUnreadablePluginsDirIsAnError(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root can read any directory")
	}
	dir := pluginFixture(t, map[string][2]string{"a": {"plugin.yaml", "name: a\n"}})
	if err := os.Chmod(dir, 0o000); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })
	d := mustParse(t, "model: x\n")
	if _, err := Migrate(d, dir); err == nil {
		t.Fatal("Migrate guessed an empty plugin list from an unreadable directory")
	}
}
