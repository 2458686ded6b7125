package discovery

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/hermes-go/hermes/internal/plugins/manifest"
	"github.com/hermes-go/hermes/internal/testutil/coldrun"
)

func TestMain(m *testing.M) {
	coldrun.Child(coldFuncs)
	goleak.VerifyTestMain(m)
}

// tree writes files (relative path -> content) under root.
func tree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		path := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(rel, "/") {
			continue // a bare directory
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func keys(cands []*Candidate) []string {
	out := []string{}
	for _, c := range cands {
		out = append(out, c.Key)
	}
	return out
}

// warningsAt returns the messages of the warnings at or above level.
func warningsAt(ws []Warning, level Level) []string {
	var out []string
	for _, w := range ws {
		if w.Level <= level {
			out = append(out, w.Message)
		}
	}
	return out
}

// wantWarnings asserts each fragment appears in exactly one real warning and
// that there are no other real warnings.
func wantWarnings(t *testing.T, ws []Warning, fragments ...string) {
	t.Helper()
	got := warningsAt(ws, LevelWarning)
	if len(got) != len(fragments) {
		t.Fatalf("got %d warnings, want %d:\n%s", len(got), len(fragments), strings.Join(got, "\n"))
	}
	for _, f := range fragments {
		n := 0
		for _, g := range got {
			if strings.Contains(g, f) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d warnings contain %q, want 1:\n%s", n, f, strings.Join(got, "\n"))
		}
	}
}

func TestScanLayouts(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string
		wantKeys []string
		warnings []string // fragments of the expected warning-level messages
	}{
		{
			name: "flat plugin keyed by manifest name",
			files: map[string]string{
				"hello-world/plugin.yaml": "name: hello-world\nversion: '1.0'\n",
				"hello-world/__init__.py": "def register(ctx): pass\n",
				"dir-name/plugin.yaml":    "name: other-name\n",
				"nameless/plugin.yml":     "version: 2\n",
			},
			wantKeys: []string{"hello-world", "nameless", "other-name"},
		},
		{
			name: "category plugins keyed by path",
			files: map[string]string{
				"image_gen/openai/plugin.yaml":       "name: openai\nkind: backend\n",
				"observability/langfuse/plugin.yaml": "name: langfuse-tracer\n",
				"platforms/irc/plugin.yaml":          "name: irc-platform\nkind: platform\n",
			},
			wantKeys: []string{"image_gen/openai", "observability/langfuse", "platforms/irc"},
		},
		{
			name: "depth is capped at two",
			files: map[string]string{
				"cat/sub/deeper/plugin.yaml": "name: too-deep\n",
				"cat/ok/plugin.yaml":         "name: ok\n",
			},
			wantKeys: []string{"cat/ok"},
			warnings: []string{filepath.FromSlash("/cat/sub") + " (no plugin.yaml, depth cap reached)"},
		},
		{
			name: "sub-category directories are routed to provider discovery",
			files: map[string]string{
				"memory/honcho/plugin.yaml":        "name: honcho\n",
				"context_engine/lcm/plugin.yaml":   "name: lcm\n",
				"model-providers/acme/plugin.yaml": "name: acme\n",
				"cron_providers/sub/plugin.yaml":   "name: sub\n",
				"computer_use/cu/plugin.yaml":      "name: cu\n",
				"memory/plugin.yaml":               "name: memory\n",
				"general/plugin.yaml":              "name: general\n",
				"cat/memory/plugin.yaml":           "name: nested-memory-is-fine\n",
			},
			// cron_providers and computer_use have no discovery here; memory/plugin.yaml
			// is no provider (a provider is a directory under memory/).
			wantKeys: []string{"cat/memory", "context_engine/lcm", "general", "memory/honcho", "model-providers/acme"},
		},
		{
			name: "dunder, hidden and non-directory entries are skipped",
			files: map[string]string{
				"__pycache__/plugin.yaml":         "name: cache\n",
				"__MACOSX__/x/plugin.yaml":        "name: mac\n",
				".git/plugin.yaml":                "name: git\n",
				".hermes-staging-123/plugin.yaml": "name: staging\n",
				"cat/__pycache__/plugin.yaml":     "name: nested-cache\n",
				"cat/.hidden/plugin.yaml":         "name: nested-hidden\n",
				"README.md":                       "# plugins\n",
				"plugin.yaml":                     "name: root-file\n",
				"real/plugin.yaml":                "name: real\n",
			},
			wantKeys: []string{"real"},
		},
		{
			name: "YAML error skips only that plugin",
			files: map[string]string{
				"broken/plugin.yaml": "name: broken\ndescription: [unclosed\nversion: 1\n",
				"good/plugin.yaml":   "name: good\n",
			},
			wantKeys: []string{"good"},
			warnings: []string{filepath.FromSlash("/broken/plugin.yaml") + ":3:"},
		},
		{
			name: "field warnings keep the plugin",
			files: map[string]string{
				"w/plugin.yaml": "name: w\nprovides_tools: nope\nkind: gadget\n",
			},
			wantKeys: []string{"w"},
			warnings: []string{"provides_tools must be a list of strings", `unknown kind "gadget"`},
		},
		{
			name: "exec without command is skipped",
			files: map[string]string{
				"x/plugin.yaml": "name: x\nruntime: exec\n",
			},
			wantKeys: []string{},
			warnings: []string{"runtime exec needs a command"},
		},
		{
			name: "portable plugin.json without a name is skipped",
			files: map[string]string{
				"portable/plugin.json": "{}",
				"ok/plugin.yaml":       "name: ok\n",
			},
			wantKeys: []string{"ok"},
			warnings: []string{`has no "name"`},
		},
		{
			name: "malformed plugin.json is skipped, not entered",
			files: map[string]string{
				"bad/plugin.json":            `{"name": "bad",`,
				"bad/inner/plugin.yaml":      "name: inner\n",
				"portable/plugin.json":       `{"name": "portable", "colour": "red"}`,
				"portable/skills/x/SKILL.md": "# x\n",
			},
			wantKeys: []string{"portable"},
			warnings: []string{"is not valid JSON", "unknown field(s) ignored: colour"},
		},
		{
			name: "plugin.yaml wins over plugin.json",
			files: map[string]string{
				"both/plugin.yaml": "name: both\n",
				"both/plugin.json": `{"name": "other"}`,
			},
			wantKeys: []string{"both"},
		},
		{
			name: "empty category directory is quiet",
			files: map[string]string{
				"emptycat/": "",
			},
			wantKeys: []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			tree(t, root, tt.files)
			cands, ws := Discover(Options{UserDir: root})
			if got := keys(cands); !reflect.DeepEqual(got, tt.wantKeys) {
				t.Fatalf("keys = %q, want %q\nwarnings: %v", got, tt.wantKeys, ws)
			}
			wantWarnings(t, ws, tt.warnings...)
			for _, c := range cands {
				if c.Source != SourceUser || c.Dir == "" || c.Manifest == nil {
					t.Errorf("candidate %+v: want source user with a dir and manifest", c)
				}
			}
		})
	}
}

