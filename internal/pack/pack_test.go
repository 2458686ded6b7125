package pack

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/install"
)

const sha1 = "e905f3bc5eeaa5a9dab9bc5155601b3ebec75757"
const sha2 = "8F3C2D1A9B4E5F6071829304A5B6C7D8E9F00112"

const good = `name: voice-assistant-pack
description: STT + streaming TTS + approval relay
author: hyper
version: 1.0.0
plugins:
  - name: hermes-media-studio
    ref: ` + sha1 + `
  - repo: github:owner/approval-relay
    version: ` + sha2 + `
    subdir: /plugins/relay/
  - source: https://git.example.com/team/tool.git
    ref: ` + sha1 + `
config:
  hermes-media-studio:
    default_model: flux-3
    nested: {list: [1, two, {deep: true}]}
skills: [a, b]
`

func TestParseGood(t *testing.T) {
	p, err := Parse([]byte(good), "hermes-pack.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "voice-assistant-pack" || p.Version != "1.0.0" || p.Author != "hyper" || len(p.Plugins) != 3 {
		t.Fatalf("%+v", p)
	}
	e := p.Plugins[1]
	if e.Repo != "owner/approval-relay" || e.Ref != strings.ToLower(sha2) || e.Subdir != "plugins/relay" {
		t.Fatalf("%+v", e)
	}
	if e.Source != (install.Source{URL: "https://github.com/owner/approval-relay.git", Subdir: "plugins/relay"}) {
		t.Fatalf("source %+v", e.Source)
	}
	if e.Identifier() != "owner/approval-relay/plugins/relay" {
		t.Fatal(e.Identifier())
	}
	if p.Plugins[0].Resolved() || p.Plugins[0].Label() != "'hermes-media-studio'" {
		t.Fatalf("%+v", p.Plugins[0])
	}
	if p.Plugins[2].Source.URL != "https://git.example.com/team/tool.git" {
		t.Fatalf("%+v", p.Plugins[2])
	}
	if p.Config["hermes-media-studio"]["default_model"] != "flux-3" || !reflect.DeepEqual(p.Skills, []string{"a", "b"}) {
		t.Fatalf("%+v", p)
	}
}

func TestParseNestedMetadata(t *testing.T) {
	p, err := Parse([]byte("pack: {name: nested, version: 2}\nplugins:\n  - repo: o/r\n    ref: "+sha1+"\nextra: 1\n"), "x")
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "nested" || p.Version != "2" || len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "unknown key 'extra'") {
		t.Fatalf("%+v", p)
	}
}

