package session

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
)

// Group commit. Every write of this process goes through tx, which hands it
// to whichever writer is committing: that one runs all the writes waiting
// at that moment in one SQLite transaction (a write that fails is rolled
// back alone: see commit), commits once, and only then do their callers
// return. Durability is unchanged (nothing returns before its
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
	// appends marks a write that only adds messages (AppendMessage): it runs
	// after the others of its commit, whose messages are then indexed at once
	// (indexing.go).
	appends bool
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
	return s.write(&txReq{ctx: ctx, fn: fn})
}

// appendTx is tx for a write that only adds messages.
func (s *Store) appendTx(ctx context.Context, fn func(*sql.Tx) error) error {
	return s.write(&txReq{ctx: ctx, fn: fn, appends: true})
}

func (s *Store) write(r *txReq) error {
	g := &s.group
	r.ch = make(chan txResult, 1)
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
// Should any write fail, that transaction is rolled back and each write runs
// again in its own, so one failure touches no other write. (Not savepoints:
// FTS5 flushes its index at each one, which cost more than the batching
// saved.) A write is only statements on its transaction, so running it again
// is safe.
func (s *Store) commit(batch []*txReq) {
	// The writes that only add messages go last (writes waiting together
	// come from different callers, so no order among them is promised), so
	// that the others never see a message not yet indexed.
	live := batch[:0:0]
	for pass := range 2 {
		for _, r := range batch {
			if r.appends != (pass == 1) {
				continue
			}
			if err := r.ctx.Err(); err != nil {
				r.ch <- txResult{err: err}
				continue
			}
			live = append(live, r)
		}
	}
	if len(live) > 1 && s.runTogether(live) == nil {
		for _, r := range live {
			r.ch <- txResult{}
		}
		return
	}
	for _, r := range live {
		r.ch <- txResult{err: s.runAlone(r)}
	}
}

// runTogether runs every write of batch in one transaction; on any failure
// nothing of it is committed.
func (s *Store) runTogether(batch []*txReq) error {
	// The transaction is everyone's: no one caller's context may end it.
	tx, err := s.db.BeginTx(context.Background(), nil)
	if err != nil {
		return err
	}
	from, err := s.indexMark(context.Background(), tx)
	if err != nil {
		tx.Rollback()
		return err
	}
	for _, r := range batch {
		if err := r.run(tx); err != nil {
			tx.Rollback()
			return err
		}
	}
	if err := s.index(context.Background(), tx, from); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

func (s *Store) runAlone(r *txReq) error {
	tx, err := s.db.BeginTx(r.ctx, nil)
	if err != nil {
		return err
	}
	from, err := s.indexMark(r.ctx, tx)
	if err == nil {
		err = r.run(tx)
	}
	if err == nil {
		err = s.index(r.ctx, tx, from)
	}
	if err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// run runs the write. A panic becomes its error: the writes waiting behind
// this commit would otherwise wait forever.
func (r *txReq) run(tx *sql.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("session store: a write panicked: %v", p)
		}
	}()
	return r.fn(tx)
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
