package discord

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/internal/testutil/discordfake"
)

func TestSplit(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 2500)
	tests := []struct {
		name  string
		text  string
		limit int
		want  []string
	}{
		{"short", "hello", 10, []string{"hello"}},
		{"empty", "", 10, nil},
		{"only spaces", "   ", 10, nil},
		{"exactly the limit", "0123456789", 10, []string{"0123456789"}},
		{"at a line break", "line one\nline two", 12, []string{"line one", "line two"}},
		{"break just past the limit", "0123456789\nab", 10, []string{"0123456789", "ab"}},
		{"at a space", "alpha beta gamma", 11, []string{"alpha beta", "gamma"}},
		{"line break preferred to space", "a b\ncc dd ee", 9, []string{"a b", "cc dd ee"}},
		{"hard cut", "abcdefghij", 4, []string{"abcd", "efgh", "ij"}},
		{"indentation kept", "x\n  code", 6, []string{"x", "  code"}},
		{"whitespace-only pieces dropped", "x\n    code", 6, []string{"x", "code"}},
		{"characters not bytes", strings.Repeat("é", 5), 2, []string{"éé", "éé", "é"}},
		{"discord sized", long, 2000, []string{long[:2000], long[2000:]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Split(tt.text, tt.limit)
			if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tt.want) {
				t.Fatalf("Split = %q, want %q", got, tt.want)
			}
			for _, p := range got {
				if n := utf8.RuneCountInString(p); n > tt.limit {
					t.Errorf("piece of %d characters > %d", n, tt.limit)
				}
			}
		})
	}
}

