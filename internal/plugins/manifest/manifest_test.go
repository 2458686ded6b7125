package manifest

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/testutil/yamlbomb"
)

const file = "/p/demo/plugin.yaml"

func intPtr(n int) *int { return &n }

// parseOK parses src and fails the test on an error.
func parseOK(t *testing.T, src string) (*Manifest, []string) {
	t.Helper()
	m, warns, err := Parse([]byte(src), file, "demo")
	if err != nil {
		t.Fatalf("Parse(%q) error: %v", src, err)
	}
	return m, warns
}

// checkWarnings asserts one warning per wanted fragment, each naming the file.
func checkWarnings(t *testing.T, warns []string, want ...string) {
	t.Helper()
	if len(warns) != len(want) {
		t.Fatalf("got %d warnings %q, want %d matching %q", len(warns), warns, len(want), want)
	}
	for i, w := range want {
		if !strings.HasPrefix(warns[i], file+": ") {
			t.Errorf("warning %q does not start with the file name", warns[i])
		}
		if !strings.Contains(warns[i], w) {
			t.Errorf("warning %d = %q, want it to contain %q", i, warns[i], w)
		}
	}
}

func TestParseSeedExample(t *testing.T) {
	m, warns := parseOK(t, "name: hello-world\nversion: \"1.0\"\ndescription: A minimal example plugin\n")
	checkWarnings(t, warns)
	want := &Manifest{
		Name: "hello-world", Version: "1.0", Description: "A minimal example plugin",
		ManifestVersion: 1, File: file,
		Raw: map[string]any{"name": "hello-world", "version": "1.0", "description": "A minimal example plugin"},
	}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("got  %#v\nwant %#v", m, want)
	}
}

