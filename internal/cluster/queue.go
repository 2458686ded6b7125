package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrDraining is what Next returns once Drain has begun.
var ErrDraining = errors.New("cluster: draining: no more work is claimed")

// ErrLeaseLost says an item's claim is no longer this worker's: its lease
// expired and another worker took the item (or it already finished). The
// work done under it may be done again elsewhere; its effects must be
// idempotent (the delivery ledger's job).
var ErrLeaseLost = errors.New("cluster: the item's lease was lost to another worker")

// Item is one claimed update.
type Item struct {
	ID         int64
	SessionKey string
	Platform   string
	UpdateID   string
	Payload    []byte
	EnqueuedAt time.Time
	// Attempt counts deliveries, this one included: above 1 the item was
	// claimed before and not finished (a crash, an expired lease or Fail),
	// and the gateway resumes from the last stored step.
	Attempt   int
	LastError string
	holder    string
}

// Enqueue accepts an update: it records (platform, updateID) and queues the
// item in one statement, so a retried webhook is accepted (queued false, no
// error) but never queued twice, and a crash leaves either both or neither.
// Idle workers are woken by NOTIFY on commit.
func (n *Node) Enqueue(ctx context.Context, platform, updateID, sessionKey string, payload []byte) (queued bool, err error) {
	if platform == "" || updateID == "" || sessionKey == "" {
		return false, fmt.Errorf("cluster: enqueue needs a platform, an update id and a session key (got %q, %q, %q)", platform, updateID, sessionKey)
	}
	if payload == nil {
		payload = []byte{}
	}
	var id int64
	err = n.pool.QueryRow(ctx, enqueueSQL, platform, updateID, sessionKey, payload).Scan(&id, new(string))
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("cluster: enqueue %s update %s: %w", platform, updateID, err)
	}
	return true, nil
}

// enqueueSQL records the update id and queues the item only if the id is new;
// the NOTIFY is sent at commit.
const enqueueSQL = `
WITH s AS (
	INSERT INTO cluster_seen (platform, update_id) VALUES ($1, $2)
	ON CONFLICT DO NOTHING RETURNING 1
), q AS (
	INSERT INTO cluster_queue (platform, update_id, session_key, payload)
	SELECT $1, $2, $3, $4 FROM s RETURNING id
)
SELECT q.id, pg_notify('` + queueChannel + `', '')::text FROM q`

// claimSQL takes the oldest claimable item and its conversation's lease in
// one statement. Claimable: the first item of its session key (items of a
// key run in order) whose key has no live lease (one running item per key)
// and whose retry delay has passed, of a platform this process serves. A
// running item whose lease expired is claimable again: that is the
// redelivery after a crash. SKIP LOCKED keeps
// concurrent claimers off each other's candidates, and the lease upsert
// (which takes over only an expired lease, judged on the newest row version,
// not this statement's snapshot) settles two claimers of one key. The first
// column says whether the claim won; a candidate without a win means "look
// again", no candidate means "nothing to do".
const claimSQL = `
WITH c AS (
	SELECT q.id, q.session_key FROM cluster_queue q
	WHERE q.not_before <= now()
	  AND ($3::text[] IS NULL OR q.platform = ANY($3::text[]))
	  AND NOT EXISTS (SELECT 1 FROM cluster_queue p WHERE p.session_key = q.session_key AND p.id < q.id)
	  AND NOT EXISTS (SELECT 1 FROM cluster_leases l WHERE l.session_key = q.session_key AND l.expires_at > now())
	ORDER BY q.id
	LIMIT 1
	FOR UPDATE OF q SKIP LOCKED
), l AS (
	INSERT INTO cluster_leases AS x (session_key, holder, item_id, expires_at)
	SELECT c.session_key, $1, c.id, now() + $2 * interval '1 millisecond' FROM c
	ON CONFLICT (session_key) DO UPDATE SET holder = excluded.holder, item_id = excluded.item_id,
		acquired_at = now(), heartbeat_at = now(), expires_at = excluded.expires_at
	WHERE x.expires_at <= now()
	RETURNING x.session_key
), u AS (
	UPDATE cluster_queue q SET attempts = q.attempts + 1, claimed_by = $1, claimed_at = now()
	FROM c WHERE q.id = c.id AND EXISTS (SELECT 1 FROM l)
	RETURNING q.id, q.session_key, q.platform, q.update_id, q.payload, q.enqueued_at, q.attempts, q.last_error
)
SELECT u.id IS NOT NULL, coalesce(u.id, 0), coalesce(u.session_key, ''), coalesce(u.platform, ''),
	coalesce(u.update_id, ''), coalesce(u.payload, ''), coalesce(u.enqueued_at, now()), coalesce(u.attempts, 0),
	coalesce(u.last_error, '')
FROM c LEFT JOIN u ON true`