func TestThreadName(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"", "Hermes"},
		{"   \n ", "Hermes"},
		{"short question", "short question"},
		{"two\nlines", "two lines"},
		{strings.Repeat("x", 80), strings.Repeat("x", 80)},
		{strings.Repeat("x", 81), strings.Repeat("x", 80) + "..."},
		{strings.Repeat("ü", 90), strings.Repeat("ü", 80) + "..."},
	}
	for _, tt := range tests {
		if got := ThreadName(tt.in); got != tt.want {
			t.Errorf("ThreadName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// A long answer arrives as several messages within Discord's limit (the
// fake refuses more than 2000 characters), the reply on the first, the
// buttons on the last, no pings.
func TestSendSplitsAtTheLimit(t *testing.T) {
	t.Parallel()
	h := start(t, Options{})
	para := strings.Repeat("word ", 300) // 1500 characters
	text := para + "\n" + para + "\n" + para
	res, err := h.a.Send(h.ctx, platform.Outbound{ChatID: dmChan, Text: text, ReplyTo: "700000000000000009",
		Buttons: []platform.Button{{Label: "Approve", Data: "approve:1"}, {Label: "Deny", Data: "deny:1"}}})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []discordfake.Message
	h.fake.Snapshot(func(v discordfake.View) { msgs = v.Messages() })
	if len(msgs) != 3 {
		t.Fatalf("%d messages sent, want 3", len(msgs))
	}
	var joined []string
	for i, m := range msgs {
		if utf8.RuneCountInString(m.Content) > 2000 || !m.NoMentions || m.ChannelID != dmChan {
			t.Errorf("message %d: %d characters, no-mentions %v, channel %s", i, utf8.RuneCountInString(m.Content), m.NoMentions, m.ChannelID)
		}
		if (m.ReplyTo != "") != (i == 0) || (len(m.Buttons) > 0) != (i == 2) {
			t.Errorf("message %d: reply %q buttons %v", i, m.ReplyTo, m.Buttons)
		}
		joined = append(joined, m.Content)
	}
	if strings.Join(joined, "\n") != strings.TrimRight(text, " ") && strings.Join(joined, "\n") != text {
		t.Error("the pieces do not add up to the text")
	}
	if res.MessageID != msgs[2].ID {
		t.Errorf("result names %s, want the last message %s", res.MessageID, msgs[2].ID)
	}
	if fmt.Sprint(msgs[2].Buttons) != "[approve:1 deny:1]" || fmt.Sprint(msgs[2].Labels) != "[Approve Deny]" {
		t.Errorf("buttons = %v %v", msgs[2].Buttons, msgs[2].Labels)
	}
}

// DISCORD_REPLY_TO_MODE: which pieces of a long answer reply to the user.
func TestReplyToMode(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("x", 2000) + "\n" + strings.Repeat("y", 10)
	tests := []struct {
		mode string
		want string // reply or not, per piece
	}{{ReplyFirst, "[true false]"}, {ReplyAll, "[true true]"}, {ReplyOff, "[false false]"}}
	for _, tt := range tests {
		t.Run("mode "+tt.mode, func(t *testing.T) {
			t.Parallel()
			h := start(t, Options{ReplyToMode: tt.mode})
			if _, err := h.a.Send(h.ctx, platform.Outbound{ChatID: dmChan, Text: text, ReplyTo: "700000000000000009"}); err != nil {
				t.Fatal(err)
			}
			var got []bool
			h.fake.Snapshot(func(v discordfake.View) {
				for _, m := range v.Messages() {
					got = append(got, m.ReplyTo == "700000000000000009")
				}
			})
			if fmt.Sprint(got) != tt.want {
				t.Errorf("replies = %v, want %s", got, tt.want)
			}
		})
	}
}

func TestSendRefusesBadInput(t *testing.T) {
	t.Parallel()
	h := start(t, Options{})
	many := make([]platform.Button, 26)
	for i := range many {
		many[i] = platform.Button{Label: "b", Data: fmt.Sprint(i)}
	}
	tests := []struct {
		name string
		msg  platform.Outbound
		want string
	}{
		{"no text no buttons", platform.Outbound{ChatID: dmChan}, "nothing to send"},
		{"non-numeric chat", platform.Outbound{ChatID: "general", Text: "x"}, "discord ids must be numeric"},
		{"button data too long", platform.Outbound{ChatID: dmChan, Text: "x", Buttons: []platform.Button{{Label: "ok", Data: strings.Repeat("d", 101)}}}, "1..100 bytes"},
		{"too many buttons", platform.Outbound{ChatID: dmChan, Text: "x", Buttons: many}, "at most 25"},
		{"unknown channel", platform.Outbound{ChatID: "123", Text: "x"}, "Unknown Channel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.a.Send(h.ctx, tt.msg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Send: %v, want %q", err, tt.want)
			}
		})
	}
}

// Discord's 429 retry_after is waited out, then the call goes through; a
// wait longer than the adapter sits out goes back to the caller.
func TestRateLimitHonoured(t *testing.T) {
	t.Parallel()
	h := start(t, Options{})
	route := "POST /channels/" + dmChan + "/messages"
	h.fake.RateLimit(route, 300*time.Millisecond)
	if _, err := h.a.Send(h.ctx, platform.Outbound{ChatID: dmChan, Text: "after the wait"}); err != nil {
		t.Fatal(err)
	}
	at := h.fake.Attempts(route)
	if len(at) != 2 {
		t.Fatalf("%d attempts, want 2 (one 429, one retry)", len(at))
	}
	if gap := at[1].Sub(at[0]); gap < 300*time.Millisecond {
		t.Errorf("retried after %v, before retry_after (300ms)", gap)
	}

	h.fake.RateLimit(route, 5*time.Minute)
	res, err := h.a.Send(h.ctx, platform.Outbound{ChatID: dmChan, Text: "later"})
	var rl *RateLimitedError
	if !errors.As(err, &rl) || !res.Retryable || res.RetryAfter != 5*time.Minute {
		t.Fatalf("Send = %+v, %v; want retryable after 5m", res, err)
	}

	// A wait is cut short by the caller's context.
	react := "PUT /channels/" + dmChan + "/messages/700000000000000001/reactions/👍/@me"
	h.fake.RateLimit(react, 30*time.Second)
	ctx, cancel := context.WithTimeout(h.ctx, 100*time.Millisecond)
	defer cancel()
	if err := h.a.AddReaction(ctx, dmChan, "700000000000000001", "👍"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("AddReaction under a 30s limit with a 100ms context = %v", err)
	}
}

