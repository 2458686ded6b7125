package discord

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/internal/testutil/discordfake"
)

const (
	userThread = "500000000000000030" // a thread alice opened in #general
	category   = "500000000000000040" // #general's category
	newsChan   = "500000000000000050" // where the fake opens no threads
)

// Which messages become events, with what source and session key.
func TestMessageRouting(t *testing.T) {
	t.Parallel()
	guild := func(channel, text string, mentions ...string) discordfake.MessageIn {
		return discordfake.MessageIn{ChannelID: channel, GuildID: guildID, Author: alice, Content: text, Mentions: mentions}
	}
	tests := []struct {
		name    string
		opts    Options
		msg     discordfake.MessageIn
		want    bool // an EventMessage comes
		chat    string
		key     string // "" = not checked; "{id}" is the message id
		text    string
		thread  bool // the answer is to open an auto-thread on the message
		mention bool
		role    bool // Source.RoleAuthorized
	}{
		{name: "dm always answered", opts: defaultOptions(),
			msg:  discordfake.MessageIn{ChannelID: dmChan, Author: alice, Content: "hello"},
			want: true, chat: platform.ChatDM, key: "agent:main:discord:dm:" + dmChan, text: "hello"},
		{name: "guild without mention ignored", opts: defaultOptions(), msg: guild(textChan, "chatter")},
		{name: "guild with mention answered in a new thread", opts: defaultOptions(),
			msg:  guild(textChan, mention("what is up?"), discordfake.BotID),
			want: true, chat: platform.ChatGroup, key: "agent:main:discord:thread:" + textChan + ":{id}", text: "what is up?", thread: true, mention: true},
		{name: "mention without auto-thread stays in the channel", opts: Options{RequireMention: true},
			msg:  guild(textChan, "<@!"+discordfake.BotID+"> hi", discordfake.BotID),
			want: true, chat: platform.ChatGroup, key: "agent:main:discord:group:" + textChan + ":" + userID, text: "hi", mention: true},
		{name: "mention only in the text counts", opts: Options{RequireMention: true},
			msg:  guild(textChan, mention("hi")),
			want: true, chat: platform.ChatGroup, text: "hi", mention: true},
		{name: "no mention needed when not required", opts: Options{AutoThread: true},
			msg:  guild(textChan, "chatter"),
			want: true, chat: platform.ChatGroup, key: "agent:main:discord:group:" + textChan + ":" + userID, text: "chatter"},
		{name: "free-response channel", opts: Options{RequireMention: true, FreeResponseChannels: []string{textChan}},
			msg: guild(textChan, "chatter"), want: true, chat: platform.ChatGroup, text: "chatter"},
		{name: "thread of a free-response channel", opts: Options{RequireMention: true, FreeResponseChannels: []string{textChan}},
			msg: guild(userThread, "chatter"), want: true, chat: platform.ChatThread, text: "chatter"},
		{name: "a free-response category does not free its channels", opts: Options{RequireMention: true, FreeResponseChannels: []string{category}},
			msg: guild(textChan, "chatter")},
		{name: "mention in a user's thread is the thread's session", opts: defaultOptions(),
			msg:  guild(userThread, mention("in thread"), discordfake.BotID),
			want: true, chat: platform.ChatThread, key: "agent:main:discord:thread:" + textChan + ":" + userThread, text: "in thread", mention: true},
		{name: "no mention in a user's thread ignored", opts: defaultOptions(), msg: guild(userThread, "chatter")},
		{name: "other bots ignored", opts: Options{},
			msg: discordfake.MessageIn{ChannelID: dmChan, Author: discordfake.Author{ID: otherBot, Name: "bot", Bot: true}, Content: "beep"}},
		{name: "other bots answered when mentioning, if allowed", opts: Options{AllowBots: BotsMentions},
			msg:  discordfake.MessageIn{ChannelID: dmChan, Author: discordfake.Author{ID: otherBot, Name: "alice", Bot: true}, Content: mention("beep"), Mentions: []string{discordfake.BotID}},
			want: true, chat: platform.ChatDM, text: "beep", mention: true},
		{name: "other bots without mention ignored when mentions allowed", opts: Options{AllowBots: BotsMentions},
			msg: discordfake.MessageIn{ChannelID: dmChan, Author: discordfake.Author{ID: otherBot, Name: "bot", Bot: true}, Content: "beep"}},
		{name: "ignored channel", opts: Options{IgnoredChannels: []string{textChan}}, msg: guild(textChan, mention("x"), discordfake.BotID)},
		{name: "thread of an ignored channel", opts: Options{IgnoredChannels: []string{textChan}}, msg: guild(userThread, mention("x"), discordfake.BotID)},
		{name: "not an allowed channel", opts: Options{AllowedChannels: []string{"500000000000000077"}}, msg: guild(textChan, mention("x"), discordfake.BotID)},
		{name: "allowed channels leave DMs alone", opts: Options{AllowedChannels: []string{"500000000000000077"}},
			msg:  discordfake.MessageIn{ChannelID: dmChan, Author: alice, Content: "dm"},
			want: true, chat: platform.ChatDM, text: "dm"},
		{name: "thread of an allowed channel", opts: Options{AllowedChannels: []string{textChan}},
			msg:  guild(userThread, mention("x"), discordfake.BotID),
			want: true, chat: platform.ChatThread, text: "x", mention: true},
		{name: "own messages ignored", opts: Options{AllowBots: BotsAll},
			msg: discordfake.MessageIn{ChannelID: dmChan, Author: discordfake.Author{ID: discordfake.BotID, Name: discordfake.BotName, Bot: true}, Content: "me"}},
		{name: "an allowed role authorises", opts: Options{AllowedRoles: []string{"42", "43"}},
			msg:  discordfake.MessageIn{ChannelID: textChan, GuildID: guildID, Author: alice, Content: "hi", Roles: []string{"7", "43"}},
			want: true, chat: platform.ChatGroup, text: "hi", role: true},
		{name: "other roles do not", opts: Options{AllowedRoles: []string{"42"}},
			msg:  discordfake.MessageIn{ChannelID: textChan, GuildID: guildID, Author: alice, Content: "hi", Roles: []string{"7"}},
			want: true, chat: platform.ChatGroup, text: "hi"},
		{name: "announcement channel: a thread too", opts: defaultOptions(),
			msg:  guild(newsChan, mention("news"), discordfake.BotID),
			want: true, chat: platform.ChatGroup, key: "agent:main:discord:thread:" + newsChan + ":{id}", text: "news", thread: true, mention: true},
		{name: "no-thread channel answers in place", opts: Options{RequireMention: true, AutoThread: true, NoThreadChannels: []string{textChan}},
			msg:  guild(textChan, mention("x"), discordfake.BotID),
			want: true, chat: platform.ChatGroup, key: "agent:main:discord:group:" + textChan + ":" + userID, text: "x", mention: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := start(t, tt.opts)
			h.fake.AddChannel(discordfake.Channel{ID: newsChan, Type: discordfake.ChannelGuildNews, GuildID: guildID, Name: "news"})
			h.fake.AddChannel(discordfake.Channel{ID: userThread, Type: discordfake.ChannelPublicThread, GuildID: guildID, Name: "alice's", ParentID: textChan, OwnerID: userID})
			id := h.fake.MessageCreate(tt.msg)
			if !tt.want {
				h.marker()
				return
			}
			ev := h.next()
			if ev.Kind != platform.EventMessage || ev.MessageID != id || ev.Text != tt.text || ev.Mentioned != tt.mention {
				t.Fatalf("event = %+v; want message %s %q mentioned=%v", ev, id, tt.text, tt.mention)
			}
			if ev.Source.RoleAuthorized != tt.role {
				t.Errorf("role authorised = %v, want %v", ev.Source.RoleAuthorized, tt.role)
			}
			if ev.Source.ChatType != tt.chat || ev.Source.Platform != "discord" || ev.Source.UserID != tt.msg.Author.ID || ev.Source.UserName != "alice" || ev.Source.IsBot != tt.msg.Author.Bot {
				t.Errorf("source = %+v", ev.Source)
			}
			if key := strings.ReplaceAll(tt.key, "{id}", id); key != "" {
				if got := platform.SessionKey(ev.Source, platform.DefaultKeyOptions()); got != key {
					t.Errorf("session key = %s, want %s", got, key)
				}
			}
			if tt.thread {
				if ev.Source.ProspectiveThreadID != id || ev.Source.ThreadID != id {
					t.Errorf("source thread = %q/%q, want %s", ev.Source.ProspectiveThreadID, ev.Source.ThreadID, id)
				}
			} else if ev.Source.ProspectiveThreadID != "" {
				t.Errorf("prospective thread = %q, want none", ev.Source.ProspectiveThreadID)
			}
			// Nothing is opened before the gateway answers.
			var threads []discordfake.ThreadStart
			h.fake.Snapshot(func(v discordfake.View) { threads = v.Threads() })
			if len(threads) != 0 {
				t.Errorf("threads opened = %+v, want none yet", threads)
			}
		})
	}
}

