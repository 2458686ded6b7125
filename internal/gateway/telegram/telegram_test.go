package telegram_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/internal/gateway/telegram"
	"github.com/hermes-go/hermes/internal/testutil/telegramfake"
)

// run starts an adapter against srv and collects its events.
type run struct {
	a      *telegram.Adapter
	mu     sync.Mutex
	events []platform.Event
	got    chan struct{}
	done   chan error
	cancel context.CancelFunc
}

func start(t *testing.T, srv *telegramfake.Server, o telegram.Options) *run {
	t.Helper()
	o.Token, o.BaseURL = srv.Token, srv.URL
	if o.PollTimeout == 0 {
		o.PollTimeout = 2 * time.Second
	}
	a, err := telegram.New(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &run{a: a, got: make(chan struct{}, 1000), done: make(chan error, 1), cancel: cancel}
	go func() {
		r.done <- a.Run(ctx, func(_ context.Context, ev platform.Event) {
			r.mu.Lock()
			r.events = append(r.events, ev)
			r.mu.Unlock()
			r.got <- struct{}{}
		})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(10 * time.Second):
			t.Error("Run did not return after its context ended")
		}
	})
	return r
}

func (r *run) wait(t *testing.T, n int) []platform.Event {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		r.mu.Lock()
		if len(r.events) >= n {
			out := append([]platform.Event(nil), r.events...)
			r.mu.Unlock()
			return out
		}
		r.mu.Unlock()
		select {
		case <-r.got:
		case <-deadline:
			t.Fatalf("waited for %d events, got %d", n, len(r.events))
		}
	}
}

func TestEventsInOrderDuplicatesAndBadUpdatesSkipped(t *testing.T) {
	srv := telegramfake.Start("1:tok")
	defer srv.Close()
	srv.PushText(telegramfake.Message{ChatID: 42, UserID: 42, Text: "one"})
	srv.PushRaw(500, `{"update_id": 500, "message": {"message_id": "not a number"}}`)
	srv.PushRaw(501, `{"update_id": 501, "message": {"message_id": 9, "date": 1, "chat": {"id": 42, "type": "private"}, "from": {"id": 42, "first_name": "A"}, "text": "two"}}`)
	srv.PushRaw(501, `{"update_id": 501, "message": {"message_id": 9, "date": 1, "chat": {"id": 42, "type": "private"}, "from": {"id": 42, "first_name": "A"}, "text": "two"}}`)
	srv.PushRaw(502, `{"update_id": 502, "message": {"message_id": 10, "date": 1, "chat": {"id": 7, "type": "secret_lair"}, "text": "odd chat"}}`)
	srv.PushRaw(503, `{"update_id": 503, "message": {"message_id": 11, "date": 1, "chat": {"id": -100, "type": "supergroup", "title": "g"}, "from": {"id": 42, "first_name": "A"}, "message_thread_id": 5, "is_topic_message": true, "text": "hi @hermes_fake_bot"}}`)
	srv.PushRaw(504, `{"update_id": 504, "edited_message": {"message_id": 9, "date": 1, "edit_date": 2, "chat": {"id": 42, "type": "private"}, "from": {"id": 42, "first_name": "A"}, "text": "two!"}}`)
	srv.PushRaw(505, `{"update_id": 505, "message_reaction": {"chat": {"id": 42, "type": "private"}, "message_id": 9, "user": {"id": 42, "is_bot": false, "first_name": "A"}, "date": 3, "old_reaction": [], "new_reaction": [{"type": "emoji", "emoji": "👍"}, {"type": "custom_emoji", "custom_emoji_id": "77"}]}}`)
	srv.PushRaw(506, `{"update_id": 506, "message_reaction": {"chat": {"id": -100, "type": "supergroup"}, "message_id": 9, "actor_chat": {"id": -100, "type": "supergroup"}, "date": 3, "old_reaction": [], "new_reaction": []}}`)
	srv.PushText(telegramfake.Message{ChatID: 42, UserID: 42, Text: "three"})
	r := start(t, srv, telegram.Options{DropPending: false})
	r.wait(t, 6)
	time.Sleep(100 * time.Millisecond) // a duplicate would arrive now
	evs := r.wait(t, 6)
	if len(evs) != 6 {
		t.Fatalf("%d events: %+v", len(evs), evs)
	}
	texts := []string{}
	for _, ev := range evs {
		texts = append(texts, string(ev.Kind)+":"+ev.Text)
	}
	want := "message:one|message:two|message:hi @hermes_fake_bot|message_edited:two!|reaction:|message:three"
	if got := strings.Join(texts, "|"); got != want {
		t.Fatalf("events %s\nwant   %s", got, want)
	}
	dm := evs[0].Source
	if dm.Platform != "telegram" || dm.ChatType != platform.ChatDM || dm.ChatID != "42" || dm.UserID != "42" {
		t.Errorf("DM source %+v", dm)
	}
	g := evs[2]
	if g.Source.ChatType != platform.ChatGroup || g.Source.ThreadID != "5" || !g.Mentioned || g.Source.ChatID != "-100" {
		t.Errorf("group event %+v", g)
	}
	if re := evs[4]; re.MessageID != "9" || re.Source.UserID != "42" || re.Source.ChatType != platform.ChatDM ||
		fmt.Sprint(re.Payload) != "map[custom_emoji_ids:[77] emojis:[👍]]" {
		t.Errorf("reaction event %+v", re)
	}
	if !r.a.Connected() {
		t.Error("not Connected while running")
	}
}