// Platform actions reach Discord; bad ids are the caller's error, said the
// way platform actions answer invalid_argument.
func TestPlatformActions(t *testing.T) {
	t.Parallel()
	h := start(t, defaultOptions())
	h.fake.AddChannel(discordfake.Channel{ID: userThread, Type: discordfake.ChannelPublicThread, GuildID: guildID, Name: "old", ParentID: textChan})
	// A message in the thread: the plugin holds the parent channel's id.
	msg := h.fake.MessageCreate(discordfake.MessageIn{ChannelID: userThread, GuildID: guildID, Author: alice, Content: mention("hi"), Mentions: []string{discordfake.BotID}})
	h.next()
	if err := h.a.AddReaction(h.ctx, textChan, msg, "👀"); err != nil {
		t.Fatal(err)
	}
	if err := h.a.AddReaction(h.ctx, dmChan, "700000000000000005", "<:party:800000000000000001>"); err != nil {
		t.Fatal(err)
	}
	if err := h.a.SetThreadTitle(h.ctx, textChan, userThread, "  a   new\ntitle "); err != nil {
		t.Fatal(err)
	}
	h.fake.Snapshot(func(v discordfake.View) {
		want := []discordfake.Reaction{{ChannelID: userThread, MessageID: msg, Emoji: "👀"}, {ChannelID: dmChan, MessageID: "700000000000000005", Emoji: "party:800000000000000001"}}
		if fmt.Sprint(v.Reactions()) != fmt.Sprint(want) {
			t.Errorf("reactions = %v, want %v", v.Reactions(), want)
		}
		if r := v.Renames(); len(r) != 1 || r[0] != (discordfake.Rename{ChannelID: userThread, Name: "a new title"}) {
			t.Errorf("renames = %v", r)
		}
	})

	bad := []struct {
		name string
		call func() error
		want string
	}{
		{"reaction, channel name", func() error { return h.a.AddReaction(h.ctx, "general", msg, "👍") }, "discord ids must be numeric"},
		{"reaction, message id", func() error { return h.a.AddReaction(h.ctx, textChan, "12ab", "👍") }, "discord ids must be numeric"},
		{"reaction, empty emoji", func() error { return h.a.AddReaction(h.ctx, textChan, msg, " ") }, "emoji must not be empty"},
		{"rename, thread id", func() error { return h.a.SetThreadTitle(h.ctx, textChan, "thread", "t") }, "discord ids must be numeric"},
		{"rename, channel id", func() error { return h.a.SetThreadTitle(h.ctx, "-1", userThread, "t") }, "discord ids must be numeric"},
		{"rename, empty title", func() error { return h.a.SetThreadTitle(h.ctx, textChan, userThread, "\n") }, "title must not be empty"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			reason, ok := asInvalid(tt.call())
			if !ok || reason != tt.want {
				t.Fatalf("reason %q (invalid argument: %v), want %q", reason, ok, tt.want)
			}
		})
	}
	// A Discord refusal is an action failure, not a bad argument.
	err := h.a.SetThreadTitle(h.ctx, textChan, "123456", "t")
	if _, invalid := asInvalid(err); err == nil || invalid || !strings.Contains(err.Error(), "Unknown Channel") {
		t.Fatalf("rename of an unknown thread = %v", err)
	}
}