// After an auto-thread, the conversation in that thread is one session, and
// the bot answers there without being mentioned again.
func TestAutoThreadIsItsOwnSession(t *testing.T) {
	t.Parallel()
	h := start(t, defaultOptions())
	id := h.fake.MessageCreate(discordfake.MessageIn{ChannelID: textChan, GuildID: guildID, Author: alice, Content: mention("start"), Mentions: []string{discordfake.BotID}})
	first := h.next()
	if first.Kind != platform.EventMessage || first.MessageID != id {
		t.Fatalf("first event = %+v", first)
	}
	if _, err := h.a.Send(h.ctx, platform.Outbound{ChatID: first.Source.ChatID, ThreadID: first.Source.ThreadID, ReplyTo: id, Text: "answer"}); err != nil {
		t.Fatal(err)
	}
	h.fake.Snapshot(func(v discordfake.View) {
		th, m := v.Threads(), v.Messages()
		if len(th) != 1 || th[0] != (discordfake.ThreadStart{ChannelID: textChan, MessageID: id, Name: "start", AutoArchive: 1440}) {
			t.Errorf("threads opened = %+v", th)
		}
		// In the thread, no reply reference to a message of the channel.
		if len(m) != 1 || m[0].ChannelID != id || m[0].Content != "answer" || m[0].ReplyTo != "" {
			t.Errorf("messages = %+v, want the answer in thread %s, not a reply", m, id)
		}
	})
	// A follow-up in the thread, no mention.
	h.fake.MessageCreate(discordfake.MessageIn{ChannelID: id, GuildID: guildID, Author: alice, Content: "and then?"})
	// Next is the follow-up: the bot's own thread_created is not reported.
	ev := h.next()
	if ev.Kind != platform.EventMessage || ev.Source.ChatType != platform.ChatThread || ev.Text != "and then?" {
		t.Fatalf("follow-up = %+v", ev)
	}
	o := platform.DefaultKeyOptions()
	if a, b := platform.SessionKey(first.Source, o), platform.SessionKey(ev.Source, o); a != b {
		t.Errorf("the thread's messages have two session keys: %s and %s", a, b)
	}
}

