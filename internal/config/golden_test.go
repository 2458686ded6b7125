package config

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/golden files from the current output")

// goldenCases edit a file and compare the exact bytes with testdata/golden/<name>.yaml.
// An input of "@realistic" is testdata/realistic.yaml: comments (full-line and inline),
// blank lines between sections, flow lists, a 4-space block and quoted strings.
var goldenCases = []struct {
	name string
	in   string
	edit func(d *Doc) error
}{
	{"append_block_list", "@realistic", func(d *Doc) error { return mustChange(d.ListAppend("plugins.enabled", "my-plugin")) }},
	{"remove_block_list", "@realistic", func(d *Doc) error { return mustChange(d.ListRemove("plugins.enabled", "hello-world")) }},
	{"append_flow_list", "@realistic", func(d *Doc) error { return mustChange(d.ListAppend("plugins.disabled", "another")) }},
	{"remove_flow_list", "@realistic", func(d *Doc) error { return mustChange(d.ListRemove("plugins.disabled", "legacy-tool")) }},
	{"append_flow_list_four_space", "@realistic", func(d *Doc) error { return mustChange(d.ListAppend("model.fallbacks", "mistral/large")) }},
	{"set_nested_new_key", "@realistic", func(d *Doc) error {
		return d.Set("plugins.entries.my-plugin.settings.endpoint", "https://example.test/v1")
	}},
	{"set_plugin_id_with_slash_and_dot", "@realistic", func(d *Doc) error {
		return d.SetPath([]string{"plugins", "entries", "observability/langfuse.v2", "settings", "sample_rate"}, 0.5)
	}},
	{"replace_scalar_four_space", "@realistic", func(d *Doc) error { return d.Set("model.temperature", 0.2) }},
	{"replace_quoted_keeps_comment", "@realistic", func(d *Doc) error {
		return d.Set("plugins.entries.hello-world.settings.greeting", "Hello, world")
	}},
	{"replace_block_list_with_new_list", "@realistic", func(d *Doc) error {
		return d.Set("plugins.enabled", []string{"alpha", "beta"})
	}},
	{"delete_key", "@realistic", func(d *Doc) error { return mustChange(d.Delete("plugins.hook_callback_timeout")) }},
	{"delete_only_key_leaves_empty_mapping", "@realistic", func(d *Doc) error { return mustChange(d.Delete("security.approval.transport")) }},
	{"set_new_top_level_section", "@realistic", func(d *Doc) error { return d.Set("memory.provider", "") }},
	{"set_in_empty_file", "", func(d *Doc) error { return mustChange(d.ListAppend("plugins.enabled", "hello-world")) }},
	{"set_in_comment_only_file", "# my hermes config\n", func(d *Doc) error { return d.Set("plugins.hook_callback_timeout", 45) }},
	{"plugins_empty", "model:\n  default: x\n\nplugins:   # to do\n\nmemory:\n  provider: \"\"\n", func(d *Doc) error {
		return mustChange(d.ListAppend("plugins.enabled", "hello-world"))
	}},
	{"plugins_null", "plugins: null\n# end\n", func(d *Doc) error { return d.Set("plugins.enabled", []string{}) }},
	{"flush_dash_list_append", "plugins:\n  enabled:\n  - a   # first\n  - b\n  disabled: []\n", func(d *Doc) error {
		return mustChange(d.ListAppend("plugins.enabled", "c"))
	}},
	{"remove_last_item_leaves_empty_list", "plugins:\n  enabled:\n    - only   # going\n  # keep me\n", func(d *Doc) error {
		return mustChange(d.ListRemove("plugins.enabled", "only"))
	}},
	// Anchors stay, and what their aliases and merge keys read changes with them.
	{"anchored_child_seen_through_merge", anchored, func(d *Doc) error { return d.Set("base.url", "http://b") }},
	{"anchored_new_child", anchored, func(d *Doc) error { return d.Set("base.timeout", 30) }},
	{"anchored_scalar_keeps_anchor", anchored, func(d *Doc) error { return d.Set("name", "bob") }},
	{"anchored_flow_list_keeps_anchor", anchored, func(d *Doc) error { return d.Set("list", []any{3}) }},
	{"crlf_line_endings", "plugins:\r\n  enabled:\r\n    - a\r\n", func(d *Doc) error {
		if err := mustChange(d.ListAppend("plugins.enabled", "b")); err != nil {
			return err
		}
		return d.Set("plugins.entries.b.settings.on", true)
	}},
}

const anchored = `base: &b
  url: http://a   # the default
  key: k1
prod:
  <<: *b
  key: k2
name: &n alice
owner: *n
list: &l [1, 2]
list2: *l
`

func mustChange(changed bool, err error) error {
	if err == nil && !changed {
		return errUnchanged
	}
	return err
}

type constErr string

func (e constErr) Error() string { return string(e) }

const errUnchanged = constErr("edit reported no change")

func TestGolden(t *testing.T) {
	realistic, err := os.ReadFile(filepath.Join("testdata", "realistic.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			if tc.in == "@realistic" {
				in = realistic
			}
			d, err := Parse(in, "config.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.edit(d); err != nil {
				t.Fatal(err)
			}
			got := d.Bytes()
			path := filepath.Join("testdata", "golden", tc.name+".yaml")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGolden -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("bytes differ from %s\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
			}
			// The golden output must itself be a valid config that parses again.
			if _, err := Parse(got, "config.yaml"); err != nil {
				t.Errorf("golden output does not parse: %v", err)
			}
		})
	}
}

func realisticForTest(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "realistic.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func BenchmarkParse(b *testing.B) {
	src, err := os.ReadFile(filepath.Join("testdata", "realistic.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Parse(src, "config.yaml"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkListAppend(b *testing.B) {
	src, err := os.ReadFile(filepath.Join("testdata", "realistic.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	d0, err := Parse(src, "config.yaml")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		d := *d0
		if _, err := d.ListAppend("plugins.enabled", "bench"); err != nil {
			b.Fatal(err)
		}
	}
}