func TestScanDetailsOfACandidate(t *testing.T) {
	root := t.TempDir()
	tree(t, root, map[string]string{
		"mem/plugin.yaml":   "name: mem\n",
		"mem/__init__.py":   "class P(MemoryProvider): pass\n",
		"cat/p/plugin.yaml": "name: p-name\nunknown_thing: 1\n",
	})
	cands, ws := Discover(Options{BundledDir: root})
	if len(cands) != 2 {
		t.Fatalf("got %q", keys(cands))
	}
	p, mem := cands[0], cands[1]
	if p.Key != "cat/p" || p.Manifest.Name != "p-name" || p.Dir != filepath.Join(root, "cat", "p") || p.Source != SourceBundled {
		t.Errorf("category candidate = %+v", p)
	}
	if mem.Manifest.Kind != "exclusive" || mem.Manifest.Runtime != "python" {
		t.Errorf("kind, runtime = %q, %q; want exclusive, python", mem.Manifest.Kind, mem.Manifest.Runtime)
	}
	debug := strings.Join(warningsAt(ws, LevelDebug), "\n")
	if !strings.Contains(debug, "unknown manifest field(s) ignored: unknown_thing") {
		t.Errorf("v1 unknown field not reported at debug level:\n%s", debug)
	}
	wantWarnings(t, ws)
}

func TestSymlinkedPluginDir(t *testing.T) {
	base := t.TempDir()
	target := filepath.Join(base, "store", "linked")
	tree(t, target, map[string]string{"plugin.yaml": "name: linked\n"})
	root := filepath.Join(base, "plugins")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(root, "nix-managed-linked")); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	if err := os.Symlink(filepath.Join(base, "missing"), filepath.Join(root, "dangling")); err != nil {
		t.Fatal(err)
	}
	cands, ws := Discover(Options{UserDir: root})
	if got := keys(cands); !reflect.DeepEqual(got, []string{"linked"}) {
		t.Fatalf("keys = %q", got)
	}
	wantWarnings(t, ws)
}

