package discord

import (
	"fmt"
	"strings"
	"testing"
)

func TestOptionsFromEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     map[string]string
		want    string // fmt of the options' fields that matter
		wantErr string
	}{
		{name: "defaults", env: map[string]string{"DISCORD_BOT_TOKEN": "tok"},
			want: "tok mention=true thread=true bots= reply= roles=[] free=[] nothread=[] ignored=[] allowed=[]"},
		{name: "all set", env: map[string]string{"DISCORD_BOT_TOKEN": "tok", "DISCORD_REQUIRE_MENTION": "False", "DISCORD_AUTO_THREAD": "0",
			"DISCORD_ALLOWED_ROLES": "1, 2,", "DISCORD_FREE_RESPONSE_CHANNELS": "3", "DISCORD_NO_THREAD_CHANNELS": " 4 ",
			"DISCORD_ALLOW_BOTS": "Mentions", "DISCORD_REPLY_TO_MODE": "all", "DISCORD_IGNORED_CHANNELS": "5", "DISCORD_ALLOWED_CHANNELS": "6,7"}},
		{name: "bad reply mode", env: map[string]string{"DISCORD_REPLY_TO_MODE": "some"}, wantErr: `DISCORD_REPLY_TO_MODE="some": want off, first or all`},
		{name: "bad allow bots", env: map[string]string{"DISCORD_ALLOW_BOTS": "yes"}, wantErr: `DISCORD_ALLOW_BOTS="yes": want none, mentions or all`},
		{name: "bad bool", env: map[string]string{"DISCORD_REQUIRE_MENTION": "maybe"}, wantErr: `DISCORD_REQUIRE_MENTION="maybe": want true or false`},
		{name: "bad id", env: map[string]string{"DISCORD_ALLOWED_ROLES": "1,admins"}, wantErr: `DISCORD_ALLOWED_ROLES: "admins" is not a Discord id`},
		{name: "escapes in a bad value", env: map[string]string{"DISCORD_AUTO_THREAD": "\x1b[2J"}, wantErr: `\x1b`},
	}
	tests[1].want = "tok mention=false thread=false bots=mentions reply=all roles=[1 2] free=[3] nothread=[4] ignored=[5] allowed=[6 7]"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := OptionsFromEnv(func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprintf("%s mention=%v thread=%v bots=%s reply=%s roles=%v free=%v nothread=%v ignored=%v allowed=%v", o.Token, o.RequireMention, o.AutoThread,
				o.AllowBots, o.ReplyToMode, o.AllowedRoles, o.FreeResponseChannels, o.NoThreadChannels, o.IgnoredChannels, o.AllowedChannels)
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
