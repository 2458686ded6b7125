package discord

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/internal/testutil/discordfake"
)

func TestSnowflakeAt(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		at   time.Time
		want string
	}{
		{time.UnixMilli(discordEpoch), "0"},
		{time.UnixMilli(discordEpoch + 1), "4194304"},
		{time.UnixMilli(discordEpoch - 5000), "0"}, // before Discord: nothing older
		// Discord's documented example: 175928847299117063 was written at 1462015105796.
		{time.UnixMilli(1462015105796), "175928847298985984"},
	} {
		if got := snowflakeAt(tt.at); got != tt.want {
			t.Errorf("snowflakeAt(%d) = %s, want %s", tt.at.UnixMilli(), got, tt.want)
		}
	}
	if cmpID("175928847299117063", snowflakeAt(time.UnixMilli(1462015105796))) <= 0 || cmpID("99", "100") >= 0 || cmpID("7", "7") != 0 {
		t.Error("cmpID does not order snowflakes numerically")
	}
}

// collect runs a catch-up on h's adapter and returns what it delivered.
func collect(t *testing.T, h *harness, plan CatchUp) ([]platform.Event, CatchUpStats) {
	t.Helper()
	var got []platform.Event
	st := h.a.catchUp(h.ctx, func(_ context.Context, ev platform.Event) { got = append(got, ev) }, plan)
	return got, st
}

// Only what a MESSAGE_CREATE would have delivered is delivered: the filters
// are the live path's.
func TestCatchUpFilters(t *testing.T) {
	t.Parallel()
	past := time.Now().Add(-30 * time.Second)
	guild := func(channel, text string, mentions ...string) discordfake.MessageIn {
		return discordfake.MessageIn{ChannelID: channel, GuildID: guildID, Author: alice, Content: text, Mentions: mentions, At: past}
	}
	me := discordfake.Author{ID: discordfake.BotID, Name: discordfake.BotName, Bot: true}
	tests := []struct {
		name   string
		opts   Options
		msg    discordfake.MessageIn
		want   bool
		chat   string
		thread bool // an auto-thread is expected on the message
		role   bool
	}{
		{name: "dm", opts: defaultOptions(), msg: discordfake.MessageIn{ChannelID: dmChan, Author: alice, Content: "hi", At: past}, want: true, chat: platform.ChatDM},
		{name: "guild mention opens a thread", opts: defaultOptions(), msg: guild(textChan, mention("hi"), discordfake.BotID), want: true, chat: platform.ChatGroup, thread: true},
		{name: "guild chatter without mention", opts: defaultOptions(), msg: guild(textChan, "chatter")},
		{name: "mention in a thread", opts: defaultOptions(), msg: guild(userThread, mention("in thread"), discordfake.BotID), want: true, chat: platform.ChatThread},
		{name: "ignored channel", opts: Options{IgnoredChannels: []string{textChan}}, msg: guild(textChan, mention("x"), discordfake.BotID)},
		{name: "not an allowed channel", opts: Options{AllowedChannels: []string{"500000000000000077"}}, msg: guild(textChan, mention("x"), discordfake.BotID)},
		{name: "other bot", opts: Options{}, msg: discordfake.MessageIn{ChannelID: dmChan, Author: discordfake.Author{ID: otherBot, Name: "b", Bot: true}, Content: "beep", At: past}},
		{name: "the bot's own", opts: Options{AllowBots: BotsAll}, msg: discordfake.MessageIn{ChannelID: dmChan, Author: me, Content: "my answer", At: past}},
		// REST messages carry no member: the roles are read for the author.
		{name: "an allowed role authorises", opts: Options{AllowedRoles: []string{"43"}},
			msg: discordfake.MessageIn{ChannelID: textChan, GuildID: guildID, Author: alice, Content: "hi", Roles: []string{"43"}, At: past}, want: true, chat: platform.ChatGroup, role: true},
		{name: "other roles do not", opts: Options{AllowedRoles: []string{"42"}},
			msg: discordfake.MessageIn{ChannelID: textChan, GuildID: guildID, Author: alice, Content: "hi", Roles: []string{"7"}, At: past}, want: true, chat: platform.ChatGroup},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := start(t, tt.opts)
			h.fake.AddChannel(discordfake.Channel{ID: userThread, Type: discordfake.ChannelPublicThread, GuildID: guildID, Name: "alice's", ParentID: textChan, OwnerID: userID})
			id := h.fake.Post(tt.msg)
			g := ""
			if tt.msg.GuildID != "" {
				g = guildID
			}
			got, st := collect(t, h, CatchUp{Channels: []CatchUpChannel{{ID: tt.msg.ChannelID, GuildID: g}}, Since: past.Add(-time.Second)})
			if st.Fetched != 1 || st.Pages != 1 || st.Channels != 1 {
				t.Errorf("stats = %+v, want one message on one page of one channel", st)
			}
			if !tt.want {
				if len(got) != 0 || st.Delivered != 0 {
					t.Fatalf("delivered %+v, want nothing", got)
				}
				return
			}
			if len(got) != 1 || st.Delivered != 1 {
				t.Fatalf("delivered %+v, want message %s", got, id)
			}
			ev := got[0]
			if ev.Kind != platform.EventMessage || ev.MessageID != id || ev.Source.ChatType != tt.chat || ev.Source.UserID != userID {
				t.Errorf("event = %+v", ev)
			}
			if ev.Source.RoleAuthorized != tt.role {
				t.Errorf("role authorised = %v, want %v", ev.Source.RoleAuthorized, tt.role)
			}
			if (ev.Source.ProspectiveThreadID == id) != tt.thread {
				t.Errorf("prospective thread = %q, want a thread: %v", ev.Source.ProspectiveThreadID, tt.thread)
			}
			if d := time.Since(ev.Time); d < 25*time.Second || d > time.Minute {
				t.Errorf("event time %v is not when the message was written (%v ago)", ev.Time, d)
			}
		})
	}
}

