package cli

import (
	"testing"

	"github.com/hermes-go/hermes/internal/app"
)

func TestNewCmdDemo(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantHome string
		wantErr  string
		wantCode int
	}{
		{name: "a temporary home"},
		{name: "a kept home", args: []string{"--home", "demo-home"}, wantHome: "demo-home"},
		{name: "home needs a value", args: []string{"--home"}, wantErr: "flag needs an argument", wantCode: app.ExitUsage},
		{name: "no arguments", args: []string{"x"}, wantErr: `unknown command "x"`, wantCode: app.ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *demoOptions
			cmd := newCmdDemo(testFactory(), func(o *demoOptions) error { got = o; return nil })
			code, err := parseVerb(t, cmd, tt.args)
			if !checkParseErr(t, err, code, tt.wantErr, tt.wantCode) {
				return
			}
			if got.ForHomeDir == nil {
				t.Fatalf("ForHomeDir not wired from the factory")
			}
			if got.Home != tt.wantHome {
				t.Errorf("home %q, want %q", got.Home, tt.wantHome)
			}
		})
	}
}
