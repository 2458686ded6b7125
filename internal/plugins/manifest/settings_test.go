package manifest

import (
	"strings"
	"testing"
)

func TestValidateSettings(t *testing.T) {
	const schemaYAML = `name: p
config_schema:
  api_key: {type: str, required: true}
  region: {type: string, default: eu}
  retries: {type: int}
  count: {type: integer}
  ratio: {type: float}
  weight: {type: number}
  verbose: {type: bool}
  debug: {type: boolean}
  tags: {type: list}
  hosts: {type: array}
  extra: {type: dict}
  opts: {type: object}
  anything: {description: no type}
  odd: {type: matrix}
`
	m, _, err := Parse([]byte(schemaYAML), "plugin.yaml", "p")
	if err != nil {
		t.Fatal(err)
	}
	const pre = "plugins.entries.p.settings."
	tests := []struct {
		name     string
		settings string // YAML mapping, decoded as config.yaml values are
		want     []string
	}{
		{"all good", `{api_key: k, region: us, retries: 3, count: -2, ratio: 0.5, weight: 7, verbose: true, debug: false,
tags: [a], hosts: [], extra: {a: 1}, opts: {}, anything: [1, 2], odd: 5, undeclared: 1}`, nil},
		{"nothing set", `{}`, []string{pre + "api_key is required by the plugin's config_schema but is not set"}},
		{"strings for everything", `{api_key: 1, region: true, retries: "3", count: 1.5, ratio: x, weight: "7",
verbose: "yes", debug: 1, tags: a, hosts: {}, extra: [a], opts: s}`, []string{
			pre + "api_key should be str (got int)",
			pre + "count should be integer (got float)",
			pre + "debug should be boolean (got int)",
			pre + "extra should be dict (got list)",
			pre + "hosts should be array (got dict)",
			pre + "opts should be object (got str)",
			pre + "ratio should be float (got str)",
			pre + "region should be string (got bool)",
			pre + "retries should be int (got str)",
			pre + "tags should be list (got str)",
			pre + "verbose should be bool (got str)",
			pre + "weight should be number (got str)",
		}},
		{"bool is not a number", `{api_key: k, retries: true, ratio: false, weight: true}`, []string{
			pre + "ratio should be float (got bool)",
			pre + "retries should be int (got bool)",
			pre + "weight should be number (got bool)",
		}},
		{"int satisfies float and number", `{api_key: k, ratio: 2, weight: -3}`, nil},
		{"null is NoneType, and a null required key is set", `{api_key: null, tags: ~}`, []string{
			pre + "api_key should be str (got NoneType)",
			pre + "tags should be list (got NoneType)",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := decodeYAML([]byte(tc.settings), "config.yaml")
			if err != nil {
				t.Fatal(err)
			}
			got := ValidateSettings(m.ConfigSchema, d.Doc, "p")
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
	if got := ValidateSettings(nil, map[string]any{"a": 1}, "p"); got != nil {
		t.Errorf("no schema: %q, want nothing", got)
	}
}

func TestEntrySettings(t *testing.T) {
	s := map[string]any{"a": "s"}
	c := map[string]any{"a": "c"}
	tests := []struct {
		name  string
		entry map[string]any
		want  map[string]any
	}{
		{"settings", map[string]any{"settings": s, "config": c}, s},
		{"legacy config when settings is absent", map[string]any{"config": c}, c},
		{"null settings falls back to config", map[string]any{"settings": nil, "config": c}, c},
		{"empty settings wins", map[string]any{"settings": map[string]any{}, "config": c}, map[string]any{}},
		{"neither is a mapping", map[string]any{"settings": "x", "config": []any{}}, nil},
		{"no entry", nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := EntrySettings(tc.entry)
			if (got == nil) != (tc.want == nil) || (got != nil && got["a"] != tc.want["a"]) {
				t.Errorf("EntrySettings = %v, want %v", got, tc.want)
			}
		})
	}
}
