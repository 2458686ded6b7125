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

// seenSet is a cluster's dedupe as Options.Seen sees it, shared by the
// pollers of the test; down makes the next calls fail as an unreachable
// database would.
type seenSet struct {
	mu    sync.Mutex
	ids   map[int64]bool
	asked []int64
	down  int
}

func (s *seenSet) seen(_ context.Context, id int64) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, id)
	if s.down > 0 {
		s.down--
		return false, errors.New("the database is unreachable")
	}
	if s.ids[id] {
		return false, nil
	}
	s.ids[id] = true
	return true, nil
}

func (s *seenSet) askedAbout(id int64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, x := range s.asked {
		if x == id {
			n++
		}
	}
	return n
}

// poller runs an adapter whose handler records each event and, once it has
// n, blocks until the adapter stops: the process died before its next poll
// confirmed the batch.
type poller struct {
	mu     sync.Mutex
	texts  []string
	cancel context.CancelFunc
	done   chan struct{}
}

func startPoller(t *testing.T, srv *telegramfake.Server, seen *seenSet, blockAfter int) *poller {
	t.Helper()
	a, err := telegram.New(telegram.Options{Token: srv.Token, BaseURL: srv.URL, PollTimeout: time.Second, Seen: seen.seen})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &poller{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		_ = a.Run(ctx, func(ctx context.Context, ev platform.Event) {
			p.mu.Lock()
			p.texts = append(p.texts, ev.Text)
			n := len(p.texts)
			p.mu.Unlock()
			if n == blockAfter {
				<-ctx.Done()
			}
		})
	}()
	t.Cleanup(p.stop)
	return p
}

func (p *poller) stop() { p.cancel(); <-p.done }

func (p *poller) got() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.texts, ",")
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

// Two pollers in turn: the first receives a batch and stops before its next
// poll confirms it; the second gets the batch again and leaves it, as Seen
// says another took it. Each update is handled once.
func TestSeenDedupesARepeatedBatch(t *testing.T) {
	srv := telegramfake.Start("1:tok")
	defer srv.Close()
	seen := &seenSet{ids: map[int64]bool{}}
	var ids []int64
	for _, text := range []string{"one", "two", "three"} {
		ids = append(ids, srv.PushText(telegramfake.Message{ChatID: 1, UserID: 1, Text: text}))
	}
	first := startPoller(t, srv, seen, 3)
	eventually(t, "the first poller's batch", func() bool { return first.got() == "one,two,three" })
	first.stop()
	second := startPoller(t, srv, seen, -1)
	srv.PushText(telegramfake.Message{ChatID: 1, UserID: 1, Text: "four"})
	eventually(t, "the second poller's update", func() bool { return second.got() != "" })
	time.Sleep(100 * time.Millisecond) // a repeated update would be handled by now
	if got := second.got(); got != "four" {
		t.Fatalf("the second poller handled %q, want only four", got)
	}
	for _, id := range ids {
		if n := seen.askedAbout(id); n != 2 {
			t.Fatalf("update %d was checked %d times, want 2 (the batch came again)", id, n)
		}
	}
}

// When Seen fails (the database away) the update is not handled and not
// confirmed: it comes with the next poll, with what followed it, in order.
func TestSeenFailureRepollsTheBatch(t *testing.T) {
	srv := telegramfake.Start("1:tok")
	defer srv.Close()
	seen := &seenSet{ids: map[int64]bool{}, down: 2}
	srv.PushText(telegramfake.Message{ChatID: 1, UserID: 1, Text: "one"})
	two := srv.PushText(telegramfake.Message{ChatID: 1, UserID: 1, Text: "two"})
	p := startPoller(t, srv, seen, -1)
	eventually(t, "both updates", func() bool { return p.got() == "one,two" })
	time.Sleep(100 * time.Millisecond)
	if got := p.got(); got != "one,two" {
		t.Fatalf("handled %q, want one,two once each", got)
	}
	if n := seen.askedAbout(two); n != 1 {
		t.Fatalf("update two was checked %d times; the failures were on one", n)
	}
}
