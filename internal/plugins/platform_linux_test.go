package plugins

// A real Python platform plugin, written against upstream's gateway imports,
// driven through the gateway's adapter proxy: connect, send, messages in
// (checked), a reported disconnect, a crash and the reconnect after the
// plugin's restart, a config the plugin refuses for good.

import (
	"context"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/internal/gateway/pluginplatform"
	"github.com/hermes-go/hermes/internal/plugins/registry"
	"github.com/hermes-go/hermes/pkg/protocol"
)

const loopInit = `
import asyncio, os
from gateway.config import Platform, PlatformConfig
from gateway.platforms.base import BasePlatformAdapter, MessageEvent, MessageType, SendResult

STARTS = []


class LoopAdapter(BasePlatformAdapter):
    def __init__(self, config: PlatformConfig):
        super().__init__(config, Platform("loop"))
        self.greeting = config.extra.get("greeting", "")

    async def connect(self, *, is_reconnect=False):
        STARTS.append(is_reconnect)
        self._mark_connected()
        return True

    async def disconnect(self):
        self._mark_disconnected()

    async def _emit(self, chat_id, text, user="7"):
        ev = MessageEvent(text=text, message_type=MessageType.TEXT,
                          source=self.build_source(chat_id=chat_id, user_id=user, user_name="Ann\x1b[31m"))
        try:
            await self.handle_message(ev)
            return "accepted"
        except ValueError as exc:
            return "refused: %s" % exc

    async def send(self, chat_id, content, reply_to=None, metadata=None):
        if content == "info":
            return SendResult(success=True, message_id="pid=%d starts=%s greeting=%s" % (os.getpid(), STARTS, self.greeting))
        if content == "echo":
            return SendResult(success=True, message_id=await self._emit(chat_id, "echo from " + chat_id))
        if content == "bad-chat":
            return SendResult(success=True, message_id=await self._emit("a\nb", "x"))
        if content == "drop":
            self._set_fatal_error("network", "socket closed", retryable=True)
            return SendResult(success=True, message_id="dropped")
        if content == "fail":
            return SendResult(success=False, error="rate limited\x07", retryable=True, retry_after=3)
        return SendResult(success=True, message_id="sent:" + content)


def validate(cfg):
    return not cfg.extra.get("refuse")


def register(ctx):
    ctx.register_platform(name="loop", label="Loop", adapter_factory=LoopAdapter, check_fn=lambda: True,
                          validate_config=validate, allowed_users_env="LOOP_USERS", allow_all_env="LOOP_ALL",
                          max_message_length=10, emoji="🔁")
`

type platformRun struct {
	a      *pluginplatform.Adapter
	mu     sync.Mutex
	events []platform.Event
	cancel context.CancelFunc
	done   chan error
}

func (r *platformRun) got() []platform.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]platform.Event(nil), r.events...)
}

