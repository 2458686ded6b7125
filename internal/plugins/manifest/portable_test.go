package manifest

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func writeIn(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadPortable(t *testing.T) {
	tests := []struct {
		name, json string
		err        string
		warn       string
		check      func(t *testing.T, m *Manifest)
	}{
		{name: "full", json: `{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "kit", "version": "1.0.0",
			"description": "d", "author": {"name": "Ann", "url": "https://a.example"}, "license": "MIT", "keywords": ["a", 1, "b"]}`,
			check: func(t *testing.T, m *Manifest) {
				if m.Name != "kit" || m.Version != "1.0.0" || m.Author != "Ann, https://a.example" || m.License != "MIT" ||
					!reflect.DeepEqual(m.Tags, []string{"a", "b"}) || !m.Portable || m.Runtime != "portable" {
					t.Errorf("manifest %+v", m)
				}
			}},
		{name: "author string", json: `{"name": "kit", "author": "Ann"}`, check: func(t *testing.T, m *Manifest) {
			if m.Author != "Ann" {
				t.Errorf("author %q", m.Author)
			}
		}},
		{name: "unknown field", json: `{"name": "kit", "mcpServers": "./mcp.json"}`, warn: "unknown field(s) ignored: mcpServers"},
		{name: "wrong type", json: `{"name": "kit", "version": 2}`, warn: `"version" should be a string, not a number`},
		{name: "other schema", json: `{"$schema": "https://agent-plugins.org/schemas/2.0.0/plugin.schema.json", "name": "kit"}`, warn: "not an Agent Plugins 1.x schema"},
		{name: "not json", json: `{"name": `, err: "is not valid JSON"},
		{name: "array", json: `[1]`, err: "must be a JSON object"},
		{name: "null", json: `null`, err: "not null"},
		{name: "no name", json: `{}`, err: `has no "name"`},
		{name: "name not a string", json: `{"name": 3}`, err: `"name" must be a string, not a number`},
		{name: "name unsafe", json: `{"name": "../up"}`, err: "must be lower case letters"},
		{name: "name upper", json: `{"name": "Kit"}`, err: "must be lower case letters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeIn(t, dir, "plugin.json", tt.json)
			m, warns, err := LoadPortable(dir)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.warn != "" && !strings.Contains(strings.Join(warns, "\n"), tt.warn) {
				t.Errorf("warnings %q lack %q", warns, tt.warn)
			}
			if tt.warn == "" && len(warns) > 0 {
				t.Errorf("unexpected warnings %q", warns)
			}
			if tt.check != nil {
				tt.check(t, m)
			}
		})
	}
	if _, _, err := LoadPortable(t.TempDir()); err != ErrNoPortable {
		t.Errorf("empty dir: err = %v, want ErrNoPortable", err)
	}
}

func TestPortableNamespace(t *testing.T) {
	tests := []struct{ name, key, want string }{
		{"fs-kit", "fs-kit", "agent-plugin-fs-kit-703b03b9"}, // sha256("fs-kit")[:8]
		{"My_Kit.v2", "fs-kit", "agent-plugin-my-kit-v2-703b03b9"},
		{"...", "fs-kit", "agent-plugin-plugin-703b03b9"},
	}
	for _, tt := range tests {
		if got := PortableNamespace(tt.name, tt.key); got != tt.want {
			t.Errorf("PortableNamespace(%q, %q) = %q, want %q", tt.name, tt.key, got, tt.want)
		}
	}
}

func TestLoadPortableMCP(t *testing.T) {
	dir := t.TempDir()
	writeIn(t, dir, "mcp.json", `{"mcpServers": {
		"fs": {"type": "stdio", "command": "${PLUGIN_ROOT}/bin/server", "args": ["--root", "${PLUGIN_ROOT}/data"], "env": {"A": "b"}},
		"web": {"url": "https://mcp.example/mcp", "headers": {"Authorization": "Bearer x"}},
		"implicit": {"command": "node"},
		"sse": {"type": "sse", "url": "https://x/sse"},
		"empty": {"type": "stdio", "command": " "},
		"badurl": {"type": "streamable-http", "url": "ftp://x"},
		"badargs": {"command": "x", "args": "a b"},
		"badenv": {"command": "x", "env": {"A": 1}},
		"weird type": {"command": "x"},
		"odd": {"type": "grpc", "command": "x"},
		"notobj": 3
	}}`)
	servers, warns, err := LoadPortableMCP(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]PortableServer{}
	for _, s := range servers {
		got[s.Name] = s
	}
	if len(got) != 3 {
		t.Fatalf("servers = %+v", servers)
	}
	if fs := got["fs"]; fs.Command != dir+"/bin/server" || !reflect.DeepEqual(fs.Args, []string{"--root", dir + "/data"}) || fs.Env["A"] != "b" {
		t.Errorf("fs = %+v", fs)
	}
	if w := got["web"]; w.Type != "streamable-http" || w.Headers["Authorization"] != "Bearer x" {
		t.Errorf("web = %+v", w)
	}
	if got["implicit"].Type != "stdio" {
		t.Errorf("implicit = %+v", got["implicit"])
	}
	all := strings.Join(warns, "\n")
	for _, w := range []string{`"sse" left out: type sse is not supported`, `"empty" left out: a stdio server needs a non-empty "command"`,
		`"badurl" left out: a streamable-http server needs a "url"`, `"badargs" left out: "args" must be a list`,
		`"badenv" left out: env.A must be a string`, `"weird type" left out: a server name must be`, `"odd" left out: type "grpc"`,
		`"notobj" left out: must be an object`} {
		if !strings.Contains(all, w) {
			t.Errorf("warnings lack %q:\n%s", w, all)
		}
	}
	for _, bad := range []struct{ json, err string }{
		{`{"servers": {}}`, `needs an "mcpServers" object`},
		{`{"mcpServers": [1]}`, `needs an "mcpServers" object`},
		{`not json`, "is not a JSON object"},
		{`null`, "is not a JSON object"},
	} {
		d := t.TempDir()
		writeIn(t, d, "mcp.json", bad.json)
		if _, _, err := LoadPortableMCP(d); err == nil || !strings.Contains(err.Error(), bad.err) {
			t.Errorf("%s: err = %v, want %q", bad.json, err, bad.err)
		}
	}
	if s, w, err := LoadPortableMCP(t.TempDir()); s != nil || w != nil || err != nil {
		t.Errorf("no mcp.json: %v %v %v", s, w, err)
	}
}
