package cli

import (
	"reflect"
	"testing"

	"github.com/hermes-go/hermes/internal/app"
)

func TestNewCmdChat(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		want     chatOptions
		wantErr  string
		wantCode int
	}{
		{name: "interactive", args: nil, want: chatOptions{}},
		{name: "one shot", args: []string{"-q", "hi there"}, want: chatOptions{Query: "hi there"}},
		{name: "one shot json", args: []string{"--query=hi", "--json"}, want: chatOptions{Query: "hi", JSON: true}},
		{
			name: "every flag",
			args: []string{"--resume", "2026", "--model", "m2", "--toolsets", "web, files", "--no-stream"},
			want: chatOptions{Resume: "2026", Model: "m2", Toolsets: "web, files", NoStream: true},
		},
		{name: "json needs -q", args: []string{"--json"}, wantErr: "--json needs -q PROMPT", wantCode: app.ExitUsage},
		{name: "json with empty -q", args: []string{"--json", "-q", ""}, wantErr: "-q needs a prompt, and the one given is empty", wantCode: app.ExitUsage},
		{name: "empty -q", args: []string{"-q", ""}, wantErr: "-q needs a prompt, and the one given is empty: pass the text, or - to read it from standard input", wantCode: app.ExitUsage},
		{name: "whitespace -q", args: []string{"--query", " \t\n "}, wantErr: "-q needs a prompt, and the one given is empty", wantCode: app.ExitUsage},
		{name: "-q from stdin", args: []string{"-q", "-"}, want: chatOptions{Query: "-"}},
		{name: "a prompt is not an argument", args: []string{"hello"}, wantErr: `unknown command "hello"`, wantCode: app.ExitUsage},
		{name: "unknown flag", args: []string{"--bogus"}, wantErr: "unknown flag: --bogus", wantCode: app.ExitUsage},
		{name: "-q without a value", args: []string{"-q"}, wantErr: "flag needs an argument", wantCode: app.ExitUsage},
		{name: "json is a bool", args: []string{"-q", "x", "--json=maybe"}, wantErr: "invalid argument", wantCode: app.ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *chatOptions
			cmd := newCmdChat(testFactory(), func(o *chatOptions) error { got = o; return nil })
			code, err := parseVerb(t, cmd, tt.args)
			if !checkParseErr(t, err, code, tt.wantErr, tt.wantCode) {
				if got != nil {
					t.Errorf("the run was called despite the error")
				}
				return
			}
			if got.IO == nil || got.Factory == nil {
				t.Fatalf("IO or Factory not wired from the factory")
			}
			got.IO, got.Factory = nil, nil
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("options\n got %+v\nwant %+v", *got, tt.want)
			}
		})
	}
}
