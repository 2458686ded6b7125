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

// holdCommits makes the next writes queue behind a commit that waits for
// release, so they are committed together.
func holdCommits(t *testing.T, s *Store) (release func()) {
	t.Helper()
	block, done := make(chan struct{}), make(chan error, 1)
	go func() { done <- s.tx(context.Background(), func(*sql.Tx) error { <-block; return nil }) }()
	waitGroup(t, &s.group, func() bool { return s.group.leading })
	return func() {
		close(block)
		if err := <-done; err != nil {
			t.Errorf("the holding write: %v", err)
		}
	}
}

func ftsIntegrity(t *testing.T, s *Store) {
	t.Helper()
	if _, err := s.db.Exec(`INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
		t.Fatalf("the search index does not match the messages: %v", err)
	}
}

// Messages committed together are all indexed for search, and a deletion in
// the same commit as new messages of the same session leaves the index
// matching the messages (its trigger never meets a message not yet indexed).
func TestIndexingInAGroupCommit(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	keep, _ := s.NewSession(ctx, Session{})
	doomed, _ := s.NewSession(ctx, Session{})
	if _, err := s.AppendMessage(ctx, doomed, llm.Message{Role: "user", Content: "zebra before"}); err != nil {
		t.Fatal(err)
	}

	release := holdCommits(t, s)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			id := keep
			if i%2 == 1 {
				id = doomed
			}
			if _, err := s.AppendMessage(ctx, id, llm.Message{Role: "user", Content: "giraffe and zebra"}); err != nil && !errors.Is(err, ErrNotFound) {
				t.Error(err)
			}
		})
	}
	// The deletion queues after the new messages, as it would to run on them.
	waitGroup(t, &s.group, func() bool { return len(s.group.queue) == 8 })
	wg.Go(func() {
		if err := s.Delete(ctx, doomed); err != nil {
			t.Error(err)
		}
	})
	waitGroup(t, &s.group, func() bool { return len(s.group.queue) == 9 })
	release()
	wg.Wait()

	ftsIntegrity(t, s)
	hits, err := s.Search(ctx, "giraffe", 100)
	if err != nil {
		t.Fatal(err)
	}
	msgs, _ := s.Messages(ctx, keep)
	if len(hits) != 4 || len(msgs) != 4 {
		t.Errorf("%d hits, %d messages kept; want 4 and 4 (the doomed session's gone): %+v", len(hits), len(msgs), hits)
	}
	if _, err := s.Get(ctx, doomed); !errors.Is(err, ErrNotFound) {
		t.Errorf("the deleted session: %v", err)
	}
	for _, h := range hits {
		if h.SessionID != keep {
			t.Errorf("a hit in the deleted session: %+v", h)
		}
	}
}

// A store from before (a trigger indexing each message) is migrated: what it
// had indexed is still found, and so is what is said after.
func TestIndexingMigratesFromTheTrigger(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for v := range 2 {
		if _, err := db.Exec(migrations[v]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(`PRAGMA user_version = 2;
		INSERT INTO sessions (id, created_at, updated_at) VALUES ('old', 0, 0);
		INSERT INTO messages (session_id, seq, role, content, created_at) VALUES ('old', 1, 'user', 'walrus from before', 0);`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.AppendMessage(ctx, "old", llm.Message{Role: "assistant", Content: "walrus after"}); err != nil {
		t.Fatal(err)
	}
	ftsIntegrity(t, s)
	hits, err := s.Search(ctx, "walrus", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 {
		t.Fatalf("%d hits for what was said before and after the migration, want 2: %+v", len(hits), hits)
	}
}

// A write that panics fails alone; the store goes on committing.
func TestGroupCommitSurvivesAPanickingWrite(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id, _ := s.NewSession(ctx, Session{})
	release := holdCommits(t, s)
	var wg sync.WaitGroup
	var panicked, appended error
	wg.Go(func() { panicked = s.tx(ctx, func(*sql.Tx) error { panic("boom") }) })
	wg.Go(func() { _, appended = s.AppendMessage(ctx, id, llm.Message{Role: "user", Content: "still here"}) })
	waitGroup(t, &s.group, func() bool { return len(s.group.queue) == 2 })
	release()
	wg.Wait()
	if panicked == nil || appended != nil {
		t.Fatalf("the panicking write: %v; the other: %v", panicked, appended)
	}
	if _, err := s.AppendMessage(ctx, id, llm.Message{Role: "user", Content: "and after"}); err != nil {
		t.Fatal(err)
	}
	if msgs, _ := s.Messages(ctx, id); len(msgs) != 2 {
		t.Fatalf("%d messages, want 2", len(msgs))
	}
}