func TestColdBootDropsPending(t *testing.T) {
	srv := telegramfake.Start("1:tok")
	defer srv.Close()
	srv.PushText(telegramfake.Message{ChatID: 1, UserID: 1, Text: "sent while nobody ran"})
	r := start(t, srv, telegram.Options{DropPending: true})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := srv.WaitCalls(ctx, "deleteWebhook", 1); err != nil {
		t.Fatal(err)
	}
	srv.PushText(telegramfake.Message{ChatID: 1, UserID: 1, Text: "now"})
	evs := r.wait(t, 1)
	if evs[0].Text != "now" {
		t.Fatalf("first event %q: the pending update was not dropped", evs[0].Text)
	}
	if p := srv.Calls("deleteWebhook")[0].Params["drop_pending_updates"]; p != "true" {
		t.Fatalf("deleteWebhook drop_pending_updates=%q", p)
	}
}

func TestConflictAndRateLimitOnPollRecover(t *testing.T) {
	srv := telegramfake.Start("1:tok")
	defer srv.Close()
	srv.Fail("getUpdates", 1, telegramfake.Failure{Code: 409, Description: "Conflict: terminated by other getUpdates request"})
	srv.Fail("getUpdates", 1, telegramfake.Failure{Code: 429, Description: "Too Many Requests", RetryAfter: 1})
	srv.Fail("getUpdates", 2, telegramfake.Failure{Code: 502, Description: "Bad Gateway"}) // the API away, then back
	r := start(t, srv, telegram.Options{})
	srv.PushText(telegramfake.Message{ChatID: 1, UserID: 1, Text: "after the storm"})
	if evs := r.wait(t, 1); evs[0].Text != "after the storm" {
		t.Fatalf("event %+v", evs[0])
	}
	if n := len(srv.Calls("getUpdates")); n != 4 {
		t.Errorf("%d failed polls recorded, want 4", n)
	}
}