// Typing and several sends racing for one auto-thread open it once, and
// everything lands in it.
func TestAutoThreadOpensOnce(t *testing.T) {
	t.Parallel()
	h := start(t, defaultOptions())
	id := h.fake.MessageCreate(discordfake.MessageIn{ChannelID: textChan, GuildID: guildID, Author: alice, Content: mention(strings.Repeat("long words ", 10)), Mentions: []string{discordfake.BotID}})
	ev := h.next()
	errs := make(chan error, 4)
	go func() { errs <- h.a.Typing(h.ctx, ev.Source.ChatID, ev.Source.ThreadID) }()
	for i := range 3 {
		go func() {
			_, err := h.a.Send(h.ctx, platform.Outbound{ChatID: ev.Source.ChatID, ThreadID: ev.Source.ThreadID, Text: fmt.Sprint("part ", i)})
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	h.fake.Snapshot(func(v discordfake.View) {
		th := v.Threads()
		if len(th) != 1 || th[0].MessageID != id || th[0].Name != strings.Repeat("long words ", 7)+"lon..." {
			t.Errorf("threads opened = %+v, want one on %s with the name cut at 80", th, id)
		}
		for _, m := range v.Messages() {
			if m.ChannelID != id {
				t.Errorf("message %q went to %s, not the thread %s", m.Content, m.ChannelID, id)
			}
		}
		if ty := v.Typing(); len(ty) != 1 || ty[0] != id {
			t.Errorf("typing in %v, want the thread", ty)
		}
	})
}

// A thread Discord refuses leaves the answer in the channel, as a reply.
func TestAutoThreadRefusedAnswersInChannel(t *testing.T) {
	t.Parallel()
	h := start(t, defaultOptions())
	h.fake.AddChannel(discordfake.Channel{ID: newsChan, Type: discordfake.ChannelGuildNews, GuildID: guildID, Name: "news"})
	id := h.fake.MessageCreate(discordfake.MessageIn{ChannelID: newsChan, GuildID: guildID, Author: alice, Content: mention("news"), Mentions: []string{discordfake.BotID}})
	ev := h.next()
	for _, text := range []string{"one", "two"} {
		if _, err := h.a.Send(h.ctx, platform.Outbound{ChatID: ev.Source.ChatID, ThreadID: ev.Source.ThreadID, ReplyTo: id, Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(h.fake.Attempts("POST /channels/" + newsChan + "/messages/" + id + "/threads")); n != 1 {
		t.Errorf("%d attempts to open the thread, want 1", n)
	}
	h.fake.Snapshot(func(v discordfake.View) {
		m := v.Messages()
		if len(m) != 2 || m[0].ChannelID != newsChan || m[0].ReplyTo != id || m[1].ChannelID != newsChan {
			t.Errorf("messages = %+v, want both in %s, the first a reply to %s", m, newsChan, id)
		}
	})
	if !strings.Contains(h.logs.String(), "could not open a thread") {
		t.Errorf("the refusal was not logged:\n%s", h.logs.String())
	}
}

// A dropped connection is resumed; what was said meanwhile arrives once.
func TestResumeDeliversExactlyOnce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		overlap int // events the gateway replays again on RESUME
		drop    func(*discordfake.Server)
	}{
		{name: "network drop", drop: (*discordfake.Server).Disconnect},
		{name: "network drop, gateway replays too much", overlap: 3, drop: (*discordfake.Server).Disconnect},
		{name: "gateway asks to reconnect", drop: (*discordfake.Server).RequestReconnect},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := start(t, Options{})
			h.fake.ReplayOverlap(tt.overlap)
			want := []string{h.dm("one")}
			if ev := h.next(); ev.MessageID != want[0] {
				t.Fatalf("first = %+v", ev)
			}
			tt.drop(h.fake)
			h.fake.Wait(h.ctx, "the bot to drop", func(v discordfake.View) bool { return !v.Connected() })
			want = append(want, h.dm("two"), h.dm("three"))
			h.fake.Wait(h.ctx, "the bot to resume", func(v discordfake.View) bool { return v.Resumes() == 1 && v.Connected() })
			want = append(want, h.dm("four"))
			got := []string{want[0]}
			for range 3 {
				got = append(got, h.next().MessageID)
			}
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("messages = %v, want %v", got, want)
			}
			h.marker() // nothing was delivered twice
			h.fake.Snapshot(func(v discordfake.View) {
				if v.Identifies() != 1 {
					t.Errorf("identified %d times; a resume must not start a new session", v.Identifies())
				}
			})
			h.waitConnected()
		})
	}
}

