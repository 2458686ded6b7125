package app

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/gateway/discord"
	"github.com/hermes-go/hermes/internal/session"
)

func TestDiscordCatchUpWindow(t *testing.T) {
	for _, tt := range []struct {
		name string
		v    any // nil: unset
		want time.Duration
		err  bool
	}{
		{name: "default", want: defaultDiscordCatchUp},
		{name: "duration", v: "1h", want: time.Hour},
		{name: "seconds", v: 90, want: 90 * time.Second},
		{name: "zero is off", v: 0, want: 0},
		{name: "false is off", v: false, want: 0},
		{name: "the word false", v: "false", want: 0},
		{name: "true is the default", v: true, want: defaultDiscordCatchUp},
		{name: "capped by the dedupe's memory", v: "720h", want: 48 * time.Hour},
		{name: "not a duration", v: "soon", err: true},
		{name: "negative", v: "-1h", err: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := map[string]any{}
			if tt.v != nil {
				cfg["gateway"] = map[string]any{"cluster": map[string]any{"discord_catchup": tt.v}}
			}
			got, err := discordCatchUpWindow(cfg)
			if (err != nil) != tt.err || got != tt.want {
				t.Fatalf("= %v, %v; want %v (error: %v)", got, err, tt.want, tt.err)
			}
			if err != nil && !strings.Contains(err.Error(), "gateway.cluster.discord_catchup") {
				t.Errorf("error does not name the setting: %v", err)
			}
		})
	}
}

// The channels read back: each route's channel once, a thread with its
// parent, DMs without a guild, other platforms and unreadable routes not,
// in the order given (most recently active first), bounded.
func TestCatchUpChannelsOf(t *testing.T) {
	entries := []session.KeyEntry{
		{Key: "a", Origin: `{"platform":"discord","chat_id":"10","chat_type":"dm"}`},
		{Key: "b", Origin: `{"platform":"discord","chat_id":"20","chat_type":"group","scope_id":"9","user_id":"1"}`},
		{Key: "c", Origin: `{"platform":"discord","chat_id":"20","chat_type":"group","scope_id":"9","user_id":"2"}`},
		{Key: "d", Origin: `{"platform":"discord","chat_id":"20","chat_type":"thread","thread_id":"30","scope_id":"9"}`},
		{Key: "e", Origin: `{"platform":"telegram","chat_id":"40","chat_type":"dm"}`},
		{Key: "f", Origin: `not json`},
		{Key: "g", Origin: `{"platform":"discord","chat_id":"50","chat_type":"group","scope_id":"9"}`},
	}
	want := []discord.CatchUpChannel{{ID: "10"}, {ID: "20", GuildID: "9"}, {ID: "30", GuildID: "9"}, {ID: "50", GuildID: "9"}}
	if got := catchUpChannelsOf(entries, 10); !reflect.DeepEqual(got, want) {
		t.Fatalf("channels = %+v\nwant %+v", got, want)
	}
	if got := catchUpChannelsOf(entries, 2); !reflect.DeepEqual(got, want[:2]) {
		t.Fatalf("bounded: %+v", got)
	}
}