// Every validation rule of reference §8.1, each with a message naming the entry.
func TestParseRefuses(t *testing.T) {
	entry := func(body string) string { return "name: p\nplugins:\n  - " + body + "\n" }
	cases := []struct{ name, doc, want string }{
		{"not yaml", "name: [unclosed\n", "Pack src is not valid YAML"},
		{"not mapping", "- a\n- b\n", "Pack src must be a YAML mapping."},
		{"empty", "", "Pack src must be a YAML mapping."},
		{"scalar", "just text\n", "Pack src must be a YAML mapping."},
		{"no name", "plugins: [{repo: o/r, ref: " + sha1 + "}]\n", "Pack src is missing a 'name'."},
		{"blank name", "name: '  '\nplugins: [{repo: o/r, ref: " + sha1 + "}]\n", "missing a 'name'"},
		{"no plugins", "name: p\n", "must declare a non-empty 'plugins' list."},
		{"empty plugins", "name: p\nplugins: []\n", "must declare a non-empty 'plugins' list."},
		{"plugins mapping", "name: p\nplugins: {a: 1}\n", "non-empty 'plugins' list"},
		{"entry scalar", entry("owner/repo"), "Pack plugin entry 'owner/repo' must be a mapping."},
		{"entry list", entry("[1, 2]"), "Pack plugin entry #1 must be a mapping."},
		{"neither", entry("{ref: " + sha1 + "}"), "Pack plugin entry #1 needs either 'name' (catalog) or 'repo'"},
		{"no ref", entry("{repo: o/r}"), "Pack plugin entry 'o/r' has ref None: refs must be exact 40-character commit SHAs"},
		{"tag ref", entry("{repo: o/r, ref: v1.2.3}"), "Pack plugin entry 'o/r' has ref 'v1.2.3': refs must be exact 40-character commit SHAs (tags and branch names are rejected"},
		{"branch ref", entry("{name: tg, ref: main}"), "entry 'tg' has ref 'main'"},
		{"short sha", entry("{repo: o/r, ref: e905f3b}"), "has ref 'e905f3b'"},
		{"41 hex", entry("{repo: o/r, ref: " + sha1 + "a}"), "refs must be exact"},
		{"int ref", entry("{repo: o/r, ref: 1234}"), "has ref '1234'"},
		{"unknown entry key", entry("{repo: o/r, ref: " + sha1 + ", branch: main}"), "entry 'o/r' has unknown key(s) branch"},
		{"http repo", entry("{repo: 'http://example.com/o/r.git', ref: " + sha1 + "}"), "http://, file:// and local paths are refused"},
		{"file repo", entry("{repo: 'file:///tmp/r.git', ref: " + sha1 + "}"), "entry 'file:///tmp/r.git': repo 'file:///tmp/r.git' is not allowed"},
		{"local path", entry("{repo: /tmp/r, ref: " + sha1 + "}"), "is not allowed"},
		{"relative path", entry("{repo: ../r, ref: " + sha1 + "}"), "is not allowed"},
		{"ftp repo", entry("{repo: 'ftp://h/r', ref: " + sha1 + "}"), "is not allowed"},
		{"bad shorthand", entry("{repo: 'o/r;rm -rf ~', ref: " + sha1 + "}"), "whitespace"},
		{"subdir escape", entry("{repo: o/r, subdir: ../../etc, ref: " + sha1 + "}"), "escapes the repository"},
		{"subdir empty", entry("{repo: o/r, subdir: '/', ref: " + sha1 + "}"), "'subdir' must be a non-empty path"},
		{"subdir on name", entry("{name: x, subdir: a, ref: " + sha1 + "}"), "'subdir' needs 'repo'"},
		{"repo not string", entry("{repo: [o, r], ref: " + sha1 + "}"), "'repo' must be a string"},
		{"duplicate", "name: p\nplugins:\n  - {repo: o/r, ref: " + sha1 + "}\n  - {repo: 'https://github.com/o/r.git', ref: " + sha1 + "}\n", "entries 'o/r' and 'https://github.com/o/r.git' install the same source"},
		{"config list", "name: p\nplugins: [{repo: o/r, ref: " + sha1 + "}]\nconfig: [a]\n", "'config' must be a mapping"},
		{"config value scalar", "name: p\nplugins: [{repo: o/r, ref: " + sha1 + "}]\nconfig: {r: 1}\n", "config for 'r' must be a mapping"},
		{"skills mapping", "name: p\nplugins: [{repo: o/r, ref: " + sha1 + "}]\nskills: {a: 1}\n", "'skills' must be a list."},
		{"two docs", "name: p\n---\nname: q\n", "more than one YAML document"},
		{"custom tag", "name: !!python/object:os.system p\nplugins: [{repo: o/r, ref: " + sha1 + "}]\n", "not supported in a pack"},
		{"duplicate key", "name: p\nname: q\nplugins: [{repo: o/r, ref: " + sha1 + "}]\n", "already defined"},
		{"int key", "name: p\n1: x\nplugins: [{repo: o/r, ref: " + sha1 + "}]\n", "mapping keys must be strings"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.doc), "src")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("not a *pack.Error: %T", err)
			}
		})
	}
}

