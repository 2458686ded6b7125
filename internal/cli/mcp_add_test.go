package cli

import (
	"reflect"
	"testing"

	"github.com/hermes-go/hermes/internal/mcp"
)

func TestNewMCPAddCmd(t *testing.T) {
	const link = "hermes://mcp/install?name=fs&config=e30"
	tests := []struct {
		name    string
		args    []string
		want    mcpAddOptions
		wantErr string
	}{
		{name: "stdio", args: []string{"fs", "--", "npx", "-y", "pkg", "--flag"},
			want: mcpAddOptions{Name: "fs", Server: mcp.Server{Command: "npx", Args: []string{"-y", "pkg", "--flag"}}}},
		{name: "stdio with flags before --", args: []string{"fs", "--env", "A=1", "--timeout", "30", "--connect-timeout", "5", "--trust", "untrusted", "--disabled", "--replace", "--", "srv"},
			want: mcpAddOptions{Name: "fs", Env: []string{"A=1"}, Replace: true, Server: mcp.Server{Command: "srv", Args: []string{}, Timeout: 30, ConnectTimeout: 5, Trust: "untrusted", Disabled: true}}},
		{name: "http", args: []string{"docs", "--url", "https://h/mcp", "--header", "A=1", "--header", "B=2"},
			want: mcpAddOptions{Name: "docs", Headers: []string{"A=1", "B=2"}, Server: mcp.Server{URL: "https://h/mcp"}}},
		{name: "from link", args: []string{"--from-link", link}, want: mcpAddOptions{FromLink: link}},
		{name: "from link, renamed", args: []string{"notes", "--from-link", link}, want: mcpAddOptions{Name: "notes", FromLink: link}},
		{name: "no name", args: []string{"--", "npx"}, wantErr: "give the server's NAME"},
		{name: "nothing", wantErr: "give the server's NAME"},
		{name: "command without --", args: []string{"fs", "npx", "pkg"}, wantErr: "put -- before the server's command"},
		{name: "from link and a command", args: []string{"--from-link", link, "--", "npx"}, wantErr: "give no command after --"},
		{name: "from link and --url", args: []string{"--from-link", link, "--url", "https://h/"}, wantErr: "--url cannot be combined with --from-link"},
		{name: "bad timeout", args: []string{"fs", "--timeout", "soon", "--", "x"}, wantErr: "invalid argument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := testFactory()
			got, err := parseCmd(t, f, newMCPAddCmd, tt.args)
			if checkErr(t, err, tt.wantErr) {
				return
			}
			checkBuiltFrom(t, f, got.IO, got.Factory)
			got.IO, got.Factory = nil, nil
			if !reflect.DeepEqual(*got, tt.want) {
				t.Fatalf("options %+v, want %+v", *got, tt.want)
			}
		})
	}
}

func TestNewMCPRemoveCmd(t *testing.T) {
	for _, args := range [][]string{{"fs"}} {
		f := testFactory()
		got, err := parseCmd(t, f, newMCPRemoveCmd, args)
		if err != nil || got.Name != "fs" {
			t.Fatalf("%v: %+v %v", args, got, err)
		}
	}
	f := testFactory()
	if _, err := parseCmd(t, f, newMCPRemoveCmd, nil); err == nil {
		t.Fatal("remove without NAME was accepted")
	}
	if !newMCPRemoveCmd(testFactory(), nil).HasAlias("rm") {
		t.Fatal("remove has no rm alias")
	}
}