// The cursor: only what was written after Since; pages of 100 are read
// oldest first until a short page, and no more than MaxPages.
func TestCatchUpCursorAndPages(t *testing.T) {
	t.Parallel()
	since := time.Now().Add(-time.Hour)
	tests := []struct {
		name              string
		pages             int
		wantN, wantPages  int
		wantTrunc, before int
	}{
		{name: "all within the pages", pages: 3, wantN: 250, wantPages: 3, before: 5},
		{name: "an exact page needs a second read", pages: 2, wantN: 100, wantPages: 2},
		{name: "bounded", pages: 2, wantN: 200, wantPages: 2, wantTrunc: 1},
		{name: "nothing new", pages: 1, wantN: 0, wantPages: 1, before: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := start(t, Options{})
			for i := range tt.before {
				h.fake.Post(discordfake.MessageIn{ChannelID: dmChan, Author: alice, Content: fmt.Sprint("old ", i), At: since.Add(-time.Duration(i+1) * time.Second)})
			}
			n := tt.wantN
			if tt.wantTrunc > 0 {
				n = 250
			}
			var want []string
			for i := range n {
				at := since.Add(time.Duration(i+1) * time.Second)
				want = append(want, h.fake.Post(discordfake.MessageIn{ChannelID: dmChan, Author: alice, Content: fmt.Sprint(i), At: at}))
			}
			got, st := collect(t, h, CatchUp{Channels: []CatchUpChannel{{ID: dmChan}}, Since: since, MaxPages: tt.pages})
			if len(got) != tt.wantN || st.Delivered != tt.wantN || st.Pages != tt.wantPages || st.Truncated != tt.wantTrunc {
				t.Fatalf("delivered %d, stats %+v; want %d on %d pages, %d truncated", len(got), st, tt.wantN, tt.wantPages, tt.wantTrunc)
			}
			for i, ev := range got {
				if ev.MessageID != want[i] || ev.Text != fmt.Sprint(i) {
					t.Fatalf("event %d = %s %q, want %s %q (oldest first)", i, ev.MessageID, ev.Text, want[i], fmt.Sprint(i))
				}
			}
			if tt.wantTrunc > 0 && !strings.Contains(h.logs.String(), "newer ones are not answered") {
				t.Errorf("a bounded catch-up is not logged:\n%s", h.logs.String())
			}
			if !strings.Contains(h.logs.String(), fmt.Sprintf("delivered=%d", tt.wantN)) {
				t.Errorf("the catch-up's work is not logged:\n%s", h.logs.String())
			}
		})
	}
}

// seenTable is cluster_seen for tests: the first to mark an id gets fresh.
type seenTable struct {
	mu    sync.Mutex
	ids   map[string]bool
	calls int
	err   error
}

func (s *seenTable) mark(_ context.Context, id string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if s.err != nil {
		return false, s.err
	}
	if s.ids[id] {
		return false, nil
	}
	s.ids[id] = true
	return true, nil
}