// IDENTIFY asks for the intents upstream needs, with the token.
func TestIdentify(t *testing.T) {
	t.Parallel()
	h := start(t, Options{Token: "Bot " + discordfake.Token})
	id := h.fake.Identify()
	if id["token"] != "Bot "+discordfake.Token {
		t.Errorf("token = %v", id["token"])
	}
	intents, _ := id["intents"].(float64)
	for _, want := range []struct {
		name string
		bit  int
	}{{"guilds", 1 << 0}, {"guild members", 1 << 1}, {"guild messages", 1 << 9}, {"direct messages", 1 << 12}, {"message content", 1 << 15}} {
		if int(intents)&want.bit == 0 {
			t.Errorf("intents %d lack %s", int(intents), want.name)
		}
	}
}

// Edits, deletes and threads become the events of gateway_platform_event;
// the bot's own rename does not come back as one.
func TestPlatformEvents(t *testing.T) {
	t.Parallel()
	h := start(t, defaultOptions())
	h.fake.Dispatch("MESSAGE_UPDATE", map[string]any{"id": "700000000000000001", "channel_id": textChan, "guild_id": guildID,
		"content": "fixed typo", "author": map[string]any{"id": userID, "username": "alice"}})
	if ev := h.next(); ev.Kind != platform.EventEdited || ev.Text != "fixed typo" || ev.MessageID != "700000000000000001" || ev.Source.ChatID != textChan || ev.Source.UserID != userID {
		t.Errorf("edit = %+v", ev)
	}
	h.fake.Dispatch("MESSAGE_DELETE", map[string]any{"id": "700000000000000002", "channel_id": dmChan})
	if ev := h.next(); ev.Kind != platform.EventDeleted || ev.MessageID != "700000000000000002" || ev.Source.ChatType != platform.ChatDM {
		t.Errorf("delete = %+v", ev)
	}
	h.fake.ThreadCreate(discordfake.Channel{ID: userThread, GuildID: guildID, Name: "plans", ParentID: textChan, OwnerID: userID})
	if ev := h.next(); ev.Kind != platform.EventThreadCreated || ev.Text != "plans" || ev.Source.ThreadID != userThread || ev.Source.ChatID != textChan || ev.Source.UserID != userID {
		t.Errorf("thread created = %+v", ev)
	}
	h.fake.ThreadRename(userThread, "better plans")
	if ev := h.next(); ev.Kind != platform.EventThreadRenamed || ev.Text != "better plans" || ev.Source.ThreadID != userThread {
		t.Errorf("thread renamed = %+v", ev)
	}
	if err := h.a.SetThreadTitle(h.ctx, textChan, userThread, "bot's title"); err != nil {
		t.Fatal(err)
	}
	h.marker()
}