func startLoop(t *testing.T, e *testEnv, extra map[string]any) *platformRun {
	t.Helper()
	entries, _ := e.m.Registry().Platforms()
	if len(entries) != 1 || entries[0].Name != "loop" {
		t.Fatalf("platform entries %+v", entries)
	}
	ent := entries[0]
	reg := e.m.Registry()
	a, err := pluginplatform.New(pluginplatform.Options{
		Name: ent.Name, Plugin: ent.Plugin, Conn: ent.Conn, MaxMessageLength: ent.Details.MaxMessageLength,
		Bind: func(ev func(context.Context, protocol.PlatformEventParams) error, st func(protocol.PlatformStatusParams)) func() {
			return reg.BindPlatform(ent.Plugin, ent.Name, registry.PlatformReceiver{Event: ev, Status: st})
		},
		Start:   protocol.PlatformStartParams{Extra: extra},
		Backoff: []time.Duration{10 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &platformRun{a: a, done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() {
		r.done <- a.Run(ctx, func(_ context.Context, ev platform.Event) {
			r.mu.Lock()
			r.events = append(r.events, ev)
			r.mu.Unlock()
		})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-r.done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(guard):
			t.Error("Run did not end")
		}
	})
	return r
}

func (r *platformRun) send(t *testing.T, text string) string {
	t.Helper()
	res, err := r.a.Send(context.Background(), platform.Outbound{ChatID: "42", Text: text})
	if err != nil {
		t.Fatalf("send %q: %v", text, err)
	}
	return res.MessageID
}

func TestPlatformPluginThroughTheProxy(t *testing.T) {
	e := prepareEnvWith(t, map[string]string{"loopplat": loopInit}, "", func(o *Options) { o.Restart = noDelay })
	if err := e.m.Load(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	entries, _ := e.m.Registry().Platforms()
	if len(entries) != 1 {
		t.Fatalf("entries %+v", entries)
	}
	ent := entries[0]
	if ent.Label != "Loop" || ent.Details.AllowedUsersEnv != "LOOP_USERS" || ent.Details.AllowAllEnv != "LOOP_ALL" || ent.Details.MaxMessageLength != 10 {
		t.Fatalf("entry %+v", ent)
	}
	if ok, err := ent.Check(context.Background()); !ok || err != nil {
		t.Fatalf("check_fn: %v %v", ok, err)
	}
	r := startLoop(t, e, map[string]any{"greeting": "hey"})
	waitFor(t, "connected", r.a.Connected)

	// The PlatformConfig carried the extra; a long reply went in chunks of 10.
	info := r.send(t, "info")
	wantAll(t, "info", info, "starts=[False]", "greeting=hey")
	if id := r.send(t, "0123456789abcdefghij"); id != "sent:abcdefghij" {
		t.Fatalf("last chunk id %q", id)
	}

	// handle_message reaches the handler as an Event of this platform, names made safe.
	if got := r.send(t, "echo"); got != "accepted" {
		t.Fatalf("echo: %q", got)
	}
	evs := r.got()
	if len(evs) != 1 || evs[0].Text != "echo from 42" || evs[0].Source.Platform != "loop" || evs[0].Source.UserID != "7" ||
		evs[0].Source.ChatType != platform.ChatDM || strings.ContainsRune(evs[0].Source.UserName, 0x1b) {
		t.Fatalf("events %+v", evs)
	}
	// A malformed event is refused back to the plugin as a ValueError.
	wantAll(t, "refusal", r.send(t, "bad-chat"), "refused: source.chat_id", "control characters")
	if len(r.got()) != 1 {
		t.Fatal("a refused event reached the handler")
	}
	// A failed send is an error, its text sanitised.
	_, err := r.a.Send(context.Background(), platform.Outbound{ChatID: "42", Text: "fail"})
	if err == nil || !strings.Contains(err.Error(), "rate limited") || strings.ContainsRune(err.Error(), 7) {
		t.Fatalf("failed send: %v", err)
	}

	// The adapter reports its connection lost: the proxy reconnects it.
	r.send(t, "drop")
	waitFor(t, "reconnected after the drop", func() bool {
		res, err := r.a.Send(context.Background(), platform.Outbound{ChatID: "1", Text: "info"})
		return err == nil && strings.Contains(res.MessageID, "starts=[False, True]")
	})

	// The plugin process is killed: disconnected, then connected again to the restarted process.
	old := e.pid(t, "loopplat")
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "disconnected after the kill", func() bool { return !r.a.Connected() })
	if _, err := r.a.Send(context.Background(), platform.Outbound{ChatID: "1", Text: "x"}); err == nil {
		t.Fatal("a send while disconnected succeeded")
	}
	e.waitRestarted(t, "loopplat", old)
	waitFor(t, "reconnected after the restart", r.a.Connected)
	wantAll(t, "after restart", r.send(t, "info"), "starts=[True]")
	if got := r.send(t, "echo"); got != "accepted" {
		t.Fatalf("echo after restart: %q", got)
	}
}

func TestPlatformPluginRefusedConfigStaysDown(t *testing.T) {
	e := prepareEnvWith(t, map[string]string{"loopplat": loopInit}, "", nil)
	if err := e.m.Load(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	r := startLoop(t, e, map[string]any{"refuse": true})
	time.Sleep(100 * time.Millisecond) // several backoffs: it must not retry or connect
	if r.a.Connected() {
		t.Fatal("connected with a config validate_config refused")
	}
	select {
	case err := <-r.done:
		t.Fatalf("Run ended by itself: %v", err)
	default:
	}
}

func TestRegisterPlatformUnknownKeyword(t *testing.T) {
	init := `
from gateway.platforms.base import BasePlatformAdapter

def register(ctx):
    ctx.register_platform(name="x", label="X", adapter_factory=BasePlatformAdapter, check_fn=None, colour="red")
`
	e := prepareEnvWith(t, map[string]string{"kw": init}, "", nil)
	_ = e.m.Load(context.Background(), nil)
	p, _ := e.m.Plugin("kw")
	_, detail := p.State()
	wantAll(t, "load error", detail, "TypeError", "unexpected keyword argument 'colour'")
}
