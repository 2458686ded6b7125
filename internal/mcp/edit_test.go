package mcp

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/config"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func parse(t *testing.T, src string) *config.Doc {
	t.Helper()
	d, err := config.Parse([]byte(src), "config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Add, replace and remove keep every comment of the file (golden files), and the
// entry reads back as written.
func TestAddRemoveKeepComments(t *testing.T) {
	src, err := os.ReadFile("testdata/commented.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d := parse(t, string(src))
	fs := Server{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/home/me/notes"},
		Env: []Pair{{"LOG_LEVEL", "debug"}}, Timeout: 120, ConnectTimeout: 30, Disabled: true}
	if _, err := Add(d, "fs", fs.Entry(), false); err != nil {
		t.Fatal(err)
	}
	golden(t, "commented.add.yaml", d.Bytes())
	if got, _ := d.Get("mcp_servers.fs.connect_timeout"); got != 30 {
		t.Errorf("connect_timeout reads back as %v", got)
	}

	var exists *ExistsError
	if _, err := Add(d, "docs", Entry{{"url", "https://other/"}}, false); !errors.As(err, &exists) || exists.Path != "mcp_servers.docs" {
		t.Fatalf("adding an existing name: %v", err)
	}
	docs := Server{URL: "https://docs.example.com/v2/mcp", Headers: []Pair{{"Authorization", "${MCP_DOCS_AUTHORIZATION}"}}}
	if _, err := Add(d, "docs", docs.Entry(), true); err != nil {
		t.Fatal(err)
	}
	golden(t, "commented.replace.yaml", d.Bytes())

	m, path, err := Remove(d, "fs")
	if err != nil || path != "mcp_servers.fs" || m["command"] != "npx" {
		t.Fatalf("Remove = %v %q %v", m, path, err)
	}
	golden(t, "commented.remove.yaml", d.Bytes())
	var unknown *UnknownError
	if _, _, err := Remove(d, "fs"); !errors.As(err, &unknown) || strings.Join(unknown.Names, ",") != "docs" {
		t.Fatalf("removing it again: %v", err)
	}
	if !strings.Contains(unknown.Error(), `no MCP server named "fs"; configured: docs`) {
		t.Errorf("message: %v", unknown)
	}
}

func TestAddShapes(t *testing.T) {
	tests := []struct {
		name, src, server string
		replace           bool
		want, wantErr     string
	}{
		{"new file", "", "a", false, "mcp_servers:\n  a:\n    url: \"https://h/mcp\"\n", ""},
		{"null section", "mcp_servers:\n", "a", false, "mcp_servers:\n  a:\n    url: \"https://h/mcp\"\n", ""},
		{"flow section", "mcp_servers: {}\n", "a", false, "mcp_servers: {a: {url: \"https://h/mcp\"}}\n", ""},
		{"legacy spelling replaced in place", "mcp:\n  servers:\n    a: {command: x}\n", "a", true, "mcp:\n  servers:\n    a: {url: \"https://h/mcp\"}\n", ""},
		{"legacy spelling refused without replace", "mcp:\n  servers:\n    a: {command: x}\n", "a", false, "", "already configured (mcp.servers.a)"},
		{"section not a mapping", "mcp_servers: [a]\n", "a", false, "", "cannot set"},
		{"bad name", "", "a/b", false, "", `server name "a/b" is not valid`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := parse(t, tt.src)
			_, err := Add(d, tt.server, Entry{{"url", "https://h/mcp"}}, tt.replace)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if string(d.Bytes()) != tt.src {
					t.Errorf("a refused add changed the document:\n%s", d.Bytes())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := string(d.Bytes()); got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestCheckName(t *testing.T) {
	for name, ok := range map[string]bool{
		"fs": true, "my.server_1-x": true, strings.Repeat("a", 64): true, "A9": true,
		"": false, strings.Repeat("a", 65): false, "a b": false, "a/b": false, "ü": false, "a\x1b": false, "$(x)": false,
	} {
		if err := CheckName(name); (err == nil) != ok {
			t.Errorf("CheckName(%q) = %v", name, err)
		}
	}
}

func TestServerCheck(t *testing.T) {
	tests := []struct {
		name string
		s    Server
		want string
	}{
		{"stdio", Server{Command: "npx", Args: []string{"-y", "x"}}, ""},
		{"http", Server{URL: "https://h/mcp", Headers: []Pair{{"X-A", "1"}}, Trust: "untrusted"}, ""},
		{"neither", Server{}, "give the server's command after --, or --url"},
		{"both", Server{Command: "x", URL: "https://h/"}, "not both"},
		{"env for http", Server{URL: "https://h/", Env: []Pair{{"A", "1"}}}, "--env sets a stdio server's environment"},
		{"header for stdio", Server{Command: "x", Headers: []Pair{{"A", "1"}}}, "--header is for HTTP servers"},
		{"ftp", Server{URL: "ftp://h/"}, "not an http:// or https:// URL"},
		{"no host", Server{URL: "https:///mcp"}, "with a host"},
		{"password in url", Server{URL: "https://u:p@h/"}, "password in it"},
		{"token in query", Server{URL: "https://h/?access_token=abc"}, "query parameter access_token looks like a secret"},
		{"trust", Server{Command: "x", Trust: "partial"}, `--trust "partial": use full or untrusted`},
		{"env name", Server{Command: "x", Env: []Pair{{"1A", "x"}}}, `--env "1A": the name may have letters`},
		{"header name", Server{URL: "https://h/", Headers: []Pair{{"X A", "x"}}}, `--header "X A"`},
		{"header twice", Server{URL: "https://h/", Headers: []Pair{{"X-A", "1"}, {"x-a", "2"}}}, "--header x-a is given twice"},
		{"line break", Server{URL: "https://h/", Headers: []Pair{{"X-A", "1\r\nX-B: 2"}}}, "NUL or line break"},
		{"negative timeout", Server{Command: "x", Timeout: -1}, "above 0"},
		{"secret arg", Server{Command: "x", Args: []string{"--token", "abc"}}, `argument "…" looks like a secret`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.s.Check()
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestEnvRefs(t *testing.T) {
	got := EnvRefs(map[string]any{"headers": map[string]any{"A": "Bearer ${T}", "B": "${env:U}${T}"}, "args": []any{"${V}", "x"}, "n": 1})
	if strings.Join(got, ",") != "T,U,V" {
		t.Errorf("EnvRefs = %v", got)
	}
}