func TestParseFields(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		check func(*Manifest) any // returns the value to compare
		want  any
		warns []string
	}{
		{"name defaults to dir", "version: 1\n", func(m *Manifest) any { return m.Name }, "demo", nil},
		{"name null defaults to dir", "name:\n", func(m *Manifest) any { return m.Name }, "demo", nil},
		{"name number kept as text", "name: 42\n", func(m *Manifest) any { return m.Name }, "42", nil},
		{"name list", "name: [a]\n", func(m *Manifest) any { return m.Name }, "demo", []string{"name must be a string, not a list"}},
		{"name dot", "name: .\n", func(m *Manifest) any { return m.Name }, "demo", []string{`name "." cannot name a plugin`}},
		{"name dotdot", "name: ..\n", func(m *Manifest) any { return m.Name }, "demo", []string{`name ".." cannot name a plugin`}},
		{"name slash", "name: a/b\n", func(m *Manifest) any { return m.Name }, "demo", []string{`name "a/b" cannot name a plugin`}},
		{"name backslash", "name: 'a\\b'\n", func(m *Manifest) any { return m.Name }, "demo", []string{`cannot name a plugin`}},
		{"name NUL", "name: \"a\\0b\"\n", func(m *Manifest) any { return m.Name }, "demo", []string{`cannot name a plugin`}},
		{"name empty", "name: ''\n", func(m *Manifest) any { return m.Name }, "demo", []string{`name "" cannot name a plugin`}},

		{"version float keeps text", "version: 1.10\n", func(m *Manifest) any { return m.Version }, "1.10", nil},
		{"version 1.0 keeps text", "version: 1.0\n", func(m *Manifest) any { return m.Version }, "1.0", nil},
		{"version int", "version: 2\n", func(m *Manifest) any { return m.Version }, "2", nil},
		{"version via general decoder", "version: &v 1.50\n", func(m *Manifest) any { return m.Version }, "1.50", nil},
		{"version mapping", "version: {a: 1}\n", func(m *Manifest) any { return m.Version }, "", []string{"version must be a string, not a mapping; ignoring it"}},

		{"author string", "author: Jo\n", func(m *Manifest) any { return m.Author }, "Jo", nil},
		{"author mapping", "author:\n  name: Jo\n  email: jo@x.org\n  url: ''\n", func(m *Manifest) any { return m.Author }, "Jo, jo@x.org", nil},
		{"author list", "author: [a]\n", func(m *Manifest) any { return m.Author }, "", []string{"author must be a string"}},

		{"requires_env forms",
			"requires_env:\n  - FOO\n  - name: BAR\n    description: bar key\n    url: https://x\n    secret: true\n  - name: PW\n    password: true\n",
			func(m *Manifest) any { return m.RequiresEnv },
			[]EnvVar{{Name: "FOO"}, {Name: "BAR", Description: "bar key", URL: "https://x", Secret: true}, {Name: "PW", Secret: true}}, nil},
		{"requires_env bad items",
			"requires_env:\n  - 3\n  - {description: x}\n  - name: OK\n    secret: maybe\n",
			func(m *Manifest) any { return m.RequiresEnv },
			[]EnvVar{{Name: "OK"}},
			[]string{"requires_env item 1 must be a variable name", "requires_env item 2 has no name", `requires_env item "OK": secret must be true or false`}},
		{"requires_env not a list", "requires_env: FOO\n", func(m *Manifest) any { return m.RequiresEnv }, []EnvVar(nil),
			[]string{"requires_env must be a list of variable names or {name, description, url, secret} mappings, not a string"}},
		{"requires_env secret yes/on",
			"requires_env:\n  - name: A\n    secret: yes\n  - name: B\n    password: On\n  - name: C\n    secret: no\n",
			func(m *Manifest) any { return m.RequiresEnv },
			[]EnvVar{{Name: "A", Secret: true}, {Name: "B", Secret: true}, {Name: "C"}}, nil},
		{"optional_env", "optional_env: [A]\n", func(m *Manifest) any { return m.OptionalEnv }, []EnvVar{{Name: "A"}}, nil},

		{"provides_tools", "provides_tools: [a, b]\n", func(m *Manifest) any { return m.ProvidesTools }, []string{"a", "b"}, nil},
		{"provides_hooks bad item", "provides_hooks:\n  - post_tool_call\n  - {x: 1}\n", func(m *Manifest) any { return m.ProvidesHooks },
			[]string{"post_tool_call"}, []string{"provides_hooks item 2 must be a string, not a mapping"}},
		{"provides_tools scalar", "provides_tools: a\n", func(m *Manifest) any { return m.ProvidesTools }, []string(nil),
			[]string{"provides_tools must be a list of strings, not a string"}},
		{"tags stringified", "tags: [demo, 2024, true]\n", func(m *Manifest) any { return m.Tags }, []string{"demo", "2024", "true"}, nil},
		{"emits listens", "emits: [done]\nlistens: ['other:done']\n", func(m *Manifest) any { return [][]string{m.Emits, m.Listens} },
			[][]string{{"done"}, {"other:done"}}, nil},

		{"kind absent", "name: x\n", func(m *Manifest) any { return m.Kind }, "", nil},
		{"kind normalized", "kind: ' Backend '\n", func(m *Manifest) any { return m.Kind }, "backend", nil},
		{"kind model-provider", "kind: model-provider\n", func(m *Manifest) any { return m.Kind }, "model-provider", nil},
		{"kind unknown", "kind: gadget\n", func(m *Manifest) any { return m.Kind }, "standalone",
			[]string{`unknown kind "gadget" (valid: backend, exclusive, model-provider, platform, standalone); treating the plugin as 'standalone'`}},
		{"kind wrong type", "kind: [a]\n", func(m *Manifest) any { return m.Kind }, "standalone", []string{"kind must be a string, not a list"}},

		{"manifest_version default", "name: x\n", func(m *Manifest) any { return m.ManifestVersion }, 1, nil},
		{"manifest_version 2", "manifest_version: 2\n", func(m *Manifest) any { return m.ManifestVersion }, 2, nil},
		{"manifest_version string int", "manifest_version: '2'\n", func(m *Manifest) any { return m.ManifestVersion }, 2, nil},
		{"manifest_version not int", "manifest_version: two\n", func(m *Manifest) any { return m.ManifestVersion }, 1,
			[]string{`manifest_version "two" is not an integer; treating it as 1`}},
		{"manifest_version list", "manifest_version: [2]\n", func(m *Manifest) any { return m.ManifestVersion }, 1,
			[]string{"manifest_version a list is not an integer; treating it as 1"}},
		{"manifest_version newer", "manifest_version: 3\n", func(m *Manifest) any { return m.ManifestVersion }, 3,
			[]string{"manifest_version 3 is newer than this hermes supports (2); loading anyway"}},

		{"api_version", "api_version: 1\n", func(m *Manifest) any { return m.APIVersion }, intPtr(1), nil},
		{"api_version null", "api_version: null\n", func(m *Manifest) any { return m.APIVersion }, (*int)(nil), nil},
		{"api_version bad", "api_version: x\n", func(m *Manifest) any { return m.APIVersion }, (*int)(nil),
			[]string{`api_version "x" is not an integer; ignoring it`}},

		{"requires_plugins", "requires_plugins:\n  - a\n  - id: b\n    version_range: '>=1.0'\n  - {id: c}\n",
			func(m *Manifest) any { return m.RequiresPlugins },
			[]Requirement{{ID: "a"}, {ID: "b", VersionRange: ">=1.0"}, {ID: "c"}}, nil},
		{"requires_plugins malformed", "requires_plugins:\n  - 5\n  - {version_range: x}\n  - ''\n  - ok\n",
			func(m *Manifest) any { return m.RequiresPlugins },
			[]Requirement{{ID: "ok"}},
			[]string{"requires_plugins item 1", "requires_plugins item 2", "requires_plugins item 3"}},
		{"requires_plugins not list", "requires_plugins: a\n", func(m *Manifest) any { return m.RequiresPlugins }, []Requirement(nil),
			[]string{"requires_plugins must be a list, not a string"}},

		{"python_dependencies", "python_dependencies: [' requests>=2 ', '', 3]\n", func(m *Manifest) any { return m.PythonDependencies },
			[]string{"requests>=2"}, []string{"python_dependencies item 2", "python_dependencies item 3"}},

		{"config_schema",
			"config_schema:\n  api_key:\n    type: str\n    required: true\n    description: the key\n  retries:\n    type: int\n    default: 3\n  opt:\n    default: null\n",
			func(m *Manifest) any { return m.ConfigSchema },
			map[string]SchemaField{
				"api_key": {Type: "str", Required: true, Description: "the key"},
				"retries": {Type: "int", Default: uint64(3), HasDefault: true},
				"opt":     {HasDefault: true},
			}, nil},
		{"config_schema problems",
			"config_schema:\n  a: 5\n  b:\n    type: widget\n  c:\n    required: y\n",
			func(m *Manifest) any { return m.ConfigSchema },
			map[string]SchemaField{"b": {Type: "widget"}, "c": {}},
			[]string{`config_schema entry "a" must be a mapping`, `config_schema entry "b" declares unknown type "widget"`, `config_schema entry "c": required must be true or false`}},
		// PyYAML (upstream) reads yes/no/on/off as booleans.
		{"config_schema required yes",
			"config_schema:\n  a:\n    required: yes\n  b:\n    required: Off\n",
			func(m *Manifest) any { return m.ConfigSchema },
			map[string]SchemaField{"a": {Required: true}, "b": {}}, nil},
		{"config_schema not mapping", "config_schema: [a]\n", func(m *Manifest) any { return m.ConfigSchema }, map[string]SchemaField(nil),
			[]string{"config_schema must be a mapping"}},

		{"license homepage", "license: MIT\nhomepage: https://x.org/#readme\n", func(m *Manifest) any { return m.License + " " + m.Homepage },
			"MIT https://x.org/#readme", nil},

		{"capabilities", "capabilities:\n  - tools.override\n  - ' llm.model_override '\n  - tools.override\n  - gateway.raw_events\n  - 7\n",
			func(m *Manifest) any { return m.Capabilities },
			[]string{"tools.override", "llm.model_override"},
			[]string{`unknown capability "gateway.raw_events" (known: gateway.platform_actions,`, "capabilities: ignoring a number entry"}},
		{"capabilities empty", "capabilities: []\n", func(m *Manifest) any { return m.Capabilities }, []string(nil), nil},
		{"capabilities string", "capabilities: tools.override\n", func(m *Manifest) any { return m.Capabilities }, []string(nil),
			[]string{"capabilities must be a list of capability ids, not a string"}},

		{"requires_hermes trimmed", "requires_hermes: ' >=0.19 '\n", func(m *Manifest) any { return m.RequiresHermes }, ">=0.19", nil},
		{"requires_hermes number", "requires_hermes: 0.20\n", func(m *Manifest) any { return m.RequiresHermes }, "0.20", nil},
		{"update_url", "update_url: https://x/y.git\n", func(m *Manifest) any { return m.UpdateURL }, "https://x/y.git", nil},

		{"runtime python", "runtime: Python\n", func(m *Manifest) any { return m.Runtime }, "python", nil},
		{"runtime exec", "runtime: exec\ncommand: [./bin/plugin, --serve]\n", func(m *Manifest) any { return []any{m.Runtime, m.Command} },
			[]any{"exec", []string{"./bin/plugin", "--serve"}}, nil},
		{"runtime exec one word", "runtime: exec\ncommand: ./plugin\n", func(m *Manifest) any { return m.Command }, []string{"./plugin"}, nil},
		{"runtime unknown", "runtime: node\n", func(m *Manifest) any { return m.Runtime }, "",
			[]string{`runtime "node" is not supported (use python or exec); using the default`}},
		{"command without exec", "command: [x]\n", func(m *Manifest) any { return m.Command }, []string{"x"},
			[]string{"command is only used with runtime: exec"}},

		{"duplicate key", "name: a\nname: b\n", func(m *Manifest) any { return m.Name }, "b",
			[]string{`field "name" appears more than once (lines 1 and 2); the last one is used`}},
		{"duplicate key general decoder", "name: &x a\nname: b\n", func(m *Manifest) any { return m.Name }, "b",
			[]string{`field "name" appears more than once (lines 1 and 2)`}},

		{"unknown fields v1 are quiet", "name: x\nzeta: 1\nalpha: 2\n", func(m *Manifest) any { return m.UnknownFields }, []string{"alpha", "zeta"}, nil},
		{"unknown fields v2 warn", "manifest_version: 2\nzeta: 1\nalpha: 2\nhermes: x\n", func(m *Manifest) any { return m.UnknownFields },
			[]string{"alpha", "zeta"}, []string{"unknown manifest field(s) ignored: alpha, zeta"}},
		{"accepted upstream fields are known", "label: L\nplatforms: [linux]\nhooks: [a]\npip_dependencies: [x]\ndepends: [y]\n",
			func(m *Manifest) any { return m.UnknownFields }, []string(nil), nil},

		{"empty document", "", func(m *Manifest) any { return []any{m.Name, m.ManifestVersion, len(m.Raw)} }, []any{"demo", 1, 0}, nil},
		{"BOM", "\uFEFFname: bom\n", func(m *Manifest) any { return m.Name }, "bom", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, warns := parseOK(t, tt.src)
			if got := tt.check(m); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
			checkWarnings(t, warns, tt.warns...)
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string // substring of the error
	}{
		{"syntax error names file and line", "name: x\ndescription: [unclosed\nversion: 1\n", file + ":3:"},
		// The line and column of the offending ':', as PyYAML reports them.
		{"bad indentation", "name: x\n  bad: y\n", file + ":2:6: invalid YAML: mapping value is not allowed"},
		{"bad indentation after a number", "name: x\nversion: 1\n  bad: indent\n", file + ":3:6: invalid YAML: mapping value"},
		{"second colon on a line", "name: a: b\n", file + ":1:8: invalid YAML: mapping value"},
		{"top level list", "- a\n- b\n", file + ":1: the top level must be a mapping of manifest fields (name: ..., version: ...), not a list"},
		{"top level scalar", "just text\n", "not a string"},
		{"two documents", "name: a\n---\nname: b\n", "more than one YAML document"},
		{"undefined alias", "name: *nope\n", file + ":1:"},
		{"exec without command", "runtime: exec\n", file + ": runtime exec needs a command"},
		// 9^9 values once expanded: refused before decoding, not an out-of-memory crash.
		{"alias bomb", "name: x\n" + yamlbomb.Source(), "aliases expand to more than 1000000 values"},
		{"exec with bad command", "runtime: exec\ncommand: node index.js\n", "runtime exec needs a command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _, err := Parse([]byte(tt.src), file, "demo")
			if err == nil {
				t.Fatalf("Parse succeeded with %+v, want an error containing %q", m, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q does not contain %q", err, tt.want)
			}
		})
	}
	var se *SyntaxError
	_, _, err := Parse([]byte("a: [\n"), file, "demo")
	if !errors.As(err, &se) || se.Line == 0 || se.File != file {
		t.Fatalf("error %v is not a *SyntaxError with file and line", err)
	}
}