// A message whose thread is unknown is looked up over REST once, then known.
func TestUnknownChannelLookedUp(t *testing.T) {
	t.Parallel()
	h := start(t, defaultOptions())
	h.fake.AddChannel(discordfake.Channel{ID: userThread, Type: discordfake.ChannelPublicThread, GuildID: guildID, Name: "t", ParentID: textChan})
	for range 2 {
		h.fake.MessageCreate(discordfake.MessageIn{ChannelID: userThread, GuildID: guildID, Author: alice, Content: mention("q"), Mentions: []string{discordfake.BotID}})
		if ev := h.next(); ev.Source.ChatType != platform.ChatThread || ev.Source.ThreadID != userThread {
			t.Fatalf("event = %+v", ev)
		}
	}
	if n := len(h.fake.Attempts("GET /channels/" + userThread)); n != 1 {
		t.Errorf("looked the thread up %d times, want 1", n)
	}
}

func TestBadOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"no token", Options{}, "DISCORD_BOT_TOKEN"},
		{"only the prefix", Options{Token: "Bot "}, "DISCORD_BOT_TOKEN"},
		{"base url without scheme", Options{Token: "x", BaseURL: "127.0.0.1:80"}, "base_url"},
		{"base url ftp", Options{Token: "x", BaseURL: "ftp://h"}, "not an http(s) URL"},
		{"base url escapes shown safely", Options{Token: "x", BaseURL: "\x1b[31m"}, `\x1b`},
		{"allow bots", Options{Token: "x", AllowBots: "some"}, "want none, mentions or all"},
		{"reply mode", Options{Token: "x", ReplyToMode: "first!"}, "want off, first or all"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New: %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// What retrying cannot fix ends Run with what to do, instead of retrying
// forever.
func TestFatalConnectErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		token string
		base  string // "" = the fake
		close int    // the fake's answer to IDENTIFY
		want  string
		is    error
	}{
		{name: "token refused by REST", token: "wrong", want: "rejected (401): check DISCORD_BOT_TOKEN", is: ErrTokenRefused},
		{name: "token refused by the gateway", close: 4004, want: "(4004): check DISCORD_BOT_TOKEN", is: ErrTokenRefused},
		{name: "intents not enabled", close: 4014, want: "enable the Message Content and Server Members intents", is: ErrIntentsRefused},
		{name: "base url is not Discord", base: "/nowhere", want: "check platforms.discord.extra.base_url", is: ErrNotDiscord},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := discordfake.New(t)
			fake.RefuseIdentify(tt.close)
			token := tt.token
			if token == "" {
				token = discordfake.Token
			}
			a, err := New(Options{Token: token, BaseURL: fake.URL() + tt.base})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			err = a.Run(ctx, func(context.Context, platform.Event) {})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Run = %v, want %q", err, tt.want)
			}
			if !errors.Is(err, tt.is) {
				t.Errorf("Run = %v, not %v", err, tt.is)
			}
			if ctx.Err() != nil {
				t.Fatal("Run retried until the deadline")
			}
		})
	}
}