func TestUnreadablePluginDir(t *testing.T) {
	root := t.TempDir()
	tree(t, root, map[string]string{
		"locked/plugin.yaml":      "name: locked\n",
		"lockedcat/x/plugin.yaml": "name: x\n",
		"lockedfile/plugin.yaml":  "name: lockedfile\n",
		"cat/inner/plugin.yaml":   "name: inner\n",
		"cat/fine/plugin.yaml":    "name: fine\n",
		"ok/plugin.yaml":          "name: ok\n",
	})
	for _, d := range []string{"locked", "lockedcat", "lockedfile/plugin.yaml", "cat/inner"} {
		p := filepath.Join(root, filepath.FromSlash(d))
		if err := os.Chmod(p, 0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(p, 0o755) })
	}
	// Permission bits do not bind root (or CAP_DAC_OVERRIDE): check for real.
	if _, err := os.ReadDir(filepath.Join(root, "locked")); err == nil {
		t.Skip("running with privileges that ignore directory permissions")
	}
	cands, ws := Discover(Options{UserDir: root})
	if got := keys(cands); !reflect.DeepEqual(got, []string{"cat/fine", "ok"}) {
		t.Fatalf("keys = %q", got)
	}
	wantWarnings(t, ws,
		"Skipping unreadable plugin directory "+filepath.Join(root, "locked")+": permission denied",
		"Skipping unreadable plugin directory "+filepath.Join(root, "lockedcat")+": permission denied",
		"Skipping plugin at "+filepath.Join(root, "lockedfile")+": read plugin manifest: open "+filepath.Join(root, "lockedfile", "plugin.yaml")+": permission denied",
		"Skipping unreadable plugin directory "+filepath.Join(root, "cat", "inner")+": permission denied")
}

func TestMissingRootsAreQuiet(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	cands, ws := Discover(Options{BundledDir: missing, UserDir: missing, ProjectDir: missing, SitePackages: []string{missing}})
	if len(cands) != 0 || len(ws) != 0 {
		t.Fatalf("got %v, %v; want nothing", keys(cands), ws)
	}
}

func TestPrecedenceAcrossSources(t *testing.T) {
	base := t.TempDir()
	bundled, user, project, site := filepath.Join(base, "bundled"), filepath.Join(base, "user"), filepath.Join(base, "project"), filepath.Join(base, "site")
	tree(t, bundled, map[string]string{
		"builtin-over/plugin.yaml": "name: builtin-over\ndescription: bundled dir\n",
		"shared/plugin.yaml":       "name: shared\ndescription: bundled\n",
		"only-bundled/plugin.yaml": "name: only-bundled\n",
		"ep/plugin.yaml":           "name: ep\ndescription: bundled\n",
	})
	tree(t, user, map[string]string{
		"shared/plugin.yaml":    "name: shared\ndescription: user\n",
		"userproj/plugin.yaml":  "name: userproj\ndescription: user\n",
		"only-user/plugin.yaml": "name: only-user\n",
	})
	tree(t, project, map[string]string{
		"shared/plugin.yaml":   "name: shared\ndescription: project\n",
		"userproj/plugin.yaml": "name: userproj\ndescription: project\n",
	})
	tree(t, site, map[string]string{
		"ep_pkg-1.0.dist-info/entry_points.txt": "[hermes_agent.plugins]\nep = ep_pkg\nshared = ep_pkg.shared\n",
		"ep_pkg-1.0.dist-info/METADATA":         "Metadata-Version: 2.1\nName: ep-pkg\nVersion: 1.0\nSummary: entry point\n",
	})
	builtins := []Builtin{
		{Manifest: &manifest.Manifest{Name: "compiled", Description: "builtin"}},
		{Manifest: &manifest.Manifest{Name: "builtin-over", Description: "builtin"}},
	}
	cands, ws := Discover(Options{Builtins: builtins, BundledDir: bundled, UserDir: user, ProjectDir: project, SitePackages: []string{site}})
	got := map[string]string{}
	for _, c := range cands {
		got[c.Key] = string(c.Source) + ":" + c.Manifest.Description
	}
	want := map[string]string{
		"compiled":     "bundled:builtin",
		"builtin-over": "bundled:bundled dir",
		"only-bundled": "bundled:",
		"only-user":    "user:",
		"userproj":     "project:project",
		"shared":       "entrypoint:entry point",
		"ep":           "entrypoint:entry point",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("winners = %v\nwant      %v", got, want)
	}
	if !sortedKeys(cands) {
		t.Errorf("winners not sorted: %q", keys(cands))
	}
	wantWarnings(t, ws)
	info := strings.Join(warningsAt(ws, LevelInfo), "\n")
	if !strings.Contains(info, "Plugin 'shared' at "+filepath.Join(user, "shared")+" (user) shadows the bundled copy at "+filepath.Join(bundled, "shared")) {
		t.Errorf("shadowing not logged:\n%s", info)
	}
}

