package app

import (
	"context"
	"log/slog"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/cluster"
	"github.com/hermes-go/hermes/internal/gateway"
	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/internal/gateway/telegram"
	"github.com/hermes-go/hermes/internal/testutil/pgtest"
	"github.com/hermes-go/hermes/internal/testutil/telegramfake"
)

// stallingPoller is the Telegram adapter of a process that dies right after
// receiving a batch: once it has handed on blockAfter updates its handler
// blocks until the adapter stops, so the next poll never confirms the batch.
type stallingPoller struct {
	*telegram.Adapter
	blockAfter int32
	got        atomic.Int32
}

func (s *stallingPoller) Run(ctx context.Context, h platform.Handler) error {
	return s.Adapter.Run(ctx, func(ctx context.Context, ev platform.Event) {
		h(ctx, ev)
		if s.got.Add(1) == s.blockAfter {
			<-ctx.Done()
		}
	})
}

// pollProc is one gateway process polling Telegram behind the election.
type pollProc struct {
	inner *stallingPoller
	o     *ownedAdapter
	stop  context.CancelFunc
	done  chan error
}

func startPollProc(t *testing.T, url string, srv *telegramfake.Server, blockAfter int32) *pollProc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := cluster.Open(ctx, fastCluster(url))
	if err != nil {
		t.Fatal(err)
	}
	owners := &gatewayOwners{node: n, owned: map[string]*ownedAdapter{}}
	tg, err := telegram.New(telegram.Options{Token: srv.Token, BaseURL: srv.URL, PollTimeout: time.Second, Seen: owners.telegramSeen()})
	if err != nil {
		t.Fatal(err)
	}
	p := &pollProc{inner: &stallingPoller{Adapter: tg, blockAfter: blockAfter}, done: make(chan error, 1)}
	p.o = &ownedAdapter{inner: p.inner, role: roleTelegramPoll, node: n, log: slog.New(slog.DiscardHandler)}
	owners.owned[telegram.Name] = p.o
	r, err := gateway.New(gateway.Options{Adapters: []platform.Adapter{p.o}, Engine: echoEngine{}, Auth: allowAll{}, DrainTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	owners.setRunner(r)
	rctx, stop := context.WithCancel(context.Background())
	p.stop = stop
	go func() { p.done <- r.Run(rctx) }()
	t.Cleanup(func() { p.halt(); n.Close() })
	return p
}

func (p *pollProc) halt() {
	if p.stop != nil {
		p.stop()
		<-p.done
		p.stop = nil
	}
}

// answered are the texts of the bot's messages, sorted.
func answered(srv *telegramfake.Server) []string {
	var out []string
	for _, c := range srv.Calls("sendMessage") {
		if c.Status == 200 {
			out = append(out, c.Params["chat_id"]+" "+c.Params["text"])
		}
	}
	sort.Strings(out)
	return out
}

// Telegram long polling across owners: the first receives a batch, answers
// it and dies before its next poll confirms it; the next owner gets the
// batch again and answers none of it twice (the cluster's dedupe), then
// answers what comes next. Each update is answered exactly once.
func TestPolledBatchAnsweredOnceAcrossOwners(t *testing.T) {
	url := pgtest.Start(t).DB(t)
	srv := telegramfake.Start("1:tok")
	defer srv.Close()
	for chat := int64(1); chat <= 3; chat++ {
		srv.PushText(telegramfake.Message{ChatID: chat, UserID: chat, Text: "hello"})
	}
	first := startPollProc(t, url, srv, 3)
	waitUntil(t, "the first owner to answer its batch", 15*time.Second, func() bool { return len(answered(srv)) == 3 })
	second := startPollProc(t, url, srv, 0)
	first.halt()
	waitUntil(t, "the second owner to take over", 10*time.Second, second.o.leading.Load)
	srv.PushText(telegramfake.Message{ChatID: 4, UserID: 4, Text: "hello"})
	waitUntil(t, "the new update's answer", 15*time.Second, func() bool { return len(answered(srv)) >= 4 })
	time.Sleep(500 * time.Millisecond) // a repeated answer would be sent by now
	want := "1 answer: hello|2 answer: hello|3 answer: hello|4 answer: hello"
	if got := strings.Join(answered(srv), "|"); got != want {
		t.Fatalf("answers %q\nwant    %q", got, want)
	}
	if got := second.inner.got.Load(); got != 1 {
		t.Fatalf("the second owner handled %d updates, want the new one only", got)
	}
	if _, most := srv.Pollers(); most != 1 {
		t.Fatalf("%d pollers at once", most)
	}
}
