package nixtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var activateScript = filepath.Join(repo, "nix", "activate-plugins.sh")

// makePlugin makes a plugin "package" dir whose manifest (file name manifest,
// "" for none) names it after dir without its version suffix.
func makePlugin(t *testing.T, dir, manifest string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if manifest != "" {
		if err := os.WriteFile(filepath.Join(dir, manifest), []byte("name: "+strings.SplitN(filepath.Base(dir), "-", 2)[0]+"\nversion: 1.0.0\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// tree lists a plugins dir: "name -> target" for links, "name/" for dirs.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if target, err := os.Readlink(p); err == nil {
			out = append(out, e.Name()+" -> "+target)
		} else {
			out = append(out, e.Name()+"/")
		}
	}
	return out
}

func runActivate(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("sh", append([]string{activateScript}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestActivatePlugins(t *testing.T) {
	store := t.TempDir()
	a1 := makePlugin(t, filepath.Join(store, "aaa-weather-1.0"), "plugin.yaml")
	a2 := makePlugin(t, filepath.Join(store, "bbb-weather-2.0"), "plugin.yaml")
	b := makePlugin(t, filepath.Join(store, "ccc-notes-1.0"), "plugin.yml")
	bare := makePlugin(t, filepath.Join(store, "ddd-bare-1.0"), "")

	// Each step runs on the plugins dir the previous one left.
	steps := []struct {
		name     string
		args     []string
		wantOut  []string // lines, in order
		wantErr  string   // the script fails, saying this, and changes nothing
		wantTree []string
	}{
		{
			name:     "first activation links each plugin",
			args:     []string{"weather=" + a1, "notes=" + b},
			wantOut:  []string{"linked PLUGINS/nix-managed-weather -> " + a1, "linked PLUGINS/nix-managed-notes -> " + b},
			wantTree: []string{"hand-made/", "nix-managed-notes -> " + b, "nix-managed-weather -> " + a1},
		},
		{
			name:     "the same configuration again changes nothing",
			args:     []string{"weather=" + a1, "notes=" + b},
			wantTree: []string{"hand-made/", "nix-managed-notes -> " + b, "nix-managed-weather -> " + a1},
		},
		{
			name:     "a new version is relinked, a dropped plugin's link removed",
			args:     []string{"weather=" + a2},
			wantOut:  []string{"removed PLUGINS/nix-managed-notes (no longer in extraPlugins)", "relinked PLUGINS/nix-managed-weather -> " + a2},
			wantTree: []string{"hand-made/", "nix-managed-weather -> " + a2},
		},
		{
			name:     "a plugin without plugin.yaml is refused",
			args:     []string{"notes=" + b, "bare=" + bare},
			wantErr:  "activate-plugins: extraPlugins entry '" + bare + "' has no plugin.yaml: a plugin package must have its manifest at its root",
			wantTree: []string{"hand-made/", "nix-managed-weather -> " + a2},
		},
		{
			name:     "two entries with one name are refused",
			args:     []string{"notes=" + b, "notes=" + a1},
			wantErr:  "duplicate plugin name 'notes'",
			wantTree: []string{"hand-made/", "nix-managed-weather -> " + a2},
		},
		{
			name:     "a name that is not a plain file name is refused",
			args:     []string{"../evil=" + b},
			wantErr:  "has the name '../evil'",
			wantTree: []string{"hand-made/", "nix-managed-weather -> " + a2},
		},
		{
			name:     "an entry that is not NAME=PATH is refused",
			args:     []string{b},
			wantErr:  "entry '" + b + "' is not NAME=STORE_PATH",
			wantTree: []string{"hand-made/", "nix-managed-weather -> " + a2},
		},
		{
			name:     "no plugins left: every managed link goes, nothing else",
			args:     nil,
			wantOut:  []string{"removed PLUGINS/nix-managed-weather (no longer in extraPlugins)"},
			wantTree: []string{"hand-made/"},
		},
	}
	plugins := filepath.Join(t.TempDir(), "plugins")
	makePlugin(t, filepath.Join(plugins, "hand-made"), "plugin.yaml") // installed by the user: never touched
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			out, err := runActivate(t, append([]string{plugins}, st.args...)...)
			out = strings.ReplaceAll(out, plugins, "PLUGINS")
			if st.wantErr != "" {
				if err == nil || !strings.Contains(out, st.wantErr) {
					t.Errorf("err %v, output %q; want a failure saying %q", err, out, st.wantErr)
				}
			} else {
				if err != nil {
					t.Fatalf("activate-plugins.sh: %v\n%s", err, out)
				}
				var lines []string
				if out != "" {
					lines = strings.Split(strings.TrimSuffix(out, "\n"), "\n")
				}
				if !slices.Equal(lines, st.wantOut) {
					t.Errorf("output %q, want %q", lines, st.wantOut)
				}
			}
			if got := tree(t, plugins); !slices.Equal(got, st.wantTree) {
				t.Errorf("plugins dir %q, want %q", got, st.wantTree)
			}
		})
	}
}

// What is in the way of a link, and a plugins dir that cannot be one, stop
// the script before it changes anything.
func TestActivatePluginsRefusesWhatIsNotItsOwn(t *testing.T) {
	p := makePlugin(t, filepath.Join(t.TempDir(), "x-1.0"), "plugin.yaml")

	plugins := filepath.Join(t.TempDir(), "plugins")
	makePlugin(t, filepath.Join(plugins, "nix-managed-x"), "plugin.yaml") // a real dir, not a link
	if err := os.Symlink(p, filepath.Join(plugins, "nix-managed-old")); err != nil {
		t.Fatal(err)
	}
	out, err := runActivate(t, plugins, "x="+p)
	if err == nil || !strings.Contains(out, "nix-managed-x exists and is not a link: it is not nix-managed, move it aside") {
		t.Fatalf("err %v, output %q", err, out)
	}
	if got, want := tree(t, plugins), []string{"nix-managed-old -> " + p, "nix-managed-x/"}; !slices.Equal(got, want) {
		t.Errorf("plugins dir %q, want %q (unchanged)", got, want)
	}

	file := filepath.Join(t.TempDir(), "plugins")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = runActivate(t, file, "x="+p)
	if err == nil || !strings.Contains(out, "is not a directory: move it aside") {
		t.Fatalf("err %v, output %q", err, out)
	}

	// A stale managed-looking directory is not a link: left alone.
	dir := filepath.Join(t.TempDir(), "plugins")
	makePlugin(t, filepath.Join(dir, "nix-managed-mine"), "plugin.yaml")
	if out, err := runActivate(t, dir); err != nil || out != "" {
		t.Fatalf("err %v, output %q", err, out)
	}
	if got := tree(t, dir); !slices.Equal(got, []string{"nix-managed-mine/"}) {
		t.Errorf("plugins dir %q", got)
	}
}
