// Package cluster is what lets several gateway processes share one
// PostgreSQL database: a work queue deduplicated by (platform, update_id),
// per-conversation leases with a heartbeat and an expiry on the database's
// clock, leader election for connections that cannot be shared, an outbox of
// actions routed to a role's leader, and membership for `hermes gateway
// status`. docs/SCALING.md gives the data model and the guarantees.
package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hermes-go/hermes/internal/clock"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The NOTIFY channels: one for claimable queue items, one for outbox actions.
// DefaultSeenRetention is how long an update or message id is remembered by
// default: past it a redelivery would be taken as new.
const DefaultSeenRetention = 48 * time.Hour

const (
	queueChannel  = "hermes_cluster_queue"
	outboxChannel = "hermes_cluster_outbox"
)

// Config says where the database is and how fast the cluster reacts. The
// zero durations take the defaults; tests make them short.
type Config struct {
	URL string // postgres://… (pgx's syntax)
	// ID names this process in the members table; default host-pid-random.
	ID string
	// LeaseTTL is how long a lease (and a membership) lives without a
	// heartbeat: the time a killed process's conversations wait. Default 30s.
	LeaseTTL time.Duration
	// Heartbeat is how often leases and membership are renewed and a leader
	// checks its connection. Default LeaseTTL/3.
	Heartbeat time.Duration
	// Poll is how often an idle worker looks for work without a NOTIFY.
	// Default 5s.
	Poll time.Duration
	// MaxAttempts bounds deliveries of one item (crashes and Fail count);
	// past it the item is dead-lettered. Default 5.
	MaxAttempts int
	// RetryDelay is how long a failed item waits before its next delivery
	// (times its attempt count). Default 1s.
	RetryDelay time.Duration
	// ElectRetry is how often a follower tries to take leadership. Default 1s.
	ElectRetry time.Duration
	// SeenRetention is how long (platform, update_id) stays deduplicated.
	// Default DefaultSeenRetention (Telegram retries a webhook for far less).
	SeenRetention time.Duration
	// NoListen turns LISTEN off: workers find work by polling only (what a
	// process sees when its notifications are lost).
	NoListen bool
	// MaxConns caps the pool (default pgxpool's).
	MaxConns int32
	// Now is the local clock, used only to judge how fresh this process's
	// own heartbeat is (expiry itself is on the database's clock).
	Now func() time.Time
}

func (c *Config) defaults() error {
	if c.URL == "" {
		return errors.New("cluster: no database URL: set gateway.store to a postgres:// URL")
	}
	if c.LeaseTTL <= 0 {
		c.LeaseTTL = 30 * time.Second
	}
	if c.Heartbeat <= 0 {
		c.Heartbeat = c.LeaseTTL / 3
	}
	if c.Heartbeat >= c.LeaseTTL {
		return fmt.Errorf("cluster: heartbeat %s is not shorter than the lease expiry %s: leases would lapse between heartbeats", c.Heartbeat, c.LeaseTTL)
	}
	if c.Poll <= 0 {
		c.Poll = 5 * time.Second
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 5
	}
	if c.RetryDelay <= 0 {
		c.RetryDelay = time.Second
	}
	if c.ElectRetry <= 0 {
		c.ElectRetry = time.Second
	}
	if c.Now == nil {
		c.Now = clock.Now
	}
	if c.SeenRetention <= 0 {
		c.SeenRetention = DefaultSeenRetention
	}
	if c.ID == "" {
		host, _ := os.Hostname()
		var b [4]byte
		_, _ = rand.Read(b[:])
		c.ID = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
	}
	return nil
}

// Node is one process's membership of the cluster.
type Node struct {
	cfg  Config
	pool *pgxpool.Pool
	host string

	queueWake  chan struct{} // cap 1: one idle worker wakes, and wakes the next if it found work
	outboxMu   sync.Mutex
	outboxWake chan struct{} // closed and replaced: every outbox consumer looks

	draining atomic.Bool
	flightMu sync.Mutex
	inFlight map[int64]struct{}
	flightCh chan struct{} // closed and replaced when inFlight shrinks
	// held: until when (local unix nanos) each claimed item's lease is
	// surely this process's: the send time of the claim, or of the last
	// heartbeat the database said renewed it, plus LeaseTTL (Holds).
	held map[int64]heldLease
	// platforms, once set by Serve, are the only ones Claim takes items of.
	platforms atomic.Pointer[[]string]

	leadsMu sync.Mutex
	leads   map[string]bool

	stop   context.CancelFunc
	bg     sync.WaitGroup
	closed atomic.Bool
	// lastBeat: local unix nanos when the last heartbeat the database took
	// was sent.
	lastBeat atomic.Int64
}