func sortedKeys(cands []*Candidate) bool {
	for i := 1; i < len(cands); i++ {
		if cands[i-1].Key >= cands[i].Key {
			return false
		}
	}
	return true
}

func TestImpostorRule(t *testing.T) {
	tests := []struct {
		name       string
		bundled    map[string]string
		builtin    string
		user       map[string]string
		project    map[string]string
		wantSource Source
		wantDir    string // base name of the winner's dir
		warning    string
	}{
		{
			name:       "same-named directory overrides",
			bundled:    map[string]string{"kanban/plugin.yaml": "name: kanban\n"},
			user:       map[string]string{"kanban/plugin.yaml": "name: kanban\n"},
			wantSource: SourceUser, wantDir: "kanban",
		},
		{
			name:       "differently named user directory is an impostor",
			bundled:    map[string]string{"kanban/plugin.yaml": "name: kanban\n"},
			user:       map[string]string{"impostor_dir/plugin.yaml": "name: kanban\n"},
			wantSource: SourceBundled, wantDir: "kanban",
			warning: "its manifest name 'kanban' is a bundled plugin's key but the directory is named 'impostor_dir'; rename the directory to 'kanban' to override the bundled plugin",
		},
		{
			name:       "project impostor",
			bundled:    map[string]string{"kanban/plugin.yaml": "name: kanban\n"},
			project:    map[string]string{"zzz/plugin.yaml": "name: kanban\n"},
			wantSource: SourceBundled, wantDir: "kanban",
			warning: "Ignoring project plugin at",
		},
		{
			name:       "impostor after a legitimate user override",
			bundled:    map[string]string{"kanban/plugin.yaml": "name: kanban\n"},
			user:       map[string]string{"kanban/plugin.yaml": "name: kanban\n", "notkanban/plugin.yaml": "name: kanban\n"},
			wantSource: SourceUser, wantDir: "kanban",
			warning: "the directory is named 'notkanban'; rename the directory to 'kanban'",
		},
		{
			name:       "project impostor after a legitimate user override",
			bundled:    map[string]string{"kanban/plugin.yaml": "name: kanban\n"},
			user:       map[string]string{"kanban/plugin.yaml": "name: kanban\n"},
			project:    map[string]string{"evil/plugin.yaml": "name: kanban\n"},
			wantSource: SourceUser, wantDir: "kanban",
			warning: "Ignoring project plugin at",
		},
		{
			name:       "bundled directory named differently from its manifest",
			bundled:    map[string]string{"kanban-dir/plugin.yaml": "name: kanban\n"},
			user:       map[string]string{"kanban/plugin.yaml": "name: kanban\n"},
			wantSource: SourceBundled, wantDir: "kanban-dir",
			warning: "rename the directory to 'kanban-dir'",
		},
		{
			name:       "user then project is an ordinary override",
			user:       map[string]string{"a/plugin.yaml": "name: kanban\n"},
			project:    map[string]string{"b/plugin.yaml": "name: kanban\n"},
			wantSource: SourceProject, wantDir: "b",
		},
		{
			name:       "builtin overridden by same-named directory",
			builtin:    "gobuiltin",
			user:       map[string]string{"gobuiltin/plugin.yaml": "name: gobuiltin\n"},
			wantSource: SourceUser, wantDir: "gobuiltin",
		},
		{
			name:       "builtin impostor",
			builtin:    "gobuiltin",
			user:       map[string]string{"evil/plugin.yaml": "name: gobuiltin\n"},
			wantSource: SourceBundled, wantDir: ".",
			warning: "rename the directory to 'gobuiltin'",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			opts := Options{}
			if tt.bundled != nil {
				opts.BundledDir = filepath.Join(base, "bundled")
				tree(t, opts.BundledDir, tt.bundled)
			}
			if tt.user != nil {
				opts.UserDir = filepath.Join(base, "user")
				tree(t, opts.UserDir, tt.user)
			}
			if tt.project != nil {
				opts.ProjectDir = filepath.Join(base, "project")
				tree(t, opts.ProjectDir, tt.project)
			}
			if tt.builtin != "" {
				opts.Builtins = []Builtin{{Manifest: &manifest.Manifest{Name: tt.builtin}}}
			}
			cands, ws := Discover(opts)
			if len(cands) != 1 {
				t.Fatalf("keys = %q", keys(cands))
			}
			c := cands[0]
			if c.Source != tt.wantSource || filepath.Base(c.Dir) != tt.wantDir {
				t.Errorf("winner from %s at %q, want %s at %q", c.Source, c.Dir, tt.wantSource, tt.wantDir)
			}
			if tt.warning == "" {
				wantWarnings(t, ws)
			} else {
				wantWarnings(t, ws, tt.warning)
			}
		})
	}
}