func TestParseRawKeepsWholeDocument(t *testing.T) {
	m, _ := parseOK(t, "name: x\ncustom:\n  nested: [1, two]\n")
	want := map[string]any{"name": "x", "custom": map[string]any{"nested": []any{uint64(1), "two"}}}
	if !reflect.DeepEqual(m.Raw, want) {
		t.Fatalf("Raw = %#v, want %#v", m.Raw, want)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadDir(t *testing.T) {
	tests := []struct {
		name        string
		files       map[string]string
		wantErr     error
		wantFile    string
		wantName    string
		wantKind    string
		wantRuntime string
	}{
		{"no manifest", map[string]string{"__init__.py": ""}, ErrNoManifest, "", "", "", ""},
		{"yaml", map[string]string{"plugin.yaml": "name: a\n", "__init__.py": "def register(ctx): pass\n"},
			nil, "plugin.yaml", "a", "standalone", "python"},
		{"yml", map[string]string{"plugin.yml": "name: b\n"}, nil, "plugin.yml", "b", "standalone", "python"},
		{"yaml wins over yml", map[string]string{"plugin.yaml": "name: a\n", "plugin.yml": "name: b\n"}, nil, "plugin.yaml", "a", "standalone", "python"},
		{"memory provider detected", map[string]string{"plugin.yaml": "name: m\n", "__init__.py": "from agent import MemoryProvider\n"},
			nil, "plugin.yaml", "m", "exclusive", "python"},
		{"register_memory_provider detected", map[string]string{"plugin.yaml": "{}\n", "__init__.py": "ctx.register_memory_provider(x)\n"},
			nil, "plugin.yaml", "dir", "exclusive", "python"},
		{"model provider detected", map[string]string{"plugin.yaml": "name: p\n", "__init__.py": "p = ProviderProfile()\nregister_provider(p)\n"},
			nil, "plugin.yaml", "p", "model-provider", "python"},
		{"register_provider alone is standalone", map[string]string{"plugin.yaml": "name: p\n", "__init__.py": "register_provider(p)\n"},
			nil, "plugin.yaml", "p", "standalone", "python"},
		{"declared kind is not overridden", map[string]string{"plugin.yaml": "kind: standalone\n", "__init__.py": "MemoryProvider\n"},
			nil, "plugin.yaml", "dir", "standalone", "python"},
		{"marker past 8192 bytes is not seen", map[string]string{"plugin.yaml": "name: p\n", "__init__.py": strings.Repeat("#", 8192) + "MemoryProvider\n"},
			nil, "plugin.yaml", "p", "standalone", "python"},
		{"without __init__.py the runtime is still python (load time says what is missing)", map[string]string{"plugin.yaml": "kind: backend\n"},
			nil, "plugin.yaml", "dir", "backend", "python"},
		{"exec runtime kept", map[string]string{"plugin.yaml": "runtime: exec\ncommand: [./run]\n", "__init__.py": ""},
			nil, "plugin.yaml", "dir", "standalone", "exec"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "dir")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, content := range tt.files {
				writeFile(t, filepath.Join(dir, name), content)
			}
			m, _, err := LoadDir(dir)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("LoadDir error = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := []string{filepath.Base(m.File), m.Name, m.Kind, m.Runtime}
			want := []string{tt.wantFile, tt.wantName, tt.wantKind, tt.wantRuntime}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("file, name, kind, runtime = %q, want %q", got, want)
			}
		})
	}
}

