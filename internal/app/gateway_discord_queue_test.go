package app

import (
	"context"
	"log/slog"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/cluster"
	"github.com/hermes-go/hermes/internal/gateway"
	"github.com/hermes-go/hermes/internal/gateway/auth"
	"github.com/hermes-go/hermes/internal/gateway/discord"
	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/session"
	"github.com/hermes-go/hermes/internal/testutil/pgtest"
)

// outAdapter is a Discord connection that keeps what was sent.
type outAdapter struct {
	mu   sync.Mutex
	sent []platform.Outbound
}

func (a *outAdapter) Name() string                                       { return discord.Name }
func (a *outAdapter) Run(ctx context.Context, _ platform.Handler) error  { <-ctx.Done(); return nil }
func (a *outAdapter) Edit(context.Context, string, string, string) error { return nil }
func (a *outAdapter) Typing(context.Context, string, string) error       { return nil }
func (a *outAdapter) Connected() bool                                    { return true }
func (a *outAdapter) Send(_ context.Context, m platform.Outbound) (platform.SendResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sent = append(a.sent, m)
	return platform.SendResult{MessageID: "900"}, nil
}

func (a *outAdapter) outs() []platform.Outbound {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]platform.Outbound(nil), a.sent...)
}

// turnEngine records each turn and answers it.
type turnEngine struct {
	mu    sync.Mutex
	turns []string
	srcs  []platform.Source
}

func (e *turnEngine) Turn(_ context.Context, key string, src platform.Source, text string) (gateway.TurnResult, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.turns = append(e.turns, key+" "+text)
	e.srcs = append(e.srcs, src)
	return gateway.TurnResult{Reply: "answer to " + text}, nil
}
func (e *turnEngine) NewSession(context.Context, string, platform.Source) (string, error) {
	return "s", nil
}
func (e *turnEngine) Info(context.Context, string) (gateway.SessionInfo, error) {
	return gateway.SessionInfo{}, nil
}

func (e *turnEngine) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.turns)
}

// discordGateway is the part of a gateway process the queue path uses.
func discordGateway(t *testing.T, eng gateway.Engine, store session.Backend) (*Gateway, *outAdapter) {
	t.Helper()
	a := &outAdapter{}
	r, err := gateway.New(gateway.Options{Adapters: []platform.Adapter{a}, Engine: eng, Auth: allowAll{}})
	if err != nil {
		t.Fatal(err)
	}
	return &Gateway{runner: r, engine: &gatewayEngine{store: store}, cluster: &gatewayCluster{log: slog.New(slog.DiscardHandler)}}, a
}

// threadMention is a mention in a guild channel that opens an auto-thread:
// every field the queue must carry is set.
func threadMention(id, text string) platform.Event {
	return platform.Event{Kind: platform.EventMessage, MessageID: id, ReplyTo: "700000000000000019", Text: text, Mentioned: true,
		Time: time.Date(2026, 12, 4, 18, 0, 0, 0, time.UTC),
		Source: platform.Source{Platform: discord.Name, ChatType: platform.ChatThread, ChatID: "700000000000000010", ChatName: "general",
			ThreadID: id, ProspectiveThreadID: id, ScopeID: "700000000000000009", UserID: "600000000000000001", UserName: "alice",
			RoleAuthorized: true}}
}