// A session Discord no longer knows is started afresh (op 9 → IDENTIFY).
func TestExpiredSessionIdentifiesAgain(t *testing.T) {
	t.Parallel()
	h := start(t, Options{})
	h.fake.ExpireSession()
	h.fake.Disconnect()
	h.fake.Wait(h.ctx, "a second IDENTIFY", func(v discordfake.View) bool { return v.Identifies() == 2 && v.Connected() })
	h.waitConnected()
	h.marker()
}

// Run ends with its context even while Discord is unreachable.
func TestStopWhileReconnecting(t *testing.T) {
	t.Parallel()
	h := start(t, Options{})
	h.fake.Close()
	for h.a.Connected() {
		select {
		case <-h.ctx.Done():
			t.Fatal("still connected after the fake went away")
		case <-time.After(5 * time.Millisecond):
		}
	}
	h.stop() // fails the test if Run does not return
}

// Events reach the handler in the order Discord sent them, across channels
// and with channel look-ups in between.
func TestOrderKept(t *testing.T) {
	t.Parallel()
	h := start(t, Options{})
	chans := []string{dmChan}
	for i := range 3 {
		id := fmt.Sprintf("50000000000000010%d", i)
		h.fake.AddChannel(discordfake.Channel{ID: id, Type: discordfake.ChannelGuildText, GuildID: guildID, Name: "c" + id})
		chans = append(chans, id)
	}
	var want []string
	for i := range 200 {
		c := chans[i%len(chans)]
		g := guildID
		if c == dmChan {
			g = ""
		}
		want = append(want, h.fake.MessageCreate(discordfake.MessageIn{ChannelID: c, GuildID: g, Author: alice, Content: fmt.Sprint(i)}))
	}
	for i, id := range want {
		if ev := h.next(); ev.MessageID != id || ev.Text != fmt.Sprint(i) {
			t.Fatalf("event %d = %s %q, want %s", i, ev.MessageID, ev.Text, id)
		}
	}
}

// A connection whose heartbeats go unanswered is left for a new one, which
// resumes the session.
func TestZombieConnectionResumed(t *testing.T) {
	t.Parallel()
	h := startWith(t, Options{}, func(f *discordfake.Server) { f.HeartbeatInterval = 100 })
	h.fake.MuteHeartbeats(true)
	h.fake.Wait(h.ctx, "the bot to leave the silent connection", func(v discordfake.View) bool { return !v.Connected() })
	h.fake.MuteHeartbeats(false)
	id := h.dm("while away")
	h.fake.Wait(h.ctx, "the bot to resume", func(v discordfake.View) bool { return v.Resumes() == 1 && v.Connected() })
	if ev := h.next(); ev.MessageID != id {
		t.Fatalf("event = %+v, want the message sent while away", ev)
	}
	h.marker()
}

// Sends from many sessions at once (the runner's turns run concurrently).
func TestConcurrentSends(t *testing.T) {
	t.Parallel()
	h := start(t, Options{})
	errs := make(chan error, 20)
	for i := range 20 {
		go func() {
			_, err := h.a.Send(h.ctx, platform.Outbound{ChatID: dmChan, Text: fmt.Sprint("answer ", i)})
			errs <- err
		}()
	}
	for range 20 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	h.fake.Snapshot(func(v discordfake.View) {
		if n := len(v.Messages()); n != 20 {
			t.Errorf("%d messages arrived, want 20", n)
		}
	})
}
