package session

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/llm"
)

// waitGroup polls the commit group until cond holds.
func waitGroup(t *testing.T, g *commitGroup, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		g.mu.Lock()
		ok := cond()
		g.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the commit group never got there")
		}
		time.Sleep(time.Millisecond)
	}
}

// Writes that queue behind a commit are committed together; the ones that
// fail (a missing session, a cancelled caller, a write that changes its mind
// after writing) are rolled back alone, the others all land, with distinct
// seqs.
func TestGroupCommitIsolatesFailures(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id, err := s.NewSession(ctx, Session{Source: "test"})
	if err != nil {
		t.Fatal(err)
	}

	block := make(chan struct{})
	first := make(chan error, 1)
	go func() { first <- s.tx(ctx, func(*sql.Tx) error { <-block; return nil }) }()
	waitGroup(t, &s.group, func() bool { return s.group.leading })

	const ok = 10
	type outcome struct {
		seq int
		err error
	}
	results := make(chan outcome, ok+3)
	var wg sync.WaitGroup
	for range ok {
		wg.Go(func() {
			seq, err := s.AppendMessage(ctx, id, llm.Message{Role: "user", Content: "hello"})
			results <- outcome{seq, err}
		})
	}
	wg.Go(func() {
		_, err := s.AppendMessage(ctx, "no-such-session", llm.Message{Role: "user", Content: "lost"})
		results <- outcome{-1, err}
	})
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	wg.Go(func() {
		_, err := s.AppendMessage(cancelled, id, llm.Message{Role: "user", Content: "cancelled"})
		results <- outcome{-2, err}
	})
	// A write that fails after it wrote: what it wrote must not land.
	wg.Go(func() {
		err := s.tx(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, created_at, updated_at) VALUES ('half-written', 0, 0)`); err != nil {
				return err
			}
			return errors.New("changed my mind")
		})
		results <- outcome{-3, err}
	})
	waitGroup(t, &s.group, func() bool { return len(s.group.queue) == ok+3 }) // all behind the blocked commit
	close(block)
	wg.Wait()
	close(results)
	if err := <-first; err != nil {
		t.Fatalf("the blocking write: %v", err)
	}
	seqs := map[int]bool{}
	for r := range results {
		switch r.seq {
		case -1:
			if !errors.Is(r.err, ErrNotFound) {
				t.Errorf("append to a missing session: %v, want ErrNotFound", r.err)
			}
		case -2:
			if !errors.Is(r.err, context.Canceled) {
				t.Errorf("append with a cancelled context: %v, want context.Canceled", r.err)
			}
		case -3:
			if r.err == nil || r.err.Error() != "changed my mind" {
				t.Errorf("the failing write: %v", r.err)
			}
		default:
			if r.err != nil {
				t.Errorf("append: %v", r.err)
			}
			seqs[r.seq] = true
		}
	}
	if _, err := s.Get(ctx, "half-written"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a failed write's row was committed with the others (Get: %v)", err)
	}
	msgs, err := s.Messages(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != ok || len(seqs) != ok {
		t.Fatalf("stored %d messages with %d distinct seqs, want %d", len(msgs), len(seqs), ok)
	}
	for seq := 1; seq <= ok; seq++ {
		if !seqs[seq] {
			t.Errorf("no message got seq %d", seq)
		}
	}
}

// A generated session id that another session already has is drawn again
// (24 random bits per second: a busy gateway draws the same one).
func TestNewSessionDrawsAgainOnAClash(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	at := time.Date(2026, 12, 3, 5, 0, 0, 0, time.UTC)
	s.SetClock(func() time.Time { return at })
	// 15,000 sessions in one second: without drawing again, two would share
	// an id with a probability of 99.9%.
	taken := map[string]bool{}
	for range 15000 {
		id, err := s.NewSession(ctx, Session{})
		if err != nil {
			t.Fatalf("after %d sessions in one second: %v", len(taken), err)
		}
		if taken[id] {
			t.Fatalf("id %s given twice", id)
		}
		taken[id] = true
	}
	// An id the caller chose is never replaced.
	if _, err := s.NewSession(ctx, Session{ID: "fixed"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.NewSession(ctx, Session{ID: "fixed"}); err == nil {
		t.Error("a chosen id that exists was accepted (or replaced)")
	}
}