func TestRefusedTokenEndsRun(t *testing.T) {
	srv := telegramfake.Start("1:tok")
	defer srv.Close()
	a, err := telegram.New(telegram.Options{Token: "9:wrong", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = a.Run(ctx, func(context.Context, platform.Event) {})
	if err == nil || !strings.Contains(err.Error(), "TELEGRAM_BOT_TOKEN") || strings.Contains(err.Error(), "9:wrong") {
		t.Fatalf("Run = %v; want an error naming TELEGRAM_BOT_TOKEN without the token", err)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	tests := []struct {
		name string
		o    telegram.Options
		want string
	}{
		{"no token", telegram.Options{}, "TELEGRAM_BOT_TOKEN"},
		{"bad base url", telegram.Options{Token: "1:x", BaseURL: "ftp://x"}, "base_url"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := telegram.New(tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New = %v, want an error about %s", err, tc.want)
			}
		})
	}
}

func TestSend(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		msg   platform.Outbound
		fail  []telegramfake.Failure
		check func(t *testing.T, calls []telegramfake.Call)
	}{
		{"markdown", platform.Outbound{ChatID: "5", Text: "**Done.**"}, nil, func(t *testing.T, calls []telegramfake.Call) {
			if len(calls) != 1 || calls[0].Params["text"] != `*Done\.*` || calls[0].Params["parse_mode"] != "MarkdownV2" {
				t.Fatalf("calls %+v", calls)
			}
		}},
		{"plain text when MarkdownV2 is refused", platform.Outbound{ChatID: "5", Text: "x.y"},
			[]telegramfake.Failure{{Code: 400, Description: "Bad Request: can't parse entities: Character '.' is reserved"}},
			func(t *testing.T, calls []telegramfake.Call) {
				if len(calls) != 2 || calls[1].Status != 200 || calls[1].Params["text"] != "x.y" || calls[1].Params["parse_mode"] != "" {
					t.Fatalf("calls %+v", calls)
				}
			}},
		{"split at 4096 units", platform.Outbound{ChatID: "5", Text: strings.Repeat("word ", 2000)}, nil, func(t *testing.T, calls []telegramfake.Call) {
			if len(calls) != 3 {
				t.Fatalf("%d calls, want 3", len(calls))
			}
			var b strings.Builder
			for _, c := range calls {
				b.WriteString(c.Params["text"])
			}
			if b.String() != strings.Repeat("word ", 2000) {
				t.Fatal("the pieces do not add up to the text")
			}
		}},
		{"429 waits retry_after", platform.Outbound{ChatID: "5", Text: "hi"},
			[]telegramfake.Failure{{Code: 429, Description: "Too Many Requests: retry after 1", RetryAfter: 1}},
			func(t *testing.T, calls []telegramfake.Call) {
				if len(calls) != 2 || calls[0].Status != 429 || calls[1].Status != 200 {
					t.Fatalf("calls %+v", calls)
				}
				if gap := calls[1].At.Sub(calls[0].At); gap < time.Second {
					t.Fatalf("retried after %v, before retry_after (1s)", gap)
				}
			}},
		{"thread and reply", platform.Outbound{ChatID: "-100", ThreadID: "5", ReplyTo: "77", Text: "ok"}, nil, func(t *testing.T, calls []telegramfake.Call) {
			p := calls[0].Params
			if p["message_thread_id"] != "5" || !strings.Contains(p["reply_parameters"], `"message_id":77`) {
				t.Fatalf("params %v", p)
			}
		}},
		{"buttons", platform.Outbound{ChatID: "5", Text: "ok?", Buttons: []platform.Button{{Label: "Yes", Data: "approve:1"}}}, nil, func(t *testing.T, calls []telegramfake.Call) {
			if !strings.Contains(calls[0].Params["reply_markup"], `"callback_data":"approve:1"`) {
				t.Fatalf("reply_markup %q", calls[0].Params["reply_markup"])
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := telegramfake.Start("1:tok")
			defer srv.Close()
			for _, f := range tc.fail {
				srv.Fail("sendMessage", 1, f)
			}
			a, err := telegram.New(telegram.Options{Token: srv.Token, BaseURL: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			res, err := a.Send(ctx, tc.msg)
			if err != nil {
				t.Fatal(err)
			}
			if res.MessageID == "" {
				t.Error("no message id")
			}
			tc.check(t, srv.Calls("sendMessage"))
		})
	}
}

func TestSendErrors(t *testing.T) {
	srv := telegramfake.Start("1:tok")
	defer srv.Close()
	a, err := telegram.New(telegram.Options{Token: srv.Token, BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Send(context.Background(), platform.Outbound{ChatID: "not-a-chat", Text: "x"}); err == nil || !strings.Contains(err.Error(), "not a number") {
		t.Fatalf("Send to a bad chat id = %v", err)
	}
	srv.Fail("sendMessage", 4, telegramfake.Failure{Code: 429, Description: "Too Many Requests", RetryAfter: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	res, err := a.Send(ctx, platform.Outbound{ChatID: "5", Text: "x"})
	if err == nil || !res.Retryable || strings.Contains(err.Error(), srv.Token) {
		t.Fatalf("Send under a rate limit = %+v, %v; want a retryable error without the token", res, err)
	}
}

func TestActions(t *testing.T) {
	srv := telegramfake.Start("1:tok")
	defer srv.Close()
	a, err := telegram.New(telegram.Options{Token: srv.Token, BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := a.AddReaction(ctx, "5", "9", "👍"); err != nil {
		t.Fatal(err)
	}
	if err := a.SetThreadTitle(ctx, "5", "3", "Plans"); err != nil {
		t.Fatal(err)
	}
	if err := a.Typing(ctx, "5", ""); err != nil {
		t.Fatal(err)
	}
	if err := a.Edit(ctx, "5", "9", "edited."); err != nil {
		t.Fatal(err)
	}
	if r := srv.Calls("setMessageReaction"); len(r) != 1 || !strings.Contains(r[0].Params["reaction"], `"emoji":"👍"`) || r[0].Params["message_id"] != "9" {
		t.Fatalf("setMessageReaction %+v", r)
	}
	if r := srv.Calls("editForumTopic"); len(r) != 1 || r[0].Params["name"] != "Plans" || r[0].Params["message_thread_id"] != "3" {
		t.Fatalf("editForumTopic %+v", r)
	}
	if r := srv.Calls("sendChatAction"); len(r) != 1 || r[0].Params["action"] != "typing" {
		t.Fatalf("sendChatAction %+v", r)
	}
	if r := srv.Calls("editMessageText"); len(r) != 1 || r[0].Params["text"] != `edited\.` {
		t.Fatalf("editMessageText %+v", r)
	}
	srv.Fail("setMessageReaction", 1, telegramfake.Failure{Code: 400, Description: "Bad Request: message not found"})
	if err := a.AddReaction(ctx, "5", "9", "👍"); err == nil || err.Error() != "telegram set_message_reaction failed" {
		t.Fatalf("a refused reaction = %v", err)
	}
	if err := a.AddReaction(ctx, "x", "9", "👍"); err == nil {
		t.Fatal("a bad chat id was accepted")
	}
}

func TestCallbackQuery(t *testing.T) {
	srv := telegramfake.Start("1:tok")
	defer srv.Close()
	r := start(t, srv, telegram.Options{})
	srv.PushCallback(5, 5, 12, "approve:once")
	ev := r.wait(t, 1)[0]
	if ev.Kind != platform.EventButton || ev.Data != "approve:once" || ev.MessageID != "12" || ev.Source.UserID != "5" || ev.Ack == nil {
		t.Fatalf("event %+v", ev)
	}
	ev.Ack("Approved")
	if c := srv.Calls("answerCallbackQuery"); len(c) != 1 || c[0].Params["text"] != "Approved" {
		t.Fatalf("answerCallbackQuery %+v", c)
	}
}

func TestWebhook(t *testing.T) {
	srv := telegramfake.Start("1:tok")
	defer srv.Close()
	if _, err := telegram.New(telegram.Options{Token: "1:tok", WebhookURL: "https://bot.example/hook"}); err == nil ||
		!strings.Contains(err.Error(), "TELEGRAM_WEBHOOK_SECRET") {
		t.Fatalf("a webhook without a secret: %v", err)
	}
	// The URL Telegram is given is the local server itself (a reverse proxy's in real life).
	ln := "127.0.0.1:" + freePort(t)
	r := start(t, srv, telegram.Options{WebhookURL: "http://" + ln + "/tg/hook", WebhookSecret: "s3cret", WebhookListen: ln, DropPending: true})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	calls, err := srv.WaitCalls(ctx, "setWebhook", 1)
	if err != nil {
		t.Fatal(err)
	}
	if p := calls[0].Params; p["secret_token"] != "s3cret" || p["url"] != "http://"+ln+"/tg/hook" || p["drop_pending_updates"] != "true" {
		t.Fatalf("setWebhook %v", p)
	}
	srv.PushText(telegramfake.Message{ChatID: 3, UserID: 3, Text: "by webhook"})
	if ev := r.wait(t, 1)[0]; ev.Text != "by webhook" || ev.Source.ChatID != "3" {
		t.Fatalf("event %+v", ev)
	}
	if srv.Polls() != 0 {
		t.Errorf("%d getUpdates in webhook mode", srv.Polls())
	}
	if r.a.WebhookAddr() != ln {
		t.Errorf("WebhookAddr = %q", r.a.WebhookAddr())
	}
	// Without the secret, or with a wrong one: refused, nothing delivered.
	for _, secret := range []string{"", "guess"} {
		req, _ := http.NewRequest(http.MethodPost, "http://"+ln+"/tg/hook",
			strings.NewReader(`{"update_id": 999, "message": {"message_id": 1, "date": 1, "chat": {"id": 3, "type": "private"}, "from": {"id": 3}, "text": "forged"}}`))
		if secret != "" {
			req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("secret %q: status %d, want 401", secret, resp.StatusCode)
		}
	}
	time.Sleep(100 * time.Millisecond)
	if n := len(r.wait(t, 1)); n != 1 {
		t.Fatalf("%d events: a forged update got through", n)
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// A huge text is cut to 64 KiB (Telegram's own limit is 4096 units: more is
// not Telegram) and still delivered.
func TestHugeUpdate(t *testing.T) {
	srv := telegramfake.Start("1:tok")
	defer srv.Close()
	r := start(t, srv, telegram.Options{})
	srv.PushText(telegramfake.Message{ChatID: 1, UserID: 1, Text: strings.Repeat("x", 1<<20)})
	srv.PushText(telegramfake.Message{ChatID: 1, UserID: 1, Text: "next"})
	evs := r.wait(t, 2)
	if len(evs[0].Text) != 64<<10 || evs[1].Text != "next" {
		t.Fatalf("texts of %d and %q", len(evs[0].Text), evs[1].Text)
	}
}
