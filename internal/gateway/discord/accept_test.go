package discord

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/internal/testutil/discordfake"
)

// acceptor records what Accept was asked, failing the first fails calls.
type acceptor struct {
	mu    sync.Mutex
	fails int
	got   []platform.Event
	by    map[string]Acceptance // by text; Queued when absent
}

func (r *acceptor) accept(_ context.Context, ev platform.Event) (Acceptance, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, ev)
	if r.fails > 0 {
		r.fails--
		return 0, errors.New("database unreachable")
	}
	return r.by[ev.Text], nil
}

func (r *acceptor) texts() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, ev := range r.got {
		out = append(out, ev.Text)
	}
	return out
}

// Accepted messages go to Accept, in order, not to the handler; a failed
// Accept is retried (the messages behind it wait, so the order holds); a
// Local one reaches the handler; a Duplicate reaches nothing.
func TestAcceptQueuesInOrderAndRetries(t *testing.T) {
	acc := &acceptor{fails: 2, by: map[string]Acceptance{"dup": Duplicate, "local": Local}}
	h := start(t, Options{Accept: acc.accept})
	for _, text := range []string{"one", "two", "dup", "local"} {
		h.dm(text)
	}
	if ev := h.next(); ev.Text != "local" || ev.Kind != platform.EventMessage {
		t.Fatalf("the handler got %+v, want only the Local message", ev)
	}
	want := []string{"one", "one", "one", "two", "dup", "local"}
	if got := acc.texts(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("Accept was asked %v, want %v", got, want)
	}
	if !strings.Contains(h.logs.String(), "could not accept a message; retrying") {
		t.Errorf("the retries were not logged:\n%s", h.logs.String())
	}
	select {
	case ev := <-h.events:
		t.Fatalf("the handler also got %+v", ev)
	case <-time.After(100 * time.Millisecond):
	}
	acc.mu.Lock()
	ev := acc.got[0]
	acc.mu.Unlock()
	if ev.Source.Platform != Name || ev.Source.ChatType != platform.ChatDM || ev.Source.ChatID != dmChan || ev.Source.UserID != userID || ev.MessageID == "" {
		t.Errorf("accepted event %+v", ev)
	}
}

// A mention that opens an auto-thread: queued, the thread is expected here
// (the answer, from whichever process, opens it through this connection); a
// duplicate (answered elsewhere, its thread maybe open already) leaves none
// expected, so an answer here never tries to open it again.
func TestAcceptAutoThread(t *testing.T) {
	acc := &acceptor{by: map[string]Acceptance{"old news": Duplicate, "marker": Local}}
	h := start(t, Options{RequireMention: true, AutoThread: true, Accept: acc.accept})
	queued := h.fake.MessageCreate(discordfake.MessageIn{ChannelID: textChan, GuildID: guildID, Author: alice, Content: mention("new")})
	dup := h.fake.MessageCreate(discordfake.MessageIn{ChannelID: textChan, GuildID: guildID, Author: alice, Content: mention("old news")})
	h.marker()
	h.a.mu.Lock()
	_, q := h.a.pending[queued]
	_, d := h.a.pending[dup]
	h.a.mu.Unlock()
	if !q || d {
		t.Fatalf("expected threads: queued %v (want true), duplicate %v (want false)", q, d)
	}
	acc.mu.Lock()
	defer acc.mu.Unlock()
	if len(acc.got) < 1 || acc.got[0].Source.ProspectiveThreadID != queued || acc.got[0].Source.ThreadID != queued {
		t.Fatalf("the queued mention's source %+v", acc.got)
	}
}