// Open connects, migrates the schema, registers this process and starts its
// heartbeat (and, unless NoListen, its listener).
func Open(ctx context.Context, cfg Config) (*Node, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	pc, err := pgxpool.ParseConfig(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("cluster: database URL: %w", err)
	}
	if cfg.MaxConns > 0 {
		pc.MaxConns = cfg.MaxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("cluster: connect: %w", err)
	}
	if err := Migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	host, _ := os.Hostname()
	n := &Node{
		cfg: cfg, pool: pool, host: host,
		queueWake:  make(chan struct{}, 1),
		outboxWake: make(chan struct{}),
		inFlight:   map[int64]struct{}{},
		held:       map[int64]heldLease{},
		flightCh:   make(chan struct{}),
		leads:      map[string]bool{},
	}
	if err := n.register(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	bgctx, cancel := context.WithCancel(context.Background())
	n.stop = cancel
	n.bg.Add(1)
	go n.heartbeatLoop(bgctx)
	if !cfg.NoListen {
		n.bg.Add(1)
		go n.listenLoop(bgctx)
	}
	return n, nil
}

// ID is this process's member id (the holder of its leases).
func (n *Node) ID() string { return n.cfg.ID }

// Pool is the node's connection pool, for callers that share it.
func (n *Node) Pool() *pgxpool.Pool { return n.pool }

func (n *Node) register(ctx context.Context) error {
	sent := n.cfg.Now()
	_, err := n.pool.Exec(ctx, `
INSERT INTO cluster_members (id, host, pid) VALUES ($1, $2, $3)
ON CONFLICT (id) DO UPDATE SET last_seen = now(), draining = false`, n.cfg.ID, n.host, os.Getpid())
	if err != nil {
		return fmt.Errorf("cluster: register %s: %w", n.cfg.ID, err)
	}
	n.lastBeat.Store(sent.UnixNano())
	return nil
}

func (n *Node) leadList() []string {
	n.leadsMu.Lock()
	defer n.leadsMu.Unlock()
	// Never nil: the column is NOT NULL, and pgx writes a nil slice as NULL.
	return append([]string{}, slices.Sorted(maps.Keys(n.leads))...)
}

func (n *Node) setLeads(role string, on bool) {
	n.leadsMu.Lock()
	if on {
		n.leads[role] = true
	} else {
		delete(n.leads, role)
	}
	n.leadsMu.Unlock()
	// Status should not wait a heartbeat to show a change of owner.
	ctx, cancel := context.WithTimeout(context.Background(), n.cfg.Heartbeat)
	defer cancel()
	_ = n.beat(ctx)
}

// beat renews membership and every lease this process holds, in one round
// trip. A member row that vanished (pruned while the process was cut off) is
// inserted again.
func (n *Node) beat(ctx context.Context) error {
	sent := n.cfg.Now()
	b := &pgx.Batch{}
	b.Queue(`
INSERT INTO cluster_members (id, host, pid, leads, draining) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (id) DO UPDATE SET last_seen = now(), leads = excluded.leads, draining = excluded.draining`,
		n.cfg.ID, n.host, os.Getpid(), n.leadList(), n.draining.Load())
	// Only the leases of items a worker here still works on (a claim given
	// up, or whose Fail could not reach the database, lapses and is
	// delivered again, rather than being held for good), and only while
	// live: one that expired (this process cut off for LeaseTTL) may be
	// another's by now.
	b.Queue(`UPDATE cluster_leases SET heartbeat_at = now(), expires_at = now() + $2 * interval '1 millisecond'
		WHERE holder = $1 AND expires_at > now() AND item_id = ANY($3) RETURNING item_id`,
		n.cfg.ID, n.cfg.LeaseTTL.Milliseconds(), n.heldIDs())
	br := n.pool.SendBatch(ctx, b)
	defer func() { _ = br.Close() }() // both results are read below; an error there is returned
	if _, err := br.Exec(); err != nil {
		return err
	}
	rows, err := br.Query()
	if err != nil {
		return err
	}
	var renewed []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		renewed = append(renewed, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	n.renewHeld(renewed, sent)
	n.lastBeat.Store(sent.UnixNano())
	return nil
}

type heldLease struct {
	attempt int
	until   int64
}

// heldIDs are the items claimed here and not yet finished or given up.
func (n *Node) heldIDs() []int64 {
	n.flightMu.Lock()
	defer n.flightMu.Unlock()
	return slices.Collect(maps.Keys(n.held))
}

// renewHeld extends the items whose leases a heartbeat sent at sent renewed.
func (n *Node) renewHeld(ids []int64, sent time.Time) {
	until := sent.Add(n.cfg.LeaseTTL).UnixNano()
	n.flightMu.Lock()
	defer n.flightMu.Unlock()
	for _, id := range ids {
		if h, ok := n.held[id]; ok && h.until < until {
			h.until = until
			n.held[id] = h
		}
	}
}

// Holds says whether it's lease is surely still this process's: no longer
// than LeaseTTL since the claim or the last heartbeat that renewed it was
// sent (the database's expiry comes later). Once false it stays false unless
// a heartbeat renewed the lease, which the database does only while it is
// live, so never after another process could have taken the item. A worker
// stops acting on an item it no longer holds.
func (n *Node) Holds(it *Item) bool {
	n.flightMu.Lock()
	h, ok := n.held[it.ID]
	n.flightMu.Unlock()
	return ok && h.attempt == it.Attempt && n.cfg.Now().UnixNano() < h.until
}

// Fresh says whether this process's leases are surely still its own: the
// last heartbeat the database took was sent less than LeaseTTL ago. A worker
// that finds it false (the database unreachable for that long) must stop
// acting on its items, since another process may be running them.
func (n *Node) Fresh() bool {
	return n.cfg.Now().Sub(time.Unix(0, n.lastBeat.Load())) < n.cfg.LeaseTTL
}

func (n *Node) heartbeatLoop(ctx context.Context) {
	defer n.bg.Done()
	t := time.NewTicker(n.cfg.Heartbeat)
	defer t.Stop()
	// Pruning is rare work: every 50 heartbeats (and at the first).
	beats := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		bctx, cancel := context.WithTimeout(ctx, n.cfg.Heartbeat)
		_ = n.beat(bctx)
		cancel()
		if beats++; beats%50 == 1 {
			pctx, cancel := context.WithTimeout(ctx, n.cfg.LeaseTTL)
			_ = n.prune(pctx)
			cancel()
		}
	}
}

// prune forgets old dedupe entries, members long gone and what was
// addressed to dead members.
func (n *Node) prune(ctx context.Context) error {
	b := &pgx.Batch{}
	b.Queue(`DELETE FROM cluster_seen WHERE seen_at < now() - $1 * interval '1 millisecond'`, n.cfg.SeenRetention.Milliseconds())
	b.Queue(`DELETE FROM cluster_members WHERE last_seen < now() - $1 * interval '1 millisecond'`, (10 * n.cfg.LeaseTTL).Milliseconds())
	b.Queue(pruneDirectSQL, n.cfg.LeaseTTL.Milliseconds())
	return n.pool.SendBatch(ctx, b).Close()
}

// listenLoop holds one connection in LISTEN and turns notifications into
// wake-ups. After a reconnect everyone is woken: notifications sent while
// the connection was down are lost.
func (n *Node) listenLoop(ctx context.Context) {
	defer n.bg.Done()
	for ctx.Err() == nil {
		conn, err := pgx.Connect(ctx, n.cfg.URL)
		if err == nil {
			_, err = conn.Exec(ctx, "LISTEN "+queueChannel+"; LISTEN "+outboxChannel)
		}
		if err == nil {
			n.wakeQueue()
			n.wakeOutbox()
			for {
				var note *pgconn.Notification
				note, err = conn.WaitForNotification(ctx)
				if err != nil {
					break
				}
				if note.Channel == outboxChannel {
					n.wakeOutbox()
				} else {
					n.wakeQueue()
				}
			}
		}
		if conn != nil {
			cctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = conn.Close(cctx)
			cancel()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(n.cfg.ElectRetry):
		}
	}
}

func (n *Node) wakeQueue() {
	select {
	case n.queueWake <- struct{}{}:
	default:
	}
}

func (n *Node) wakeOutbox() {
	n.outboxMu.Lock()
	close(n.outboxWake)
	n.outboxWake = make(chan struct{})
	n.outboxMu.Unlock()
}

func (n *Node) outboxSignal() <-chan struct{} {
	n.outboxMu.Lock()
	defer n.outboxMu.Unlock()
	return n.outboxWake
}

// Close stops the background work, leaves the members table and closes the
// pool. Leases still held stay until they expire: call Drain first to hand
// them back.
func (n *Node) Close() {
	if !n.closed.CompareAndSwap(false, true) {
		return
	}
	n.stop()
	n.bg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, _ = n.pool.Exec(ctx, "DELETE FROM cluster_members WHERE id = $1", n.cfg.ID)
	n.pool.Close()
}
