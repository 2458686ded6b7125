package manifest

import "testing"

// FuzzParse checks that Parse never panics and that a returned manifest
// always has a name when the directory has one.
func FuzzParse(f *testing.F) {
	seeds := []string{
		"",
		"name: hello-world\nversion: \"1.0\"\ndescription: A minimal example plugin\n",
		benchManifest,
		"name: ..\n",
		"name: a/b\n",
		"name: [x]\n",
		"name: ''\n",
		"name: &a x\nalias: *a\n",
		"manifest_version: 2\nzeta: 1\n",
		"manifest_version: x\napi_version: [1]\n",
		"runtime: exec\ncommand: [./x]\n",
		"runtime: exec\n",
		"requires_env:\n  - FOO\n  - {name: BAR, secret: true}\n",
		"requires_plugins: [a, {id: b, version_range: '>=1'}]\n",
		"config_schema:\n  k: {type: int, default: 3, required: true}\n",
		"capabilities: [tools.override, bogus]\n",
		"author: {name: Jo, email: jo@x}\n",
		"a: [\n",
		"- list\n",
		"a: &x [*x]\n",
		"a: b\na: c\n",
		"\uFEFFname: bom\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s), "demo")
	}
	f.Add([]byte("name: x\n"), "")
	f.Fuzz(func(t *testing.T, data []byte, dirName string) {
		m, _, err := Parse(data, "plugin.yaml", dirName)
		if err != nil {
			return
		}
		if m == nil {
			t.Fatal("Parse returned neither a manifest nor an error")
		}
		if dirName != "" && m.Name == "" {
			t.Fatalf("empty name for dir %q from %q", dirName, data)
		}
		if m.Raw == nil {
			t.Fatal("Raw is nil")
		}
		if m.Runtime == "exec" && len(m.Command) == 0 {
			t.Fatal("exec runtime without a command was accepted")
		}
		for _, c := range m.Capabilities {
			if !KnownCapability(c) {
				t.Fatalf("unknown capability %q kept", c)
			}
		}
	})
}