// Accepted Discord messages are queued under their session key (a repeat is
// a duplicate; control events are not queued), and a worker's run of the item
// gives the turn the very event the owner accepted, answered in its thread as
// a reply to it; a conversation's items run in arrival order.
func TestDiscordQueueRoundTrip(t *testing.T) {
	url := pgtest.Start(t).DB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	node, err := cluster.Open(ctx, fastCluster(url))
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	eng := &turnEngine{}
	g, a := discordGateway(t, eng, nil)
	accept := g.discordAccept(node)

	first, second := threadMention("700000000000000020", "hello"), threadMention("700000000000000020", "and then")
	second.MessageID = "700000000000000021"
	button := platform.Event{Kind: platform.EventButton, Source: first.Source, Data: "hermes-approve:1:once"}
	for _, tt := range []struct {
		name string
		ev   platform.Event
		want discord.Acceptance
	}{
		{"a mention", first, discord.Queued},
		{"the same message again (a catch-up)", first, discord.Duplicate},
		{"the next message", second, discord.Queued},
		{"a button press", button, discord.Local},
		{"/approve", withText(first, "/approve session"), discord.Local},
		{"/stop to the bot", withText(first, "/stop@hermes"), discord.Local},
		{"/deny on a new line", withText(first, " /DENY\nplease"), discord.Local},
		{"another command is queued", withText(first, "/status"), discord.Queued},
	} {
		if tt.ev.Text == "/status" {
			tt.ev.MessageID = "700000000000000022"
		}
		got, err := accept(ctx, tt.ev)
		if err != nil || got != tt.want {
			t.Fatalf("%s: accept = %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
	key := g.runner.SessionKey(discord.Name, first)
	for i, want := range []platform.Event{first, second} {
		it, err := node.Claim(ctx)
		if err != nil || it == nil {
			t.Fatalf("claim %d: %v, %v", i, it, err)
		}
		if it.Platform != discord.Name || it.UpdateID != want.MessageID || it.SessionKey != key {
			t.Fatalf("item %d: %+v, want message %s of %s", i, it, want.MessageID, key)
		}
		if err := g.handleItem(ctx, it); err != nil {
			t.Fatal(err)
		}
		if err := node.Done(ctx, it); err != nil {
			t.Fatal(err)
		}
		if got := eng.srcs[i]; !reflect.DeepEqual(got, want.Source) {
			t.Fatalf("turn %d source\n got %+v\nwant %+v", i, got, want.Source)
		}
		if eng.turns[i] != key+" "+want.Text {
			t.Fatalf("turn %d = %q", i, eng.turns[i])
		}
		out := a.outs()[i]
		if out.ChatID != want.Source.ChatID || out.ThreadID != want.Source.ThreadID || out.ReplyTo != want.MessageID || out.Text != "answer to "+want.Text {
			t.Fatalf("answer %d: %+v", i, out)
		}
	}
	if it, err := node.Claim(ctx); err != nil || it == nil || it.UpdateID != "700000000000000022" {
		t.Fatalf("the queued /status: %+v, %v", it, err)
	}
}

func withText(ev platform.Event, text string) platform.Event {
	ev.Text = text
	return ev
}

// A redelivered Discord item (Attempt > 1) whose turn had stored its answer
// sends that answer once more, recovered, as the turn would have (in its
// thread, replying to the message), without running it again; one whose
// answer was never stored runs.
func TestDiscordItemRedelivered(t *testing.T) {
	ctx := context.Background()
	st, err := session.Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	eng := &turnEngine{}
	g, a := discordGateway(t, eng, st)
	ev := threadMention("700000000000000030", "clean up")
	key := g.runner.SessionKey(discord.Name, ev)
	id, err := st.NewSession(ctx, session.Session{Model: "m", Source: discord.Name})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.BindKey(ctx, key, id, "{}"); err != nil {
		t.Fatal(err)
	}
	// The turn's user message is stored with the message it answers.
	if _, err := st.AppendFrom(ctx, id, llm.Message{Role: "user", Content: "clean up"}, "discord:"+ev.MessageID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AppendMessage(ctx, id, llm.Message{Role: "assistant", Content: "done it"}); err != nil {
		t.Fatal(err)
	}
	payload, err := platform.MarshalEvent(ev)
	if err != nil {
		t.Fatal(err)
	}
	it := &cluster.Item{Platform: discord.Name, UpdateID: ev.MessageID, SessionKey: key, Payload: payload, Attempt: 2}
	if err := g.handleItem(ctx, it); err != nil {
		t.Fatal(err)
	}
	outs := a.outs()
	if eng.count() != 0 || len(outs) != 1 || !strings.Contains(outs[0].Text, "Recovered reply") || !strings.HasSuffix(outs[0].Text, "done it") ||
		outs[0].ThreadID != ev.MessageID || outs[0].ReplyTo != ev.MessageID {
		t.Fatalf("turns %d, sent %+v; want the stored answer once, recovered, in the thread", eng.count(), outs)
	}
	next := threadMention("700000000000000031", "clean up") // the same text: a new message all the same
	if it.Payload, err = platform.MarshalEvent(next); err != nil {
		t.Fatal(err)
	}
	it.UpdateID = next.MessageID
	if err := g.handleItem(ctx, it); err != nil {
		t.Fatal(err)
	}
	if eng.count() != 1 {
		t.Fatalf("a redelivered message whose answer was never stored ran %d turns, want 1", eng.count())
	}
	// A payload a newer hermes wrote is an error (the queue retries, then
	// dead-letters it), not a turn on half an event.
	it.Payload = []byte(`{"v":9,"kind":"message"}`)
	if err := g.handleItem(ctx, it); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("a newer payload: %v", err)
	}
}

// An approval button pressed on the owner of the connection while the turn
// that asked waits on another process reaches that turn: the owner finds
// the conversation's lease holder and passes the press on (real server,
// two nodes). Without a holder, or for anything but a control event, the
// owner handles the event itself.
func TestControlEventReachesTheHolder(t *testing.T) {
	url := pgtest.Start(t).DB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	owner, err := cluster.Open(ctx, fastCluster(url))
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	worker, err := cluster.Open(ctx, fastCluster(url))
	if err != nil {
		t.Fatal(err)
	}
	defer worker.Close()
	gOwner, _ := discordGateway(t, &turnEngine{}, nil)
	gWorker, asked := discordGateway(t, &turnEngine{}, nil)
	control := gOwner.discordControl(owner)

	ev := threadMention("700000000000000040", "clean up")
	key := gWorker.runner.SessionKey(discord.Name, ev)
	press := platform.Event{Kind: platform.EventButton, Source: ev.Source}
	if control(ctx, press) {
		t.Fatal("a press in a conversation nobody runs was passed on")
	}
	// The worker runs the conversation's item: it holds the lease.
	if _, err := owner.Enqueue(ctx, discord.Name, ev.MessageID, key, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	it, err := worker.Claim(ctx)
	if err != nil || it == nil {
		t.Fatalf("claim: %v, %v", it, err)
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan struct{})
	go func() { defer close(served); gWorker.serveDirect(sctx, worker) }()
	defer func() { stop(); <-served }()
	choice := make(chan string, 1)
	go func() {
		c, err := gWorker.runner.Ask(ctx, key, ev.Source, gateway.Question{Command: "rm -rf ./scratch", Description: "delete"})
		if err != nil {
			t.Error(err)
		}
		choice <- c
	}()
	var data string
	waitUntil(t, "the question", 10*time.Second, func() bool {
		for _, o := range asked.outs() {
			for _, b := range o.Buttons {
				if b.Label == "This session" {
					data = b.Data
				}
			}
		}
		return data != ""
	})
	if control(ctx, platform.Event{Kind: platform.EventMessage, Source: ev.Source, Text: "not a control", MessageID: "1"}) {
		t.Fatal("a plain message was passed on")
	}
	press.Data = data
	acked := make(chan string, 1)
	press.Ack = func(text string) { acked <- text }
	if !control(ctx, press) {
		t.Fatal("the press was not passed to the process running the turn")
	}
	select {
	case c := <-choice:
		if c != gateway.ChoiceSession {
			t.Fatalf("the turn got %q, want %q", c, gateway.ChoiceSession)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting turn never got the press")
	}
	if text := <-acked; text != "" {
		t.Errorf("the press was acknowledged with %q", text)
	}
	waitUntil(t, "the direct action acked", 5*time.Second, func() bool {
		var n int
		_ = worker.Pool().QueryRow(ctx, `SELECT count(*) FROM cluster_outbox`).Scan(&n)
		return n == 0
	})
}

// allowAll authorises everyone: the tests of the queue path are not about
// authorisation.
type allowAll struct{}

func (allowAll) Check(platform.Source) auth.Decision                           { return auth.Decision{Allowed: true} }
func (allowAll) CheckInjected(platform.Source) auth.Decision                   { return auth.Decision{Allowed: true} }
func (allowAll) PairingReply(context.Context, platform.Source) (string, error) { return "", nil }
