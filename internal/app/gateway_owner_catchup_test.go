package app

import (
	"context"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hermes-go/hermes/internal/cluster"
	"github.com/hermes-go/hermes/internal/gateway/discord"
	"github.com/hermes-go/hermes/internal/session"
	"github.com/hermes-go/hermes/internal/testutil/pgtest"
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

// The cursor at a takeover (real server): the takeover less the election's
// retry when the predecessor stepped down, its last heartbeat when it died
// leading, less the margin either way, never before the window; armed for
// the first READY only.
func TestDiscordCatchUpCursor(t *testing.T) {
	url := pgtest.Start(t).DB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := cluster.Open(ctx, fastCluster(url))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var asked time.Time
	keys := func(_ context.Context, since time.Time) ([]session.KeyEntry, error) {
		asked = since
		return []session.KeyEntry{{Key: "k", Origin: `{"platform":"discord","chat_id":"10","chat_type":"dm"}`}}, nil
	}
	near := func(got, want time.Time) bool { d := got.Sub(want); return d > -2*time.Second && d < 2*time.Second }
	for _, tt := range []struct {
		name   string
		window time.Duration
		dead   time.Duration // the predecessor died leading this long ago (0: it stepped down)
		back   time.Duration // the cursor is this far before now
	}{
		{name: "stepped down", window: time.Hour, back: 100*time.Millisecond + catchUpMargin},
		{name: "died", window: time.Hour, dead: 20 * time.Second, back: 20*time.Second + catchUpMargin},
		{name: "died long ago: the window", window: 40 * time.Second, dead: 20 * time.Second, back: 40 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := conn.Exec(ctx, `DELETE FROM cluster_members WHERE id = 'dead'`); err != nil {
				t.Fatal(err)
			}
			if tt.dead > 0 {
				if _, err := conn.Exec(ctx, `INSERT INTO cluster_members (id, host, pid, last_seen, leads)
					VALUES ('dead', 'gone', 1, now() - $1 * interval '1 millisecond', '{discord}')`, tt.dead.Milliseconds()); err != nil {
					t.Fatal(err)
				}
			}
			c := &discordCatchUp{window: tt.window, node: n, electRetry: n.ElectRetry(), log: slog.New(slog.DiscardHandler), keys: keys}
			if _, ok := c.plan(ctx); ok {
				t.Fatal("a plan before any takeover")
			}
			c.gained(ctx)
			var now time.Time
			if err := conn.QueryRow(ctx, `SELECT now()`).Scan(&now); err != nil {
				t.Fatal(err)
			}
			plan, ok := c.plan(ctx)
			if !ok || !near(plan.Since, now.Add(-tt.back)) || plan.MaxPages != catchUpPages {
				t.Fatalf("plan %+v, %v; want since %v", plan, ok, now.Add(-tt.back))
			}
			if len(plan.Channels) != 1 || plan.Channels[0].ID != "10" {
				t.Errorf("channels %+v", plan.Channels)
			}
			if !near(asked, now.Add(-tt.window)) {
				t.Errorf("sessions active since %v asked, want the window's start %v", asked, now.Add(-tt.window))
			}
			if _, ok := c.plan(ctx); ok {
				t.Error("a second READY of the same leadership read back again")
			}
		})
	}
}