// Serve restricts this process's claims to items of these platforms: a
// process that has no connection for a platform would only fail its items
// (each failure spending one of the item's attempts). Until Serve is called
// every platform's items are claimed.
func (n *Node) Serve(platforms ...string) {
	p := append([]string{}, platforms...)
	n.platforms.Store(&p)
}

// served is Claim's platform filter: nil for every platform.
func (n *Node) served() []string {
	if p := n.platforms.Load(); p != nil {
		return *p
	}
	return nil
}

// Claim takes one item, or returns nil when none is claimable now. An item
// already delivered MaxAttempts times is dead-lettered instead of returned.
func (n *Node) Claim(ctx context.Context) (*Item, error) {
	if n.draining.Load() {
		return nil, ErrDraining
	}
	for lost := 0; ; {
		it := &Item{holder: n.cfg.ID}
		var got bool
		sent := n.cfg.Now()
		err := n.pool.QueryRow(ctx, claimSQL, n.cfg.ID, n.cfg.LeaseTTL.Milliseconds(), n.served()).Scan(
			&got, &it.ID, &it.SessionKey, &it.Platform, &it.UpdateID, &it.Payload, &it.EnqueuedAt, &it.Attempt, &it.LastError)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("cluster: claim: %w", err)
		}
		if !got {
			// A candidate whose lease another claimer took between this
			// statement's snapshot and its lock: there may be others.
			if lost++; lost < 20 {
				continue
			}
			return nil, nil
		}
		if it.Attempt > n.cfg.MaxAttempts {
			// Delivered MaxAttempts times and never finished: a poison item
			// (it kills its worker) is set aside rather than retried forever.
			if err := n.deadLetter(ctx, it, fmt.Sprintf("abandoned after %d deliveries (last error: %s)", it.Attempt-1, it.LastError)); err != nil {
				return nil, err
			}
			continue
		}
		n.flightMu.Lock()
		n.inFlight[it.ID] = struct{}{}
		// The lease runs from the statement, which the database ran after
		// it was sent: an answer that took longer than LeaseTTL to come
		// back is an item not surely held (Holds false) from the start.
		n.held[it.ID] = heldLease{attempt: it.Attempt, until: sent.Add(n.cfg.LeaseTTL).UnixNano()}
		n.flightMu.Unlock()
		if n.draining.Load() {
			// Drain began while the claim was on the wire: hand it back.
			_ = n.release(ctx, it)
			return nil, ErrDraining
		}
		return it, nil
	}
}

// Next blocks until it claims an item, ctx ends or Drain begins. It waits on
// NOTIFY and polls every Poll as the fallback; a database error is retried
// after a short pause (the pool reconnects).
func (n *Node) Next(ctx context.Context) (*Item, error) {
	pause := 50 * time.Millisecond
	for {
		it, err := n.Claim(ctx)
		if errors.Is(err, ErrDraining) {
			return nil, err
		}
		if err == nil && it != nil {
			// There may be more: pass the wake-up on to another idle worker.
			n.wakeQueue()
			return it, nil
		}
		wait := n.cfg.Poll
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			wait = pause
			pause = min(2*pause, n.cfg.Heartbeat)
		} else {
			pause = 50 * time.Millisecond
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-n.queueWake:
		case <-t.C:
		}
		t.Stop()
	}
}

func (n *Node) landed(id int64) {
	n.flightMu.Lock()
	delete(n.held, id)
	if _, ok := n.inFlight[id]; ok {
		delete(n.inFlight, id)
		close(n.flightCh)
		n.flightCh = make(chan struct{})
	}
	n.flightMu.Unlock()
}

// Drop forgets an item this process no longer holds (Holds false) without
// touching the database: its lease expires there, and another delivery
// follows.
func (n *Node) Drop(it *Item) { n.landed(it.ID) }

// Done finishes an item: it leaves the queue, its lease ends and, if its
// conversation has more, a worker is woken for the next. ErrLeaseLost means
// another worker had taken it over.
func (n *Node) Done(ctx context.Context, it *Item) error {
	var got int
	err := n.pool.QueryRow(ctx, `
WITH d AS (
	DELETE FROM cluster_queue WHERE id = $1 AND claimed_by = $2 AND attempts = $3 RETURNING id, session_key
), l AS (
	DELETE FROM cluster_leases x USING d WHERE x.session_key = d.session_key AND x.item_id = d.id
), w AS (
	SELECT pg_notify('`+queueChannel+`', '') FROM d
	WHERE EXISTS (SELECT 1 FROM cluster_queue q WHERE q.session_key = d.session_key AND q.id <> d.id)
)
SELECT (SELECT count(*) FROM d), (SELECT count(*) FROM w)`, it.ID, it.holder, it.Attempt).Scan(&got, new(int64))
	if err != nil {
		return fmt.Errorf("cluster: done item %d: %w", it.ID, err)
	}
	n.landed(it.ID)
	if got == 0 {
		return ErrLeaseLost
	}
	return nil
}

