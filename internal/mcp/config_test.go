package mcp

import (
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	x := Expander{Dotenv: map[string]string{"TOKEN": "from-dotenv", "BOTH": "dotenv-wins"},
		Env: func(k string) string {
			return map[string]string{"BOTH": "env", "ONLY_ENV": "env-value"}[k]
		}, Home: "/home/u", Cwd: "/work/proj"}
	cases := []struct {
		name    string
		tree    map[string]any
		check   func(t *testing.T, c *Config)
		wantErr string
		warn    string
	}{
		{name: "stdio with every key", tree: map[string]any{"mcp_servers": map[string]any{"fs": map[string]any{
			"command": "node", "args": []any{"${userHome}/srv.js", "${workspaceFolder}", 3},
			"env": map[string]any{"A": "${TOKEN}", "B": "${env:BOTH}", "C": "${ONLY_ENV}"}, "cwd": "/tmp",
			"timeout": 30, "connect_timeout": 5.5, "enabled": true, "trust": "untrusted",
			"tools": map[string]any{"include": []any{"read_*"}, "exclude": []any{"x"}, "resources": false, "prompts": false},
		}}}, check: func(t *testing.T, c *Config) {
			s := c.Servers[0]
			if s.Transport != "stdio" || s.Args[0] != "/home/u/srv.js" || s.Args[1] != "/work/proj" || s.Args[2] != "3" {
				t.Fatalf("%+v", s)
			}
			if s.Env["A"] != "from-dotenv" || s.Env["B"] != "dotenv-wins" || s.Env["C"] != "env-value" {
				t.Fatalf("env %v", s.Env)
			}
			if s.Timeout != 30*time.Second || s.ConnectTimeout != 5500*time.Millisecond || s.Trust != TrustUntrusted || s.Resources || s.Prompts {
				t.Fatalf("%+v", s)
			}
			if !s.allowed("read_file") || s.allowed("write_file") {
				t.Fatal("include filter")
			}
		}},
		{name: "defaults", tree: map[string]any{"mcp_servers": map[string]any{"a": map[string]any{"url": "https://x/mcp"}}},
			check: func(t *testing.T, c *Config) {
				s := c.Servers[0]
				if s.Transport != "http" || s.Timeout != DefaultTimeout || s.ConnectTimeout != 60*time.Second || !s.Enabled || s.Trust != TrustFull || !s.Resources {
					t.Fatalf("%+v", s)
				}
				if !s.allowed("anything") {
					t.Fatal("no filter admits all")
				}
			}},
		{name: "exclude", tree: map[string]any{"mcp_servers": map[string]any{"a": map[string]any{"command": "x", "tools": map[string]any{"exclude": []any{"rm*"}}}}},
			check: func(t *testing.T, c *Config) {
				if c.Servers[0].allowed("rmdir") || !c.Servers[0].allowed("ls") {
					t.Fatal("exclude")
				}
			}},
		{name: "empty include registers nothing", tree: map[string]any{"mcp_servers": map[string]any{"a": map[string]any{"command": "x", "tools": map[string]any{"include": []any{}}}}},
			check: func(t *testing.T, c *Config) {
				if c.Servers[0].allowed("ls") {
					t.Fatal("include: [] admitted a tool")
				}
			}},
		{name: "mcp.servers read, mcp_servers wins", tree: map[string]any{
			"mcp":         map[string]any{"servers": map[string]any{"a": map[string]any{"command": "old"}, "b": map[string]any{"command": "b"}}},
			"mcp_servers": map[string]any{"a": map[string]any{"command": "new"}}},
			warn: `MCP server "a" is in both mcp_servers and mcp.servers; using mcp_servers`,
			check: func(t *testing.T, c *Config) {
				if len(c.Servers) != 2 || c.Servers[0].Command != "new" || c.Servers[1].Command != "b" {
					t.Fatalf("%+v", c.Servers)
				}
			}},
		{name: "unset var kept and warned", tree: map[string]any{"mcp_servers": map[string]any{"a": map[string]any{"command": "x", "env": map[string]any{"K": "${NOPE}"}}}},
			warn: "mcp_servers.a.env uses ${NOPE}, which is not set in .env or the environment; kept as written",
			check: func(t *testing.T, c *Config) {
				if c.Servers[0].Env["K"] != "${NOPE}" {
					t.Fatal(c.Servers[0].Env)
				}
			}},
		{name: "unsupported keys warn", tree: map[string]any{"mcp_servers": map[string]any{"a": map[string]any{"url": "http://h/", "oauth": map[string]any{}, "sampling": map[string]any{}, "bogus": 1}}},
			warn: "mcp_servers.a.oauth is not supported by hermes yet; ignored"},
		{name: "unknown trust is untrusted", tree: map[string]any{"mcp_servers": map[string]any{"a": map[string]any{"command": "x", "trust": "medium"}}},
			warn: "treating the server as untrusted", check: func(t *testing.T, c *Config) {
				if c.Servers[0].Trust != TrustUntrusted {
					t.Fatal(c.Servers[0].Trust)
				}
			}},
		{name: "servers not a mapping", tree: map[string]any{"mcp_servers": []any{"a"}}, wantErr: "mcp_servers in config.yaml must be a mapping"},
		{name: "args not a list", tree: map[string]any{"mcp_servers": map[string]any{"a": map[string]any{"command": "x", "args": map[string]any{}}}}, wantErr: "mcp_servers.a.args in config.yaml must be a list of strings, not a mapping"},
		{name: "timeout a string", tree: map[string]any{"mcp_servers": map[string]any{"a": map[string]any{"command": "x", "timeout": "soon"}}}, wantErr: "mcp_servers.a.timeout in config.yaml must be a number of seconds, not a string"},
		{name: "enabled a string", tree: map[string]any{"mcp_servers": map[string]any{"a": map[string]any{"command": "x", "enabled": "yes"}}}, wantErr: "mcp_servers.a.enabled in config.yaml must be true or false"},
		{name: "headers a list", tree: map[string]any{"mcp_servers": map[string]any{"a": map[string]any{"url": "http://h", "headers": []any{"x"}}}}, wantErr: "mcp_servers.a.headers in config.yaml must be a mapping"},
		{name: "neither command nor url", tree: map[string]any{"mcp_servers": map[string]any{"a": map[string]any{"env": map[string]any{}}}}, wantErr: "has neither command nor url"},
		{name: "both", tree: map[string]any{"mcp_servers": map[string]any{"a": map[string]any{"command": "x", "url": "http://h"}}}, wantErr: "has both command and url"},
		{name: "bad url scheme", tree: map[string]any{"mcp_servers": map[string]any{"a": map[string]any{"url": "ftp://h"}}}, wantErr: "must start with http:// or https://"},
		{name: "include not a list", tree: map[string]any{"mcp_servers": map[string]any{"a": map[string]any{"command": "x", "tools": map[string]any{"include": "ls"}}}}, wantErr: "mcp_servers.a.tools.include in config.yaml must be a list"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse(tc.tree, x)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.warn != "" && !strings.Contains(strings.Join(c.Warnings, "\n"), tc.warn) {
				t.Fatalf("warnings %q lack %q", c.Warnings, tc.warn)
			}
			if tc.check != nil {
				tc.check(t, c)
			}
		})
	}
}