// Secret-shaped and reserved keys are refused at any depth, including keys that
// only appear through anchors, aliases and merge keys.
func TestParseRefusesSeeds(t *testing.T) {
	head := "name: p\nplugins: [{repo: o/r, ref: " + sha1 + "}]\n"
	cases := []struct{ name, doc, want string }{
		{"token", "config: {r: {bot_token: x}}", "config for 'r' sets secret-shaped key 'bot_token' (at 'bot_token'): secrets never travel in packs"},
		{"api-key", "config: {r: {API-Key: x}}", "secret-shaped key 'API-Key'"},
		{"password deep", "config: {r: {a: {b: {Passwd: x}}}}", "secret-shaped key 'Passwd' (at 'a.b.Passwd')"},
		{"in list", "config: {r: {servers: [{name: a}, {credentials: x}]}}", "secret-shaped key 'credentials' (at 'servers.[1].credentials')"},
		{"auth", "config: {r: {oauth_url: x}}", "secret-shaped key 'oauth_url'"},
		{"private key", "config: {r: {private-key: x}}", "secret-shaped key 'private-key'"},
		{"granted", "config: {r: {granted_capabilities: [tools.override]}}", "sets reserved key 'granted_capabilities' (at 'granted_capabilities'): packs cannot pre-grant capabilities or trust gates"},
		{"consent", "config: {r: {capabilities_consent: {hash: x}}}", "reserved key 'capabilities_consent'"},
		{"allow_", "config: {r: {allow_tool_override: true}}", "reserved key 'allow_tool_override'"},
		{"allow_ nested", "config: {r: {llm: {allow_model_override: true}}}", "reserved key 'allow_model_override' (at 'llm.allow_model_override')"},
		{"mcp allowlist", "config: {r: {mcp_allowlist: [a]}}", "reserved key 'mcp_allowlist'"},
		{"merge smuggle", "base: &b {api_key: x}\nconfig:\n  r:\n    <<: *b\n    model: m\n", "secret-shaped key 'api_key'"},
		{"merge list smuggle", "one: &o {a: 1}\ntwo: &t {allow_platform_actions: true}\nconfig:\n  r:\n    <<: [*o, *t]\n", "reserved key 'allow_platform_actions'"},
		{"alias smuggle", "x: &s {secret: 1}\nconfig: {r: {nested: *s}}", "secret-shaped key 'secret' (at 'nested.secret')"},
		{"alias key", "k: &k token\nconfig: {r: {*k : 1}}", "secret-shaped key 'token'"},
		{"quoted escape key", "config: {r: {\"api\\u005fkey\": x}}", "secret-shaped key 'api_key'"},
		{"omap", "config: {r: {o: !!omap [{a: 1}, {password: 2}]}}", "secret-shaped key 'password'"},
		{"pairs", "config: {r: {o: !!pairs [{session_token: 2}]}}", "secret-shaped key 'session_token'"},
		{"explicit key", "config: {r: {? AUTH_HEADER : x}}", "secret-shaped key 'AUTH_HEADER'"},
		{"empty key", "config: {r: {'': x}}", "empty key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(head+c.doc+"\n"), "src")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
	// Innocent keys pass.
	if _, err := Parse([]byte(head+"config: {r: {default_model: flux, keyboard: us, monkey: 1, author_name: x}}\n"), "src"); err == nil {
		// author_name contains "auth": upstream's regex is deliberately broad.
		t.Fatal("author_name should be refused by the broad upstream pattern")
	}
	if _, err := Parse([]byte(head+"config: {r: {default_model: flux, keyboard: us, monkey: 1}}\n"), "src"); err != nil {
		t.Fatal(err)
	}
}

func TestHostileYAML(t *testing.T) {
	// Billion laughs: 9 levels of 9 aliases.
	var b strings.Builder
	b.WriteString("a0: &a0 [lol]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [", i, i)
		for j := 0; j < 9; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	b.WriteString("name: p\nplugins: [{repo: o/r, ref: " + sha1 + "}]\n")
	if _, err := Parse([]byte(b.String()), "bomb"); err == nil || !strings.Contains(err.Error(), "alias bomb") {
		t.Fatalf("bomb: %v", err)
	}
	cycles := []string{
		"a: &x [*x]\n",
		"a: &x {b: *x}\n",
		"a: &x {<<: *x}\n",
		"a: &x {b: [1, {c: *x}]}\n",
	}
	for _, c := range cycles {
		_, err := Parse([]byte(c), "cyc")
		if err == nil || !strings.Contains(err.Error(), "cyclic") {
			t.Errorf("%q: %v", c, err)
		}
	}
	// The parser is quadratic in depth: these must be refused before it runs.
	for _, deep := range []string{
		"name: " + strings.Repeat("[", 50000) + strings.Repeat("]", 50000),
		"name: " + strings.Repeat("{a: ", 20000) + strings.Repeat("}", 20000),
		strings.Repeat("- ", 50000) + "x",
		"name: [" + strings.Repeat("1,", 200000) + "1]",
	} {
		if _, err := Parse([]byte(deep), "deep"); err == nil || !(errors.Is(err, ErrTooDeep) || strings.Contains(err.Error(), "nesting is too deep") || strings.Contains(err.Error(), "tokens")) {
			t.Errorf("%.20s…: %v", deep, err)
		}
	}
	huge := []byte("name: p\n# " + strings.Repeat("x", MaxSize) + "\n")
	if _, err := Parse(huge, "huge"); err == nil || !strings.Contains(err.Error(), "larger than 1 MiB") {
		t.Errorf("huge: %v", err)
	}
	if _, err := Parse([]byte("a: *nope\n"), "x"); err == nil || !strings.Contains(err.Error(), "not valid YAML") {
		t.Errorf("undefined alias: %v", err)
	}
}

func TestStrip(t *testing.T) {
	in := map[string]any{
		"model": "m", "bot_token": "t", "granted_capabilities": []any{"x"},
		"nested":              map[string]any{"Password": "p", "ok": 1, "list": []any{map[string]any{"api_key": 1, "x": 2}}},
		"allow_tool_override": true,
	}
	out, dropped := Strip(in, "")
	want := map[string]any{"model": "m", "nested": map[string]any{"ok": 1, "list": []any{map[string]any{"x": 2}}}}
	if !reflect.DeepEqual(out, want) {
		t.Fatalf("%v", out)
	}
	if strings.Join(dropped, ",") != "allow_tool_override,bot_token,granted_capabilities,nested.Password,nested.list[0].api_key" {
		t.Fatal(dropped)
	}
	if err := CheckSeeds(out, nil); err != nil {
		t.Fatal(err)
	}
}

func TestExportRoundTrip(t *testing.T) {
	rows := []Installed{
		{Name: "relay", Row: &install.Row{Source: "https://github.com/owner/approval-relay.git#plugins/relay", Revision: strings.ToUpper(sha1), Pinned: true}},
		{Name: "tool", Row: &install.Row{Source: "https://git.example.com/team/tool.git", Revision: sha1}},
		{Name: "local"},
		{Name: "disk", Row: &install.Row{Source: "file:///home/me/disk.git", Revision: sha1}},
		{Name: "plain", Row: &install.Row{Source: "http://example.com/p.git", Revision: sha1}},
		{Name: "moving", Row: &install.Row{Source: "https://github.com/o/moving.git", Revision: "abc"}},
	}
	entries := map[string]any{
		"relay": map[string]any{"settings": map[string]any{"mode": "fast", "api_key": "SECRET", "n": 3, "zip": "01234"}, "granted_capabilities": []any{"tools.override"}, "allow_tool_override": true},
		"tool":  map[string]any{"allow_plugin_status": true},
		"local": map[string]any{"settings": map[string]any{"x": 1}},
	}
	ex, err := ExportPack("", rows, entries)
	if err != nil {
		t.Fatal(err)
	}
	y := string(ex.YAML)
	if strings.Contains(y, "SECRET") || strings.Contains(y, "granted") || strings.Contains(y, "allow_") || strings.Contains(y, "/home/me") {
		t.Fatalf("leaked:\n%s", y)
	}
	for _, want := range []string{"# WARNING (not exported): local: no Git provenance", "# WARNING (not exported): disk: installed from a local file://", "# WARNING (not exported): plain: installed over plain http://", "# WARNING (not exported): moving: no exact commit", "name: my-hermes-pack\n", "description: Exported by `hermes plugins pack export`.\n"} {
		if !strings.Contains(y, want) {
			t.Errorf("lacks %q:\n%s", want, y)
		}
	}
	p, err := Parse(ex.YAML, "exported")
	if err != nil {
		t.Fatalf("%v\n%s", err, y)
	}
	if len(p.Plugins) != 2 || p.Plugins[0].Source.Canonical() != rows[0].Row.Source || p.Plugins[0].Ref != sha1 || p.Plugins[1].Source.Canonical() != rows[1].Row.Source {
		t.Fatalf("%+v %+v\n%s", p.Plugins[0], p.Plugins[1], y)
	}
	if p.Plugins[0].Repo != "owner/approval-relay" {
		t.Fatal(p.Plugins[0].Repo)
	}
	wantCfg := map[string]map[string]any{"relay": {"settings": map[string]any{"mode": "fast", "n": 3, "zip": "01234"}}}
	if !reflect.DeepEqual(p.Config, wantCfg) {
		t.Fatalf("config %#v\n%s", p.Config, y)
	}
	if len(ex.Stripped) != 4 {
		t.Fatal(ex.Stripped)
	}
}

func TestNumericLookingSHA(t *testing.T) {
	for _, ref := range []string{strings.Repeat("0", 40), strings.Repeat("1", 39) + "9", "1234567e" + strings.Repeat("1", 32)} {
		p, err := Parse([]byte("name: p\nplugins:\n  - repo: o/r\n    ref: "+ref+"\n"), "x")
		if err != nil || p.Plugins[0].Ref != ref {
			t.Errorf("%s: %v", ref, err)
		}
	}
}

// FuzzParse: no input panics, and nothing accepted carries a secret-shaped or
// reserved seed key or a ref that is not a full SHA.
func FuzzParse(f *testing.F) {
	f.Add([]byte(good))
	f.Add([]byte("a: &a {b: *a}\n"))
	f.Add([]byte("base: &b {x: 1}\nname: p\nplugins: [{repo: o/r, ref: " + sha1 + "}]\nconfig: {r: {<<: *b}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data, "fuzz")
		if err != nil {
			return
		}
		for _, e := range p.Plugins {
			if !shaRE.MatchString(e.Ref) {
				t.Fatalf("ref %q accepted", e.Ref)
			}
		}
		for _, seeds := range p.Config {
			if _, dropped := Strip(seeds, ""); len(dropped) > 0 {
				t.Fatalf("forbidden keys accepted: %v", dropped)
			}
		}
	})
}

func TestExportKeepsNonShorthandURLs(t *testing.T) {
	rows := []Installed{
		{Name: "a", Row: &install.Row{Source: "https://github.com/hermes-go/hermes#examples/plugins/hello-world", Revision: sha1}},
		{Name: "b", Row: &install.Row{Source: "https://github.com/o/b.git", Revision: sha1}},
	}
	ex, err := ExportPack("x", rows, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(ex.YAML, "x")
	if err != nil {
		t.Fatal(err)
	}
	if p.Plugins[0].Source.Canonical() != rows[0].Row.Source || p.Plugins[1].Repo != "o/b" || p.Plugins[1].Source.Canonical() != rows[1].Row.Source {
		t.Fatalf("%+v %+v\n%s", p.Plugins[0], p.Plugins[1], ex.YAML)
	}
}

func TestCatalogProvenanceRoundTrip(t *testing.T) {
	row := &install.Row{Source: "https://github.com/hermes-go/hermes#examples/plugins/hello-world", Revision: sha1, Pinned: true,
		Catalog: &install.CatalogRef{Name: "hello-world", Tier: "official"}}
	ex, err := ExportPack("x", []Installed{{Name: "hello-world", Row: row}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(ex.YAML, "x")
	if err != nil {
		t.Fatal(err)
	}
	e := p.Plugins[0]
	if e.Name != "hello-world" || e.Source.Canonical() != row.Source {
		t.Fatalf("%+v\n%s", e, ex.YAML)
	}
	listed := &install.CatalogRef{Name: "hello-world", Tier: "official", SHA: sha1}
	p.Resolve(context.Background(), func(ctx context.Context, name string) (Resolution, error) {
		return Resolution{Source: install.Source{URL: "https://github.com/hermes-go/hermes", Subdir: "examples/plugins/hello-world"}, Catalog: listed, Capabilities: []string{"1 tools"}}, nil
	})
	if e.Catalog != listed || e.Source.URL != "https://github.com/hermes-go/hermes" {
		t.Fatalf("%+v", e)
	}
	// A catalog entry for another source adds nothing (the repo is what installs).
	e.Catalog = nil
	p.Resolve(context.Background(), func(ctx context.Context, name string) (Resolution, error) {
		return Resolution{Source: install.Source{URL: "https://github.com/evil/fork.git"}, Catalog: listed}, nil
	})
	if e.Catalog != nil || e.Source.URL != "https://github.com/hermes-go/hermes" {
		t.Fatalf("%+v", e)
	}
}