// Fail gives an item back after an error: it is delivered again after
// RetryDelay×attempt, or dead-lettered (dead true) once it has had
// MaxAttempts deliveries.
func (n *Node) Fail(ctx context.Context, it *Item, cause error) (dead bool, err error) {
	msg := "failed"
	if cause != nil {
		msg = cause.Error()
	}
	if it.Attempt >= n.cfg.MaxAttempts {
		if err := n.deadLetter(ctx, it, msg); err != nil {
			return false, err
		}
		return true, nil
	}
	var got int
	err = n.pool.QueryRow(ctx, `
WITH u AS (
	UPDATE cluster_queue SET claimed_by = NULL, last_error = $4,
		not_before = now() + $5 * interval '1 millisecond'
	WHERE id = $1 AND claimed_by = $2 AND attempts = $3 RETURNING id, session_key
), l AS (
	DELETE FROM cluster_leases x USING u WHERE x.session_key = u.session_key AND x.item_id = u.id
)
SELECT count(*) FROM u`, it.ID, it.holder, it.Attempt, msg, (n.cfg.RetryDelay * time.Duration(it.Attempt)).Milliseconds()).Scan(&got)
	if err != nil {
		return false, fmt.Errorf("cluster: fail item %d: %w", it.ID, err)
	}
	n.landed(it.ID)
	if got == 0 {
		return false, ErrLeaseLost
	}
	return false, nil
}

// release hands an item back at once, its attempt not counted against it.
func (n *Node) release(ctx context.Context, it *Item) error {
	_, err := n.pool.Exec(ctx, `
WITH u AS (
	UPDATE cluster_queue SET claimed_by = NULL, attempts = attempts - 1
	WHERE id = $1 AND claimed_by = $2 AND attempts = $3 RETURNING id, session_key
)
DELETE FROM cluster_leases x USING u WHERE x.session_key = u.session_key AND x.item_id = u.id`, it.ID, it.holder, it.Attempt)
	n.landed(it.ID)
	if err != nil {
		return fmt.Errorf("cluster: release item %d: %w", it.ID, err)
	}
	n.wakeQueue()
	return nil
}

// deadLetter moves an item to cluster_dead, ending its lease, and wakes a
// worker for its conversation's next item.
func (n *Node) deadLetter(ctx context.Context, it *Item, reason string) error {
	_, err := n.pool.Exec(ctx, `
WITH d AS (
	DELETE FROM cluster_queue WHERE id = $1 AND claimed_by = $2 AND attempts = $3 RETURNING *
), l AS (
	DELETE FROM cluster_leases x USING d WHERE x.session_key = d.session_key AND x.item_id = d.id
), i AS (
	INSERT INTO cluster_dead (id, session_key, platform, update_id, payload, enqueued_at, attempts, last_error)
	SELECT id, session_key, platform, update_id, payload, enqueued_at, attempts, $4 FROM d RETURNING id
), w AS (
	SELECT pg_notify('`+queueChannel+`', '') FROM i
)
SELECT (SELECT count(*) FROM i), (SELECT count(*) FROM w)`, it.ID, it.holder, it.Attempt, reason)
	n.landed(it.ID)
	if err != nil {
		return fmt.Errorf("cluster: dead-letter item %d: %w", it.ID, err)
	}
	return nil
}

// DeadItem is an item set aside after too many deliveries.
type DeadItem struct {
	Item
	Reason string
	DiedAt time.Time
}

// Dead lists dead-lettered items, oldest first.
func (n *Node) Dead(ctx context.Context) ([]DeadItem, error) {
	rows, err := n.pool.Query(ctx, `
SELECT id, session_key, platform, update_id, payload, enqueued_at, attempts, coalesce(last_error, ''), died_at
FROM cluster_dead ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("cluster: dead letters: %w", err)
	}
	var out []DeadItem
	for rows.Next() {
		var d DeadItem
		if err := rows.Scan(&d.ID, &d.SessionKey, &d.Platform, &d.UpdateID, &d.Payload, &d.EnqueuedAt, &d.Attempt, &d.Reason, &d.DiedAt); err != nil {
			rows.Close()
			return nil, fmt.Errorf("cluster: dead letters: %w", err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// MarkSeen records (platform, id) in the same dedupe table Enqueue uses and
// says whether this call was the first to see it: events that reach a
// process without the queue (a polled batch delivered again after a
// takeover, messages a new connection owner catches up on) are handled only
// by the caller that got fresh.
func (n *Node) MarkSeen(ctx context.Context, platform, id string) (fresh bool, err error) {
	if platform == "" || id == "" {
		return false, fmt.Errorf("cluster: mark seen needs a platform and an id (got %q, %q)", platform, id)
	}
	tag, err := n.pool.Exec(ctx, `INSERT INTO cluster_seen (platform, update_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, platform, id)
	if err != nil {
		return false, fmt.Errorf("cluster: mark %s event %s seen: %w", platform, id, err)
	}
	return tag.RowsAffected() == 1, nil
}