func TestLoadDirRejectsHugeManifest(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "plugin.yaml"), "description: "+strings.Repeat("x", maxManifestSize)+"\n")
	if _, _, err := LoadDir(dir); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("LoadDir error = %v, want a size error", err)
	}
}

func TestCheckRequiresHermes(t *testing.T) {
	tests := []struct {
		spec, running string
		ok            bool
	}{
		{"", "0.1.0", true},
		{">=0.19", "0.19.0", true},
		{">=0.19", "0.18.9", false},
		{"0.19", "0.18", false}, // bare version means >=
		{"0.19", "0.20", true},
		{">0.19", "0.19.0", false},
		{"<1.0", "0.99.1", true},
		{"<=1.0", "1.0.0", true},
		{"==1.2", "1.2.0", true},
		{"!=1.2", "1.2.0", false},
		{">=0.19, <0.21", "0.20.5", true},
		{">=0.19, <0.21", "0.21.0", false},
		{" >= 0.19 ,, ", "0.19", true},
		{">=v0.19.1-rc1", "v0.19.1+build", true},
		{">=0.19", "v0.20.0-rc2", true},
		{">=1.2.3.4", "1.2.3", true}, // parts past the third are ignored
		{"~=1.0", "0.1", true},       // unknown operator: unparseable, permissive
		{">=banana", "0.1", true},
		{">=0.19", "dev", true}, // unparseable running version is permissive
		{">=", "0.1", true},
		{">=0.19, >=banana", "0.18", false},
	}
	for _, tt := range tests {
		err := CheckRequiresHermes(tt.spec, tt.running)
		if (err == nil) != tt.ok {
			t.Errorf("CheckRequiresHermes(%q, %q) = %v, want ok=%v", tt.spec, tt.running, err, tt.ok)
		}
		if err != nil {
			want := "requires hermes " + tt.spec + ", running " + tt.running
			if err.Error() != want {
				t.Errorf("error %q, want %q", err, want)
			}
		}
	}
}

func TestKnownCapability(t *testing.T) {
	for _, id := range KnownCapabilities() {
		if !KnownCapability(id) {
			t.Errorf("KnownCapability(%q) = false", id)
		}
	}
	for _, id := range []string{"", "tools", "gateway.raw_events", "Tools.Override", " tools.override"} {
		if KnownCapability(id) {
			t.Errorf("KnownCapability(%q) = true", id)
		}
	}
	if n := len(KnownCapabilities()); n != 8 {
		t.Errorf("%d known capabilities, want 8", n)
	}
}

func TestDetectKind(t *testing.T) {
	for src, want := range map[string]string{
		"":                                     "",
		"class X(MemoryProvider): pass":        "exclusive",
		"ctx.register_memory_provider(x)":      "exclusive",
		"register_provider(ProviderProfile())": "model-provider",
		"ProviderProfile only":                 "",
		"MemoryProvider and ProviderProfile and register_provider": "exclusive",
	} {
		if got := DetectKind(src); got != want {
			t.Errorf("DetectKind(%q) = %q, want %q", src, got, want)
		}
	}
}
