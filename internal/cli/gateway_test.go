package cli

import (
	"testing"
	"time"
)

func TestNewCmdGatewayFlags(t *testing.T) {
	runTests := []struct {
		name     string
		args     []string
		want     gatewayRunOptions
		wantErr  string
		wantCode int
	}{
		{name: "run", want: gatewayRunOptions{}},
		{name: "replace", args: []string{"--replace"}, want: gatewayRunOptions{Replace: true}},
		{name: "drain", args: []string{"--drain-timeout", "5s"}, want: gatewayRunOptions{Drain: 5 * time.Second}},
		{name: "bad drain", args: []string{"--drain-timeout", "soon"}, wantErr: `invalid argument "soon"`, wantCode: 2},
		{name: "no arguments", args: []string{"telegram"}, wantErr: `unknown command "telegram"`, wantCode: 2},
	}
	for _, tt := range runTests {
		t.Run("run "+tt.name, func(t *testing.T) {
			var got *gatewayRunOptions
			cmd := newCmdGatewayRun(testFactory(), func(o *gatewayRunOptions) error { got = o; return nil })
			code, err := parseVerb(t, cmd, tt.args)
			if !checkParseErr(t, err, code, tt.wantErr, tt.wantCode) {
				return
			}
			if got.F == nil || got.Replace != tt.want.Replace || got.Drain != tt.want.Drain {
				t.Errorf("options %+v, want %+v", *got, tt.want)
			}
		})
	}

	installTests := []struct {
		name string
		args []string
		want gatewayInstallOptions
	}{
		{"user", nil, gatewayInstallOptions{}},
		{"system force", []string{"--system", "--force"}, gatewayInstallOptions{System: true, Force: true}},
		{"print", []string{"--print"}, gatewayInstallOptions{Print: true}},
	}
	for _, tt := range installTests {
		t.Run("install "+tt.name, func(t *testing.T) {
			var got *gatewayInstallOptions
			cmd := newCmdGatewayInstall(testFactory(), func(o *gatewayInstallOptions) error { got = o; return nil })
			code, err := parseVerb(t, cmd, tt.args)
			if !checkParseErr(t, err, code, "", 0) {
				return
			}
			if got.System != tt.want.System || got.Force != tt.want.Force || got.Print != tt.want.Print {
				t.Errorf("options %+v, want %+v", *got, tt.want)
			}
		})
	}
	for _, verb := range []string{"start", "stop", "restart"} {
		var got *gatewayControlOptions
		cmd := newCmdGatewayControl(testFactory(), verb, func(o *gatewayControlOptions) error { got = o; return nil })
		if _, err := parseVerb(t, cmd, []string{"--system"}); err != nil {
			t.Fatal(err)
		}
		if got.Verb != verb || !got.System {
			t.Errorf("%s: options %+v", verb, *got)
		}
	}
}
