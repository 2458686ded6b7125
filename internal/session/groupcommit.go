package session

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
)

// Group commit. Every write of this process goes through tx, which hands it
// to whichever writer is committing: that one runs all the writes waiting
// at that moment in one SQLite transaction, each inside its own savepoint
// (a write that fails is rolled back alone), commits once, and only then do
// their callers return. Durability is unchanged (nothing returns before its
// commit); a gateway's concurrent turns share one commit instead of taking
// SQLite's write lock one after the other. Only one goroutine of the process
// asks SQLite for the lock at a time, so they never meet its busy handler,
// which sleeps (1, 2, 5 … 100 ms) rather than queueing; other processes
// still wait for the busy timeout.

// maxGroup bounds the writes one commit takes, so a leader returns soon.
const maxGroup = 64

type commitGroup struct {
	mu      sync.Mutex
	queue   []*txReq
	leading bool
}

type txReq struct {
	ctx context.Context
	fn  func(*sql.Tx) error
	// ch carries either leadership (lead) or the write's outcome; it is
	// buffered, so the leader never waits for a member.
	ch chan txResult
}

type txResult struct {
	lead bool
	err  error
}

// tx runs fn in a transaction: committed when tx returns nil, rolled back
// (fn's part of it) when fn fails.
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	g := &s.group
	r := &txReq{ctx: ctx, fn: fn, ch: make(chan txResult, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, r)
	lead := !g.leading
	g.leading = true
	g.mu.Unlock()
	if !lead {
		if res := <-r.ch; !res.lead {
			return res.err
		}
	}
	g.mu.Lock()
	n := min(len(g.queue), maxGroup)
	batch := g.queue[:n:n]
	g.queue = g.queue[n:]
	g.mu.Unlock()
	s.commit(batch)
	g.mu.Lock()
	if len(g.queue) > 0 {
		g.queue[0].ch <- txResult{lead: true} // the next writer commits what gathered meanwhile
	} else {
		g.leading = false
	}
	g.mu.Unlock()
	return (<-r.ch).err
}

// commit runs batch in one transaction and tells every member its outcome.
func (s *Store) commit(batch []*txReq) {
	errs := make([]error, len(batch))
	finish := func(commitErr error) {
		for i, r := range batch {
			if errs[i] == nil {
				errs[i] = commitErr
			}
			r.ch <- txResult{err: errs[i]}
		}
	}
	// The transaction is everyone's: no one caller's context may end it.
	tx, err := s.db.BeginTx(context.Background(), nil)
	if err != nil {
		finish(err)
		return
	}
	ok := 0
	for i, r := range batch {
		if err := r.ctx.Err(); err != nil {
			errs[i] = err
			continue
		}
		if len(batch) == 1 {
			errs[i] = r.fn(tx)
			break
		}
		if _, err := tx.ExecContext(context.Background(), "SAVEPOINT write"); err != nil {
			tx.Rollback()
			finish(err)
			return
		}
		if errs[i] = r.fn(tx); errs[i] != nil {
			if _, err := tx.ExecContext(context.Background(), "ROLLBACK TO write"); err != nil {
				tx.Rollback()
				finish(fmt.Errorf("%w (and rolling the write back: %w)", errs[i], err))
				return
			}
		}
		if _, err := tx.ExecContext(context.Background(), "RELEASE write"); err != nil {
			tx.Rollback()
			finish(err)
			return
		}
		if errs[i] == nil {
			ok++
		}
	}
	if len(batch) == 1 && errs[0] == nil {
		ok = 1
	}
	if ok == 0 { // every write failed: each has its own error
		tx.Rollback()
		finish(nil)
		return
	}
	finish(tx.Commit())
}

// exec runs one writing statement.
func (s *Store) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	var res sql.Result
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		res, err = s.txExec(ctx, tx, query, args...)
		return err
	})
	return res, err
}