func TestToolName(t *testing.T) {
	cases := []struct{ server, tool, want string }{
		{"fs", "read_text_file", "mcp__fs__read_text_file"},
		{"my-server", "get.thing/x", "mcp__my_server__get_thing_x"},
		{"é", "a b", "mcp_____a_b"},
	}
	for _, tc := range cases {
		if got, cut := ToolName(tc.server, tc.tool); got != tc.want || cut {
			t.Errorf("ToolName(%q, %q) = %q %v, want %q", tc.server, tc.tool, got, cut, tc.want)
		}
	}
	a, cutA := ToolName("server", strings.Repeat("a", 70)+"1")
	b, _ := ToolName("server", strings.Repeat("a", 70)+"2")
	if !cutA || len(a) != 64 || a == b {
		t.Fatalf("long names %q %q", a, b)
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"Authorization: Bearer abc.def-ghi": "Authorization: Bearer [REDACTED]",
		"bad key sk-proj-abcdefghijkl here": "bad key [REDACTED] here",
		"GET /x?token=s3cret&a=1":           "GET /x?token=[REDACTED]&a=1",
		"ghp_0123456789abcdef fails":        "[REDACTED] fails",
		"password: hunter2":                 "password:[REDACTED]",
		"nothing secret":                    "nothing secret",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}
