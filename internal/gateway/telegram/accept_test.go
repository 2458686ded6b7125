package telegram_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/internal/gateway/telegram"
	"github.com/hermes-go/hermes/internal/testutil/telegramfake"
)

// queue stands for a cluster's work queue as SetAccept sees it, shared by
// the pollers of a test: it dedupes by update id, as Enqueue does.
type queue struct {
	mu     sync.Mutex
	ids    map[int64]bool
	texts  []string // what was queued, in order
	offers []int64  // every update offered, repeats included
}

func (q *queue) accept(_ context.Context, id int64, ev platform.Event, _ []byte) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.offers = append(q.offers, id)
	if !q.ids[id] {
		q.ids[id] = true
		q.texts = append(q.texts, ev.Text)
	}
	return nil
}

func (q *queue) queued() string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return strings.Join(q.texts, ",")
}

func (q *queue) offered(id int64) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	for _, x := range q.offers {
		if x == id {
			n++
		}
	}
	return n
}

// poller runs an adapter whose updates go to accept; handled counts what
// reached the local handler (nothing should, with a queue).
type poller struct {
	mu      sync.Mutex
	handled int
	cancel  context.CancelFunc
	done    chan struct{}
}

func startPoller(t *testing.T, srv *telegramfake.Server, accept telegram.AcceptFunc) *poller {
	t.Helper()
	a, err := telegram.New(telegram.Options{Token: srv.Token, BaseURL: srv.URL, PollTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	a.SetAccept(accept)
	ctx, cancel := context.WithCancel(context.Background())
	p := &poller{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		_ = a.Run(ctx, func(context.Context, platform.Event) {
			p.mu.Lock()
			p.handled++
			p.mu.Unlock()
		})
	}()
	t.Cleanup(p.stop)
	return p
}

func (p *poller) stop() { p.cancel(); <-p.done }

func (p *poller) handledLocally() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.handled
}

func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Two pollers in turn: the first queues a batch and stops (its process
// died) before its next poll confirms it; the second is offered the batch
// again, which the queue dedupes, then what came next. Nothing reaches a
// local handler.
func TestAcceptedBatchComesAgainUnconfirmed(t *testing.T) {
	srv := telegramfake.Start("1:tok")
	defer srv.Close()
	q := &queue{ids: map[int64]bool{}}
	var ids []int64
	for _, text := range []string{"one", "two", "three"} {
		ids = append(ids, srv.PushText(telegramfake.Message{ChatID: 1, UserID: 1, Text: text}))
	}
	// The first process dies as it queues its third update: the commit
	// went through, its next poll never happens.
	stalled := make(chan struct{})
	var once sync.Once
	first := startPoller(t, srv, func(ctx context.Context, id int64, ev platform.Event, raw []byte) error {
		err := q.accept(ctx, id, ev, raw)
		if id == ids[2] {
			once.Do(func() { close(stalled) })
			<-ctx.Done()
		}
		return err
	})
	<-stalled
	first.stop()
	second := startPoller(t, srv, q.accept)
	srv.PushText(telegramfake.Message{ChatID: 1, UserID: 1, Text: "four"})
	eventually(t, "the fourth update", func() bool { return q.queued() == "one,two,three,four" })
	for i, id := range ids {
		if n := q.offered(id); n != 2 {
			t.Fatalf("update %d (%d) was offered %d times, want 2 (the unconfirmed batch comes again)", i, id, n)
		}
	}
	if first.handledLocally()+second.handledLocally() != 0 {
		t.Fatal("an update reached the local handler despite the queue")
	}
}

// When the queue refuses an update (the database away) it is not confirmed:
// it comes with the next poll, with what followed it, in order, and what
// was queued before it is not offered again.
func TestAcceptFailureRepollsTheRestOfTheBatch(t *testing.T) {
	srv := telegramfake.Start("1:tok")
	defer srv.Close()
	q := &queue{ids: map[int64]bool{}}
	one := srv.PushText(telegramfake.Message{ChatID: 1, UserID: 1, Text: "one"})
	two := srv.PushText(telegramfake.Message{ChatID: 1, UserID: 1, Text: "two"})
	three := srv.PushText(telegramfake.Message{ChatID: 1, UserID: 1, Text: "three"})
	refused := 0 // two's first two offers fail (the poll loop calls accept from one goroutine)
	startPoller(t, srv, func(ctx context.Context, id int64, ev platform.Event, raw []byte) error {
		if id == two && refused < 2 {
			refused++
			q.mu.Lock()
			q.offers = append(q.offers, id)
			q.mu.Unlock()
			return errors.New("the database is unreachable")
		}
		return q.accept(ctx, id, ev, raw)
	})
	eventually(t, "the three updates", func() bool { return q.queued() == "one,two,three" })
	for _, c := range []struct {
		id   int64
		want int
	}{{one, 1}, {two, 3}, {three, 1}} { // three: never offered past a refusal
		if n := q.offered(c.id); n != c.want {
			t.Fatalf("update %d offered %d times, want %d", c.id, n, c.want)
		}
	}
}

// Decode knows the bot's name once Identify has run, on an adapter that
// never polls (a cluster worker on a process that does not own the poll).
func TestIdentifyWithoutRun(t *testing.T) {
	srv := telegramfake.Start("1:tok")
	defer srv.Close()
	a, err := telegram.New(telegram.Options{Token: srv.Token, BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	raw := []byte(`{"update_id":5,"message":{"message_id":9,"date":1,"text":"hi @` + telegramfake.BotUsername + `",` +
		`"from":{"id":2,"is_bot":false,"first_name":"u"},"chat":{"id":-3,"type":"group","title":"g"}}}`)
	if ev, ok := a.Decode(context.Background(), raw); !ok || ev.Mentioned {
		t.Fatalf("before Identify: %+v %v; want decoded, not known to mention the bot", ev, ok)
	}
	if a.Identified() {
		t.Fatal("identified before Identify")
	}
	if err := a.Identify(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ev, ok := a.Decode(context.Background(), raw); !ok || !ev.Mentioned {
		t.Fatalf("after Identify: %+v %v; want the mention seen", ev, ok)
	}
	if n := len(srv.Calls("getUpdates")); n != 0 {
		t.Fatalf("Identify polled (%d getUpdates)", n)
	}
}
