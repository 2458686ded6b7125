package app

import (
	"testing"

	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/gateway/discord"
)

// DISCORD_* settings: the variable wins; else config.yaml's key of the same
// name in any of upstream's places; the token only from the variable.
func TestDiscordSettings(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		env  map[string]string
		want string // OptionsFromEnv's result, summarised (the token always empty)
	}{
		{"defaults", "{}", nil, "mention=true thread=true bots= free=[]"},
		{"variables", "{}", map[string]string{"DISCORD_REQUIRE_MENTION": "false", "DISCORD_AUTO_THREAD": "no", "DISCORD_ALLOW_BOTS": "all"},
			"mention=false thread=false bots=all free=[]"},
		{"platforms.discord.extra", "platforms: {discord: {extra: {require_mention: false, free_response_channels: [123, 456]}}}", nil,
			"mention=false thread=true bots= free=[123 456]"},
		{"platforms.discord", "platforms: {discord: {auto_thread: false, allow_bots: mentions}}", nil,
			"mention=true thread=false bots=mentions free=[]"},
		{"top-level discord block", "discord: {free_response_channels: '7,8'}", nil, "mention=true thread=true bots= free=[7 8]"},
		{"the variable wins", "discord: {require_mention: false}", map[string]string{"DISCORD_REQUIRE_MENTION": "true"},
			"mention=true thread=true bots= free=[]"},
		{"extra wins over the others", "platforms: {discord: {require_mention: true, extra: {require_mention: false}}}", nil,
			"mention=false thread=true bots= free=[]"},
		{"no token from config.yaml", "discord: {bot_token: sneaky}", nil, "mention=true thread=true bots= free=[]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := config.Parse([]byte(tc.yaml), "config.yaml")
			if err != nil {
				t.Fatal(err)
			}
			env := func(k string) string { return tc.env[k] }
			o, err := discord.OptionsFromEnv(discordSettings(doc, env))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := summary(o), tc.want+" token="; got != want {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

func summary(o discord.Options) string {
	free := "["
	for i, id := range o.FreeResponseChannels {
		if i > 0 {
			free += " "
		}
		free += id
	}
	return "mention=" + boolWord(o.RequireMention) + " thread=" + boolWord(o.AutoThread) + " bots=" + o.AllowBots + " free=" + free + "] token=" + o.Token
}

func boolWord(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// A bad value in config.yaml is reported under the variable's name.
func TestDiscordSettingsBadValue(t *testing.T) {
	doc, err := config.Parse([]byte("discord: {free_response_channels: [general]}"), "config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = discord.OptionsFromEnv(discordSettings(doc, func(string) string { return "" }))
	if err == nil || err.Error() != `DISCORD_FREE_RESPONSE_CHANNELS: "general" is not a Discord id (digits only; copy it with Developer Mode on)` {
		t.Fatalf("err = %v", err)
	}
}