func TestTruthy(t *testing.T) {
	for v, want := range map[string]bool{
		"1": true, "true": true, "TRUE": true, "Yes": true, "on": true, " on ": true,
		"": false, "0": false, "false": false, "no": false, "off": false, "enabled": false, "2": false,
	} {
		if got := Truthy(v); got != want {
			t.Errorf("Truthy(%q) = %v, want %v", v, got, want)
		}
	}
}

// TestManyPluginsKeepWalkOrder runs the parallel loader (enough plugins to
// fan out) and checks that results still come back in walk order: of two
// directories claiming one name the later one wins, and warnings follow the
// directory order.
func TestManyPluginsKeepWalkOrder(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	var want []string
	for i := range 40 {
		name := fmt.Sprintf("p%02d", i)
		files[name+"/plugin.yaml"] = "name: " + name + "\n"
		want = append(want, name)
		files[fmt.Sprintf("cat/c%02d/plugin.yaml", i)] = "name: ignored\n"
		want = append(want, fmt.Sprintf("cat/c%02d", i))
	}
	for i := range 5 {
		files[fmt.Sprintf("bad%d/plugin.yaml", i)] = "name: [\n"
	}
	files["p05/plugin.yaml"] = "name: twin\ndescription: first\n"
	files["p30/plugin.yaml"] = "name: twin\ndescription: second\n"
	tree(t, root, files)
	cands, ws := Discover(Options{UserDir: root})
	want = slices.DeleteFunc(want, func(k string) bool { return k == "p05" || k == "p30" })
	want = append(want, "twin")
	sort.Strings(want)
	if got := keys(cands); !reflect.DeepEqual(got, want) {
		t.Fatalf("keys = %q\nwant %q", got, want)
	}
	for _, c := range cands {
		if c.Key == "twin" && c.Manifest.Description != "second" {
			t.Errorf("twin from %s, want the later directory p30", c.Dir)
		}
	}
	got := warningsAt(ws, LevelWarning)
	if len(got) != 5 {
		t.Fatalf("warnings: %q", got)
	}
	for i, w := range got {
		if !strings.Contains(w, filepath.Join(root, fmt.Sprintf("bad%d", i), "plugin.yaml")+":1:") {
			t.Errorf("warning %d = %q, want bad%d's parse error", i, w, i)
		}
	}
}

func TestPortableCandidate(t *testing.T) {
	root := t.TempDir()
	tree(t, root, map[string]string{"Pack/plugin.json": `{"name": "my-pack", "version": "1.0.0", "author": {"name": "Ann", "email": "a@example.com"}}`})
	cands, ws := Discover(Options{UserDir: root})
	if len(cands) != 1 {
		t.Fatalf("candidates = %v, warnings %v", keys(cands), ws)
	}
	m := cands[0].Manifest
	if cands[0].Key != "my-pack" || !m.Portable || m.Runtime != "portable" || m.Author != "Ann, a@example.com" {
		t.Errorf("candidate %+v manifest %+v", cands[0], m)
	}
	if want := manifest.PortableNamespace("my-pack", "my-pack"); m.SkillNamespace != want || !strings.HasPrefix(want, "agent-plugin-my-pack-") || len(want) != len("agent-plugin-my-pack-")+8 {
		t.Errorf("namespace = %q, want %q", m.SkillNamespace, want)
	}
}
