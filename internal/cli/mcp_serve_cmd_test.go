package cli

import (
	"testing"

	"github.com/hermes-go/hermes/internal/app"
)

func TestNewCmdMCPServe(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		want     mcpServeOptions
		wantErr  string
		wantCode int
	}{
		{name: "defaults", args: nil, want: mcpServeOptions{}},
		{name: "toolsets", args: []string{"--toolsets", "file,demo"}, want: mcpServeOptions{Toolsets: "file,demo"}},
		{name: "verbose short", args: []string{"-v"}, want: mcpServeOptions{Verbose: true}},
		{name: "verbose long", args: []string{"--verbose", "--toolsets=all"}, want: mcpServeOptions{Verbose: true, Toolsets: "all"}},
		{name: "no arguments", args: []string{"extra"}, wantErr: `unknown command "extra"`, wantCode: app.ExitUsage},
		{name: "unknown flag", args: []string{"--stdio"}, wantErr: "unknown flag: --stdio", wantCode: app.ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *mcpServeOptions
			cmd := newMCPServeCmd(app.New("test"), func(o *mcpServeOptions) error { got = o; return nil })
			code, err := parseVerb(t, cmd, tt.args)
			if !checkParseErr(t, err, code, tt.wantErr, tt.wantCode) {
				return
			}
			if got.Toolsets != tt.want.Toolsets || got.Verbose != tt.want.Verbose {
				t.Errorf("options = %+v, want %+v", *got, tt.want)
			}
		})
	}
}
