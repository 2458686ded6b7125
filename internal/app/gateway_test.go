package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/llm/llmtest"
	"github.com/hermes-go/hermes/internal/session"
	"github.com/hermes-go/hermes/internal/testutil/telegramfake"
)

// gatewayRun is a real gateway (the app wiring, the agent, state.db) on a
// temporary HERMES_HOME, between the loopback Bot API and the loopback model.
type gatewayRun struct {
	tg     *telegramfake.Server
	model  *llmtest.Server
	home   string
	cancel context.CancelFunc
	done   chan error
	stderr *syncBuffer
	gw     *Gateway
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startGateway(t testing.TB, config, env string, replies ...llmtest.Reply) *gatewayRun {
	t.Helper()
	return startGatewayWith(t, config, env, nil, replies...)
}

// startGatewayWith is startGateway with files written under HERMES_HOME
// (path → text) before the gateway starts: plugins, memories.
func startGatewayWith(t testing.TB, config, env string, files map[string]string, replies ...llmtest.Reply) *gatewayRun {
	t.Helper()
	g := &gatewayRun{tg: telegramfake.Start("1:tok"), model: llmtest.NewServer(t), home: filepath.Join(t.TempDir(), ".hermes"), stderr: &syncBuffer{}}
	t.Cleanup(g.tg.Close)
	g.model.Enqueue(replies...)
	if err := os.MkdirAll(g.home, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		path := filepath.Join(g.home, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg := "model:\n  default: fake\n  base_url: " + g.model.URL + "\n" + modelExtra(&config) + "platforms:\n  telegram:\n    extra:\n      base_url: " + g.tg.URL + "\n" + config
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(g.home, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("config.yaml", cfg)
	write(".env", "TELEGRAM_BOT_TOKEN=1:tok\n"+env)
	f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: g.stderr, Err: g.stderr},
		Env: func(k string) string {
			return map[string]string{"HERMES_HOME": g.home, "HERMES_NO_CGROUPS": "1", "HERMES_PYTHON": "/usr/bin/python3"}[k]
		}, Clock: time.Now}
	ctx, cancel := context.WithCancel(context.Background())
	gw, err := f.NewGateway(ctx, GatewayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g.cancel, g.done, g.gw = cancel, make(chan error, 1), gw
	go func() { // done only once the plugins have stopped writing into home
		err := gw.Run(ctx)
		gw.Close()
		f.Close()
		g.done <- err
	}()
	t.Cleanup(func() { g.stop(t) })
	g.waitCalls(t, "deleteWebhook", 1)
	return g
}

func (g *gatewayRun) stop(t testing.TB) {
	if g.cancel == nil {
		return
	}
	g.cancel()
	g.cancel = nil
	select {
	case err := <-g.done:
		if err != nil {
			t.Errorf("gateway Run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("the gateway did not stop")
	}
}

func (g *gatewayRun) waitCalls(t testing.TB, method string, n int) []telegramfake.Call {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	calls, err := g.tg.WaitCalls(ctx, method, n)
	if err != nil {
		t.Fatalf("%v\ngateway log:\n%s", err, g.stderr.String())
	}
	return calls
}

// waitModel waits until the model received n requests.
func (g *gatewayRun) waitModel(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); len(g.model.Requests()) < n; {
		if time.Now().After(deadline) {
			t.Fatalf("the model received %d requests, want %d", len(g.model.Requests()), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func texts(calls []telegramfake.Call) []string {
	out := make([]string, len(calls))
	for i, c := range calls {
		out[i] = c.Params["chat_id"] + ":" + c.Params["text"]
	}
	return out
}

func say(g *gatewayRun, chat int64, text string) {
	g.tg.PushText(telegramfake.Message{ChatID: chat, UserID: chat, Text: text})
}

// Sessions run concurrently, up to gateway.max_concurrent_sessions.
func TestGatewayChatsConcurrentlyWithinTheBound(t *testing.T) {
	for _, tc := range []struct {
		name       string
		bound      int
		concurrent bool
	}{{"bound 4", 4, true}, {"bound 1", 1, false}} {
		t.Run(tc.name, func(t *testing.T) {
			slow := llmtest.Reply{Content: "ok", Delay: llmtest.Duration(700 * time.Millisecond)}
			g := startGateway(t, "gateway:\n  max_concurrent_sessions: "+itoa(tc.bound)+"\n", "TELEGRAM_ALLOWED_USERS=1,2\n", slow, slow)
			say(g, 1, "first chat")
			g.waitModel(t, 1)
			say(g, 2, "second chat")
			g.waitCalls(t, "sendMessage", 2)
			// Was chat 2's turn (its typing action) under way before chat 1 was answered?
			var typing2, reply1 time.Time
			for _, c := range g.tg.Calls("") {
				switch {
				case c.Method == "sendChatAction" && c.Params["chat_id"] == "2" && typing2.IsZero():
					typing2 = c.At
				case c.Method == "sendMessage" && c.Params["chat_id"] == "1" && reply1.IsZero():
					reply1 = c.At
				}
			}
			if got := typing2.Before(reply1); got != tc.concurrent {
				t.Fatalf("chat 2 started before chat 1 was answered: %v, want %v", got, tc.concurrent)
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// What arrives mid-turn: interrupt (the default) stops the turn and answers
// the new message; queue answers both, the waiting ones merged into one turn.
func TestGatewayBusyInput(t *testing.T) {
	slow := llmtest.Reply{Content: "slow answer", Delay: llmtest.Duration(1500 * time.Millisecond)}
	t.Run("interrupt", func(t *testing.T) {
		g := startGateway(t, "", "TELEGRAM_ALLOWED_USERS=1\n", slow, llmtest.Reply{Content: "answer to the second"})
		say(g, 1, "first")
		g.waitModel(t, 1)
		say(g, 1, "second")
		got := texts(g.waitCalls(t, "sendMessage", 2))
		if !strings.Contains(got[0], "Interrupting") || !strings.Contains(got[1], "answer to the second") {
			t.Fatalf("sent %q", got)
		}
		reqs := g.model.Requests()
		last := reqs[len(reqs)-1].Messages
		if last[len(last)-1].Content != "second" {
			t.Fatalf("the model was last asked %q", last[len(last)-1].Content)
		}
		time.Sleep(1700 * time.Millisecond) // the interrupted answer would come now
		if n := len(g.tg.Calls("sendMessage")); n != 2 {
			t.Fatalf("%d messages sent: the interrupted turn answered", n)
		}
	})
	t.Run("queue", func(t *testing.T) {
		g := startGateway(t, "display:\n  busy_input_mode: queue\n", "TELEGRAM_ALLOWED_USERS=1\n", slow, llmtest.Reply{Content: "both answered"})
		say(g, 1, "first")
		g.waitModel(t, 1)
		say(g, 1, "second")
		say(g, 1, "third")
		got := texts(g.waitCalls(t, "sendMessage", 4))
		if !strings.Contains(got[0], "Queued") || !strings.Contains(got[1], "Queued") || !strings.Contains(got[2], "slow answer") || !strings.Contains(got[3], "both answered") {
			t.Fatalf("sent %q", got)
		}
		reqs := g.model.Requests()
		if len(reqs) != 2 {
			t.Fatalf("%d model requests, want 2 (the queued messages in one turn)", len(reqs))
		}
		msgs := reqs[1].Messages
		if msgs[len(msgs)-1].Content != "second\n\nthird" {
			t.Fatalf("the follow-up turn was %q", msgs[len(msgs)-1].Content)
		}
	})
	t.Run("steer", func(t *testing.T) {
		// The first call asks for a tool; what the user sends meanwhile reaches
		// the model's next call in the same turn, after the tool's result.
		tool := llmtest.Reply{ToolCalls: []llmtest.CallReply{llmtest.Call("terminal", map[string]any{"command": "echo tool-ran"})},
			Delay: llmtest.Duration(1500 * time.Millisecond)}
		g := startGateway(t, "display:\n  busy_input_mode: steer\n", "TELEGRAM_ALLOWED_USERS=1\n", tool,
			llmtest.Reply{Content: "steered answer"}, llmtest.Reply{Content: "late answer"})
		say(g, 1, "first")
		g.waitModel(t, 1)
		say(g, 1, "use the blue one")
		got := texts(g.waitCalls(t, "sendMessage", 2))
		if !strings.Contains(got[0], "Noted") || !strings.Contains(got[1], "steered answer") {
			t.Fatalf("sent %q", got)
		}
		reqs := g.model.Requests()
		if len(reqs) != 2 {
			t.Fatalf("%d model requests, want 2 (the steering joined the running turn)", len(reqs))
		}
		msgs := reqs[1].Messages
		if n := len(msgs); n < 2 || msgs[n-2].Role != "tool" || msgs[n-1].Role != "user" || msgs[n-1].Content != "use the blue one" {
			t.Fatalf("the second call ended with %+v", msgs[max(0, n-2):])
		}
	})
	t.Run("steer after the last tool boundary runs next", func(t *testing.T) {
		g := startGateway(t, "display:\n  busy_input_mode: steer\n", "TELEGRAM_ALLOWED_USERS=1\n", slow, llmtest.Reply{Content: "answer to the second"})
		say(g, 1, "first")
		g.waitModel(t, 1)
		say(g, 1, "second")
		got := texts(g.waitCalls(t, "sendMessage", 3))
		if !strings.Contains(got[1], "slow answer") || !strings.Contains(got[2], "answer to the second") {
			t.Fatalf("sent %q", got)
		}
		msgs := g.model.Requests()[1].Messages
		if msgs[len(msgs)-1].Content != "second" {
			t.Fatalf("the follow-up turn was %q", msgs[len(msgs)-1].Content)
		}
	})
	t.Run("stop drops what was queued", func(t *testing.T) {
		g := startGateway(t, "display:\n  busy_input_mode: queue\n", "TELEGRAM_ALLOWED_USERS=1\n", slow, llmtest.Reply{Content: "never"})
		say(g, 1, "first")
		g.waitModel(t, 1)
		say(g, 1, "second")
		g.waitCalls(t, "sendMessage", 1) // queued
		say(g, 1, "/stop")
		got := texts(g.waitCalls(t, "sendMessage", 2))
		if !strings.Contains(got[1], "Stopped") {
			t.Fatalf("sent %q", got)
		}
		time.Sleep(1700 * time.Millisecond)
		if n := len(g.model.Requests()); n != 1 {
			t.Fatalf("%d model requests: the queued message ran after /stop", n)
		}
	})
	t.Run("stop", func(t *testing.T) {
		g := startGateway(t, "", "TELEGRAM_ALLOWED_USERS=1\n", slow)
		say(g, 1, "first")
		g.waitModel(t, 1)
		say(g, 1, "/stop")
		got := texts(g.waitCalls(t, "sendMessage", 1))
		if !strings.Contains(got[0], "Stopped") {
			t.Fatalf("sent %q", got)
		}
		time.Sleep(1700 * time.Millisecond)
		if n := len(g.tg.Calls("sendMessage")); n != 1 {
			t.Fatalf("%d messages sent: the stopped turn answered", n)
		}
		g.stop(t)
		s, err := session.Open(context.Background(), session.Path(g.home))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		k, err := s.LookupKey(context.Background(), "agent:main:telegram:dm:1")
		if err != nil {
			t.Fatal(err)
		}
		msgs, err := s.Messages(context.Background(), k.SessionID)
		if err != nil || len(msgs) < 2 || msgs[1].Content != "first" {
			t.Fatalf("stored %+v, %v: the stopped turn's message is lost", msgs, err)
		}
	})
}

// An unauthorised message reaches neither the model nor a session; a DM gets
// a pairing code when the behaviour is pair.
func TestGatewayUnauthorised(t *testing.T) {
	g := startGateway(t, "unauthorized_dm_behavior: pair\n", "TELEGRAM_ALLOWED_USERS=1\n", llmtest.Reply{Content: "never"})
	say(g, 999, "let me in")
	g.tg.PushText(telegramfake.Message{ChatID: -5, ChatType: "supergroup", UserID: 998, Text: "and me"})
	got := texts(g.waitCalls(t, "sendMessage", 1))
	if !strings.HasPrefix(got[0], "999:") || !strings.Contains(got[0], "hermes pairing approve telegram") {
		t.Fatalf("sent %q", got)
	}
	time.Sleep(300 * time.Millisecond)
	if n := len(g.model.Requests()); n != 0 {
		t.Fatalf("the model was asked %d times", n)
	}
	if n := len(g.tg.Calls("sendMessage")); n != 1 {
		t.Fatalf("%d messages sent; the group message must be dropped silently", n)
	}
	if strings.Contains(g.stderr.String(), "code") && strings.Contains(g.stderr.String(), got[0][len(got[0])-8:]) {
		t.Fatal("the pairing code is in the log")
	}
}

// A failing model is reported in the chat, and the gateway goes on.
func TestGatewayModelFailure(t *testing.T) {
	g := startGateway(t, "", "TELEGRAM_ALLOWED_USERS=1\n",
		llmtest.Reply{Status: 400, Error: "the model is unwell"}, llmtest.Reply{Content: "better now"})
	say(g, 1, "hello")
	g.waitCalls(t, "sendMessage", 1)
	say(g, 1, "again")
	got := texts(g.waitCalls(t, "sendMessage", 2))
	if !strings.Contains(got[0], "Sorry, that failed") || !strings.Contains(got[1], "better now") {
		t.Fatalf("sent %q", got)
	}
}

// A conversation dropped from memory (gateway.max_live_sessions) continues
// from state.db at its next message.
func TestGatewayIdleSessionsLeaveMemory(t *testing.T) {
	ok := llmtest.Reply{Content: "ok"}
	g := startGateway(t, "gateway:\n  max_live_sessions: 1\n", "TELEGRAM_ALLOWED_USERS=1,2\n", ok, ok, ok)
	say(g, 1, "remember the zebra")
	g.waitCalls(t, "sendMessage", 1)
	say(g, 2, "another chat")
	g.waitCalls(t, "sendMessage", 2)
	say(g, 1, "what did I say?")
	g.waitCalls(t, "sendMessage", 3)
	reqs := g.model.Requests()
	var seen []string
	for _, m := range reqs[2].Messages {
		seen = append(seen, m.Content)
	}
	joined := strings.Join(seen, "|")
	if !strings.Contains(joined, "remember the zebra") || strings.Contains(joined, "another chat") {
		t.Fatalf("chat 1's third request: %s", joined)
	}
}

// With require_mention, a group message that does not mention the bot is
// not for it; one that does, and any command, is answered.
func TestGatewayGroupRequireMention(t *testing.T) {
	g := startGateway(t, "telegram:\n  require_mention: true\n", "TELEGRAM_ALLOWED_USERS=7\n", llmtest.Reply{Content: "you called"})
	group := func(text string) {
		g.tg.PushText(telegramfake.Message{ChatID: -100, ChatType: "supergroup", UserID: 7, Text: text})
	}
	group("just chatting among ourselves")
	group("@" + telegramfake.BotUsername + " what is up?")
	g.waitCalls(t, "sendMessage", 1)
	group("/whoami")
	got := texts(g.waitCalls(t, "sendMessage", 2))
	if !strings.Contains(got[0], "you called") || !strings.Contains(got[1], "agent:main:telegram:group:\\-100:7") {
		t.Fatalf("sent %q", got)
	}
	reqs := g.model.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests", len(reqs))
	}
	for _, m := range reqs[0].Messages {
		if strings.Contains(m.Content, "among ourselves") {
			t.Fatal("the unmentioned message reached the model")
		}
	}
}

// modelExtra takes a leading "model:" block off *config and returns its
// indented lines, so a test can add model settings beside the fake's.
func modelExtra(config *string) string {
	rest, ok := strings.CutPrefix(*config, "model:\n")
	if !ok {
		return ""
	}
	var extra strings.Builder
	for strings.HasPrefix(rest, "  ") {
		line, after, _ := strings.Cut(rest, "\n")
		extra.WriteString(line + "\n")
		rest = after
	}
	*config = rest
	return extra.String()
}
