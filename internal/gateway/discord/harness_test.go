package discord

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/internal/testutil/discordfake"
	"github.com/hermes-go/hermes/internal/testutil/syncbuf"
)

// The world every test starts with.
const (
	guildID  = "500000000000000001"
	textChan = "500000000000000010"
	dmChan   = "500000000000000020"
	userID   = "600000000000000001"
	otherBot = "600000000000000099"
)

var alice = discordfake.Author{ID: userID, Name: "alice"}

// harness is an Adapter running against its own fake Discord.
type harness struct {
	t      *testing.T
	ctx    context.Context
	fake   *discordfake.Server
	a      *Adapter
	events chan platform.Event
	logs   *syncbuf.Buffer
	done   chan error
	cancel context.CancelFunc
	once   sync.Once
}

func defaultOptions() Options {
	return Options{RequireMention: true, AutoThread: true}
}

// start connects an adapter with opts (Token and BaseURL filled in) to a new
// fake and waits for READY.
func start(t *testing.T, opts Options) *harness {
	t.Helper()
	return startWith(t, opts, nil)
}

// startWith is start with setup run on the fake before the bot connects.
func startWith(t *testing.T, opts Options, setup func(*discordfake.Server)) *harness {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	fake := discordfake.New(t)
	fake.AddChannel(discordfake.Channel{ID: textChan, Type: discordfake.ChannelGuildText, GuildID: guildID, Name: "general", ParentID: category})
	fake.AddChannel(discordfake.Channel{ID: dmChan, Type: discordfake.ChannelDM})
	if setup != nil {
		setup(fake)
	}
	h := &harness{t: t, ctx: ctx, fake: fake, events: make(chan platform.Event, 256), logs: &syncbuf.Buffer{}, done: make(chan error, 1)}
	if opts.Token == "" {
		opts.Token = discordfake.Token
	}
	if opts.BaseURL == "" {
		opts.BaseURL = fake.URL()
	}
	opts.Logger = slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts.ReconnectMin = 50 * time.Millisecond
	a, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	h.a = a
	runCtx, stop := context.WithCancel(ctx)
	h.cancel = stop
	go func() { h.done <- a.Run(runCtx, func(_ context.Context, ev platform.Event) { h.events <- ev }) }()
	t.Cleanup(h.stop)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("adapter log:\n%s", h.logs.String())
		}
	})
	fake.Wait(ctx, "the bot to identify", func(v discordfake.View) bool { return v.Identifies() == 1 && v.Connected() })
	h.waitConnected()
	return h
}

func (h *harness) waitConnected() {
	h.t.Helper()
	for !h.a.Connected() {
		select {
		case <-h.ctx.Done():
			h.t.Fatal("adapter never reported connected")
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// stop ends Run and checks it returns cleanly.
func (h *harness) stop() {
	h.once.Do(h.stopRun)
}

func (h *harness) stopRun() {
	h.cancel()
	select {
	case err := <-h.done:
		if err != nil {
			h.t.Errorf("Run after cancel: %v", err)
		}
	case <-time.After(15 * time.Second):
		h.t.Error("Run did not return after its context ended")
	}
	if h.a.Connected() {
		h.t.Error("Connected() is still true after Run returned")
	}
}

// next is the next event the adapter delivered.
func (h *harness) next() platform.Event {
	h.t.Helper()
	select {
	case ev := <-h.events:
		return ev
	case <-h.ctx.Done():
		h.t.Fatalf("no event came; adapter log:\n%s", h.logs.String())
		return platform.Event{}
	}
}

// dm makes alice write text in her DM with the bot and returns the id.
func (h *harness) dm(text string) string {
	return h.fake.MessageCreate(discordfake.MessageIn{ChannelID: dmChan, Author: alice, Content: text})
}

// marker sends a DM and checks it is the next event: whatever was pushed
// before it and did not arrive was dropped (events come in order).
func (h *harness) marker() {
	h.t.Helper()
	id := h.dm("marker")
	if ev := h.next(); ev.MessageID != id {
		h.t.Fatalf("want the marker DM next, got %+v", ev)
	}
}

func mention(text string) string { return "<@" + discordfake.BotID + "> " + text }

func asInvalid(err error) (string, bool) {
	var ia *platform.InvalidArgumentError
	if errors.As(err, &ia) {
		return ia.Reason, true
	}
	return "", false
}