// Typing and edits reach Discord; an edit of a message in a thread finds
// the thread though the caller names the parent.
func TestTypingAndEdit(t *testing.T) {
	t.Parallel()
	h := start(t, defaultOptions())
	id := h.fake.MessageCreate(discordfake.MessageIn{ChannelID: textChan, GuildID: guildID, Author: alice, Content: mention("go"), Mentions: []string{discordfake.BotID}})
	ev := h.next()
	if err := h.a.Typing(h.ctx, ev.Source.ChatID, ev.Source.ThreadID); err != nil {
		t.Fatal(err)
	}
	res, err := h.a.Send(h.ctx, platform.Outbound{ChatID: ev.Source.ChatID, ThreadID: ev.Source.ThreadID, Text: "working…",
		Buttons: []platform.Button{{Label: "Stop", Data: "stop"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.a.Edit(h.ctx, ev.Source.ChatID, res.MessageID, strings.Repeat("z", 2100)); err != nil {
		t.Fatal(err)
	}
	h.fake.Snapshot(func(v discordfake.View) {
		if ty := v.Typing(); len(ty) != 1 || ty[0] != id {
			t.Errorf("typing in %v, want the thread %s", ty, id)
		}
		m := v.Messages()
		if len(m) != 1 || !m[0].Edited || m[0].ChannelID != id || utf8.RuneCountInString(m[0].Content) != 2000 || !strings.HasSuffix(m[0].Content, "…") {
			t.Errorf("edited message = %+v", m)
		}
	})
	if err := h.a.Edit(h.ctx, textChan, "not-an-id", "x"); err == nil {
		t.Error("Edit of a non-numeric id succeeded")
	}
}

// A button press becomes EventButton; the press is acknowledged at once and
// Ack's text follows as a message for the presser only.
func TestButtonPress(t *testing.T) {
	t.Parallel()
	h := start(t, Options{})
	res, err := h.a.Send(h.ctx, platform.Outbound{ChatID: dmChan, Text: "run rm -rf /tmp/x?", Buttons: []platform.Button{{Label: "Approve", Data: "approve:once"}}})
	if err != nil {
		t.Fatal(err)
	}
	iid := h.fake.ButtonPress(dmChan, "", alice, res.MessageID, "approve:once")
	ev := h.next()
	if ev.Kind != platform.EventButton || ev.Data != "approve:once" || ev.MessageID != res.MessageID || ev.Source.UserID != userID || ev.Source.ChatID != dmChan || ev.Ack == nil {
		t.Fatalf("event = %+v", ev)
	}
	h.fake.Wait(h.ctx, "the deferred acknowledgement", func(v discordfake.View) bool {
		c := v.Callbacks()
		return len(c) == 1 && c[0].InteractionID == iid && c[0].Type == 6
	})
	ev.Ack("Approved.")
	ev.Ack("twice")
	h.fake.Wait(h.ctx, "the follow-up", func(v discordfake.View) bool {
		c := v.Callbacks()
		return len(c) == 2 && c[1].InteractionID == iid && c[1].Content == "Approved."
	})
	// The same interaction replayed is not a second press.
	h.fake.Dispatch("INTERACTION_CREATE", map[string]any{"id": iid, "application_id": discordfake.ApplicationID, "type": 3,
		"token": "itoken-" + iid, "channel_id": dmChan, "user": map[string]any{"id": userID}, "data": map[string]any{"custom_id": "approve:once", "component_type": 2}})
	h.marker()
	h.fake.Snapshot(func(v discordfake.View) {
		if n := len(v.Callbacks()); n != 2 {
			t.Errorf("%d callbacks, want 2 (no second follow-up)", n)
		}
	})
}

// Whatever the gateway sends, the adapter keeps going; a message too long
// for Discord arrives cut.
func TestMalformedPayloads(t *testing.T) {
	t.Parallel()
	h := start(t, Options{})
	author := `"author":{"id":"` + userID + `","username":"alice"}`
	frames := []string{
		`{not json`,
		`{"op":0,"s":99,"t":"MESSAGE_CREATE","d":"a string"}`,
		`{"op":42,"d":{}}`,
		`[]`,
	}
	for _, f := range frames {
		h.fake.SendFrame([]byte(f))
	}
	dispatches := []struct{ typ, d string }{
		{"MESSAGE_CREATE", `{"id":123}`},
		{"MESSAGE_CREATE", `{"id":"1","channel_id":"` + dmChan + `","author":null,"content":"no author"}`},
		{"MESSAGE_CREATE", `{"id":"x1","channel_id":"` + dmChan + `",` + author + `,"content":"bad id"}`},
		{"MESSAGE_CREATE", `{"id":"2","channel_id":"` + dmChan + `",` + author + `,"mentions":[null,{"id":null}],"member":null,"message_reference":null}`},
		{"MESSAGE_CREATE", `{"id":"3","channel_id":"` + textChan + `","guild_id":"g",` + author + `}`},
		{"MESSAGE_UPDATE", `{"id":"4","channel_id":"` + dmChan + `","author":null}`},
		{"MESSAGE_DELETE", `null`},
		{"THREAD_CREATE", `{"id":"t"}`},
		{"THREAD_UPDATE", `null`},
		{"INTERACTION_CREATE", `{"id":"5","type":3,"channel_id":"` + dmChan + `","data":null}`},
		{"INTERACTION_CREATE", `{"id":"6","type":3,"channel_id":"` + dmChan + `","data":{"custom_id":"x"}}`},
		// (discordgo itself dereferences a null guild or channel in READY and
		// GUILD_CREATE before any handler runs: not sent here.)
		{"GUILD_CREATE", `{"id":"` + guildID + `","channels":[{"id":"zz","type":"x"}],"threads":[{"id":"` + userThread + `","type":11,"parent_id":"` + textChan + `"}]}`},
		{"READY", `{"user":null,"guilds":[]}`},
	}
	for _, d := range dispatches {
		h.fake.DispatchRaw(d.typ, []byte(d.d))
	}
	// "2" is a valid DM whatever its other fields say.
	if ev := h.next(); ev.MessageID != "2" {
		t.Fatalf("first event = %+v, want message 2", ev)
	}
	huge := strings.Repeat("ж", 2<<20)
	id := h.dm(huge)
	ev := h.next()
	if ev.MessageID != id || utf8.RuneCountInString(ev.Text) != maxInbound || !strings.HasSuffix(ev.Text, "…") {
		t.Fatalf("huge message: id %s, %d characters", ev.MessageID, utf8.RuneCountInString(ev.Text))
	}
	h.marker()
	if !h.a.Connected() {
		t.Error("not connected after the garbage")
	}
}

// base_url points REST at another server, with or without Discord's
// /api/vN in it.
func TestRebase(t *testing.T) {
	t.Parallel()
	tests := []struct{ base, want string }{
		{"http://127.0.0.1:9000", "http://127.0.0.1:9000/api/v9/channels/1/messages"},
		{"http://127.0.0.1:9000/", "http://127.0.0.1:9000/api/v9/channels/1/messages"},
		{"https://proxy.example/api/v9", "https://proxy.example/api/v9/channels/1/messages"},
		{"https://proxy.example/api/v10", "https://proxy.example/api/v10/channels/1/messages"},
		{"http://h/discord", "http://h/discord/api/v9/channels/1/messages"},
	}
	for _, tt := range tests {
		t.Run(tt.base, func(t *testing.T) {
			u, err := parseBaseURL(tt.base)
			if err != nil {
				t.Fatal(err)
			}
			var got string
			rt := rebase{base: u, next: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				got = r.URL.String()
				return nil, errors.New("stop")
			})}
			req, _ := http.NewRequest("POST", "https://discord.com/api/v9/channels/1/messages", nil)
			_, _ = rt.RoundTrip(req)
			if got != tt.want {
				t.Errorf("sent to %s, want %s", got, tt.want)
			}
			other, _ := http.NewRequest("GET", "https://cdn.discordapp.com/x.png", nil)
			_, _ = rt.RoundTrip(other)
			if got != "https://cdn.discordapp.com/x.png" {
				t.Errorf("a non-API request went to %s", got)
			}
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
