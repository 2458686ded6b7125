package cli

import (
	"testing"

	"github.com/spf13/cobra"

	"github.com/hermes-go/hermes/internal/app"
)

func TestNewCmdPairing(t *testing.T) {
	type newCmd func(*app.Factory, func(*pairingOptions) error) *cobra.Command
	tests := []struct {
		name     string
		cmd      newCmd
		args     []string
		want     pairingOptions
		wantErr  string
		wantCode int
	}{
		{name: "list", cmd: newCmdPairingList},
		{name: "list json", cmd: newCmdPairingList, args: []string{"--json"}, want: pairingOptions{JSON: true}},
		{name: "list takes no platform", cmd: newCmdPairingList, args: []string{"telegram"}, wantErr: `unknown command "telegram"`, wantCode: app.ExitUsage},
		{name: "approve", cmd: newCmdPairingApprove, args: []string{"telegram", "xkgh5n7p"}, want: pairingOptions{Platform: "telegram", Code: "xkgh5n7p"}},
		{name: "approve: the platform as typed", cmd: newCmdPairingApprove, args: []string{" Discord", "X"}, want: pairingOptions{Platform: "discord", Code: "X"}},
		{name: "approve needs a code", cmd: newCmdPairingApprove, args: []string{"telegram"}, wantErr: "accepts 2 arg(s), received 1", wantCode: app.ExitUsage},
		{name: "approve: a path is no platform", cmd: newCmdPairingApprove, args: []string{"../x", "C"}, wantErr: `invalid platform name "../x"`, wantCode: app.ExitUsage},
		{name: "revoke", cmd: newCmdPairingRevoke, args: []string{"telegram", "123"}, want: pairingOptions{Platform: "telegram", UserID: "123"}},
		{name: "revoke needs a user", cmd: newCmdPairingRevoke, args: []string{"telegram"}, wantErr: "accepts 2 arg(s), received 1", wantCode: app.ExitUsage},
		{name: "clear-pending all", cmd: newCmdPairingClear},
		{name: "clear-pending one", cmd: newCmdPairingClear, args: []string{"TELEGRAM"}, want: pairingOptions{Platform: "telegram"}},
		{name: "clear-pending one platform only", cmd: newCmdPairingClear, args: []string{"a", "b"}, wantErr: "accepts at most 1 arg(s), received 2", wantCode: app.ExitUsage},
		{name: "clear-pending bad name", cmd: newCmdPairingClear, args: []string{"tele gram"}, wantErr: "invalid platform name", wantCode: app.ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *pairingOptions
			cmd := tt.cmd(testFactory(), func(o *pairingOptions) error { got = o; return nil })
			code, err := parseVerb(t, cmd, tt.args)
			if !checkParseErr(t, err, code, tt.wantErr, tt.wantCode) {
				return
			}
			if got.IO == nil || got.Open == nil || got.Color == nil {
				t.Fatal("IO, Open or Color not wired from the factory")
			}
			if got.JSON != tt.want.JSON || got.Platform != tt.want.Platform || got.Code != tt.want.Code || got.UserID != tt.want.UserID {
				t.Errorf("options %+v, want %+v", *got, tt.want)
			}
		})
	}
}