// A message handled before (by a previous owner, through the shared dedupe,
// or by this connection live) is not delivered again by the catch-up; the
// dedupe is asked only about messages past the filters.
func TestCatchUpDedupe(t *testing.T) {
	t.Parallel()
	seen := &seenTable{ids: map[string]bool{}}
	h := start(t, Options{RequireMention: true, Seen: seen.mark})
	past := time.Now().Add(-20 * time.Second)
	byOld := h.fake.Post(discordfake.MessageIn{ChannelID: dmChan, Author: alice, Content: "the old owner answered this", At: past})
	seen.mark(h.ctx, byOld) // the previous owner's mark
	live := h.dm("heard live")
	if ev := h.next(); ev.MessageID != live {
		t.Fatalf("live event = %+v", ev)
	}
	missed := h.fake.Post(discordfake.MessageIn{ChannelID: dmChan, Author: alice, Content: "written in the gap", At: past.Add(time.Second)})
	h.fake.Post(discordfake.MessageIn{ChannelID: textChan, GuildID: guildID, Author: alice, Content: "chatter", At: past})
	plan := CatchUp{Channels: []CatchUpChannel{{ID: dmChan}, {ID: textChan, GuildID: guildID}}, Since: past.Add(-time.Second)}
	got, st := collect(t, h, plan)
	if len(got) != 1 || got[0].MessageID != missed || st.Fetched != 4 {
		t.Fatalf("delivered %+v (stats %+v), want only %s", got, st, missed)
	}
	// The previous owner's mark, then the live message, the old owner's
	// and the gap one; the chatter (filtered) never reaches the dedupe.
	seen.mu.Lock()
	calls := seen.calls
	seen.mu.Unlock()
	if calls != 4 {
		t.Errorf("dedupe asked %d times, want 4 (once per message past the filters)", calls)
	}
	// A second catch-up (another READY) delivers nothing new.
	if got, _ := collect(t, h, plan); len(got) != 0 {
		t.Errorf("a second catch-up delivered %+v", got)
	}
}

// A dedupe that cannot answer does not lose the message.
func TestCatchUpDedupeDown(t *testing.T) {
	t.Parallel()
	seen := &seenTable{ids: map[string]bool{}, err: errors.New("database down")}
	h := start(t, Options{Seen: seen.mark})
	id := h.fake.Post(discordfake.MessageIn{ChannelID: dmChan, Author: alice, Content: "x", At: time.Now().Add(-time.Second)})
	got, _ := collect(t, h, CatchUp{Channels: []CatchUpChannel{{ID: dmChan}}, Since: time.Now().Add(-time.Minute)})
	if len(got) != 1 || got[0].MessageID != id {
		t.Fatalf("delivered %+v, want %s", got, id)
	}
	if !strings.Contains(h.logs.String(), "could not check whether a message was handled already") {
		t.Errorf("not logged:\n%s", h.logs.String())
	}
}

// A channel that cannot be read is counted and skipped; the others are read.
func TestCatchUpUnknownChannel(t *testing.T) {
	t.Parallel()
	h := start(t, Options{})
	id := h.fake.Post(discordfake.MessageIn{ChannelID: dmChan, Author: alice, Content: "x", At: time.Now().Add(-time.Second)})
	got, st := collect(t, h, CatchUp{Channels: []CatchUpChannel{{ID: "500000000000000666"}, {ID: "not-an-id"}, {ID: dmChan}}, Since: time.Now().Add(-time.Minute)})
	if len(got) != 1 || got[0].MessageID != id || st.Failed != 1 || st.Channels != 2 {
		t.Fatalf("delivered %+v, stats %+v", got, st)
	}
}

// The CatchUp option is asked at READY; what it names is read back and
// delivered before the events that follow READY.
func TestCatchUpAtReady(t *testing.T) {
	t.Parallel()
	var asked int
	var mu sync.Mutex
	var gap string
	opts := Options{CatchUp: func(context.Context) (CatchUp, bool) {
		mu.Lock()
		defer mu.Unlock()
		asked++
		return CatchUp{Channels: []CatchUpChannel{{ID: dmChan}}, Since: time.Now().Add(-time.Minute)}, asked == 1
	}}
	h := startWith(t, opts, func(f *discordfake.Server) {
		gap = f.Post(discordfake.MessageIn{ChannelID: dmChan, Author: alice, Content: "while nobody was connected", At: time.Now().Add(-5 * time.Second)})
	})
	if ev := h.next(); ev.MessageID != gap || ev.Text != "while nobody was connected" {
		t.Fatalf("first event = %+v, want the message written before READY", ev)
	}
	h.marker()
	// A fresh session (the old one expired) asks again.
	h.fake.ExpireSession()
	h.fake.Disconnect()
	h.fake.Wait(h.ctx, "a second identify", func(v discordfake.View) bool { return v.Identifies() == 2 && v.Connected() })
	h.marker()
	mu.Lock()
	defer mu.Unlock()
	if asked != 2 {
		t.Errorf("CatchUp asked %d times, want once per READY (2)", asked)
	}
}
