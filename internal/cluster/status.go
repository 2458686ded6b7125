package cluster

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Member is one process as the members table shows it.
type Member struct {
	ID        string
	Host      string
	PID       int
	Started   time.Time
	LastSeen  time.Time
	Alive     bool // seen within the lease expiry
	Draining  bool
	Leads     []string
	Leases    int // conversations it holds now
	LeaseKeys []string
}

// Status is the cluster at a glance, for `hermes gateway status`.
type Status struct {
	Now        time.Time // the database's clock
	Members    []Member
	Leaders    map[string]string // role → member id (live members only)
	QueueDepth int               // items waiting or running
	Running    int               // items under a live lease
	OldestAge  time.Duration     // age of the oldest item in the queue; 0 when empty
	Dead       int
	Outbox     int
}

// Status reads the cluster's state; every age is on the database's clock.
func (n *Node) Status(ctx context.Context) (Status, error) {
	s := Status{Leaders: map[string]string{}}
	var oldest float64
	err := n.pool.QueryRow(ctx, `
SELECT now(),
	(SELECT count(*) FROM cluster_queue),
	(SELECT count(*) FROM cluster_leases WHERE expires_at > now()),
	coalesce((SELECT extract(epoch FROM now() - min(enqueued_at)) FROM cluster_queue), 0)::float8,
	(SELECT count(*) FROM cluster_dead),
	(SELECT count(*) FROM cluster_outbox)`).Scan(&s.Now, &s.QueueDepth, &s.Running, &oldest, &s.Dead, &s.Outbox)
	if err != nil {
		return s, fmt.Errorf("cluster: status: %w", err)
	}
	s.OldestAge = time.Duration(oldest * float64(time.Second))
	rows, err := n.pool.Query(ctx, `
SELECT m.id, m.host, m.pid, m.started_at, m.last_seen,
	m.last_seen > now() - $1 * interval '1 millisecond', m.draining, m.leads,
	coalesce((SELECT array_agg(l.session_key ORDER BY l.session_key) FROM cluster_leases l
		WHERE l.holder = m.id AND l.expires_at > now()), '{}')
FROM cluster_members m ORDER BY m.started_at, m.id`, n.cfg.LeaseTTL.Milliseconds())
	if err != nil {
		return s, fmt.Errorf("cluster: status members: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var m Member
		if err := rows.Scan(&m.ID, &m.Host, &m.PID, &m.Started, &m.LastSeen, &m.Alive, &m.Draining, &m.Leads, &m.LeaseKeys); err != nil {
			return s, fmt.Errorf("cluster: status members: %w", err)
		}
		m.Leases = len(m.LeaseKeys)
		if m.Alive {
			for _, r := range m.Leads {
				s.Leaders[r] = m.ID
			}
		}
		s.Members = append(s.Members, m)
	}
	return s, rows.Err()
}

// Drain stops claiming (Next returns ErrDraining), waits until the items in
// flight here are Done or Failed or ctx ends, and then hands back the leases
// this process still holds, so the conversations move on at once instead of
// after the expiry. An item handed back unfinished is delivered again.
func (n *Node) Drain(ctx context.Context) error {
	n.draining.Store(true)
	for {
		n.flightMu.Lock()
		left, ch := len(n.inFlight), n.flightCh
		n.flightMu.Unlock()
		if left == 0 {
			break
		}
		select {
		case <-ch:
			continue
		case <-ctx.Done():
		}
		break
	}
	rctx, cancel := context.WithTimeout(context.Background(), n.cfg.LeaseTTL)
	defer cancel()
	if _, err := n.pool.Exec(rctx, `
WITH l AS (DELETE FROM cluster_leases WHERE holder = $1 RETURNING item_id)
UPDATE cluster_queue q SET claimed_by = NULL FROM l WHERE q.id = l.item_id AND q.claimed_by = $1`, n.cfg.ID); err != nil {
		return fmt.Errorf("cluster: drain: hand back leases: %w", err)
	}
	if _, err := n.pool.Exec(rctx, `SELECT pg_notify('`+queueChannel+`', '')`); err != nil {
		return fmt.Errorf("cluster: drain: %w", err)
	}
	return n.beat(rctx)
}

// Draining says whether Drain has begun (readiness: a draining process takes
// no new work).
func (n *Node) Draining() bool { return n.draining.Load() }

// ReadStatus is Status for a process that is not a member (`hermes gateway
// status`): it connects, reads and disconnects without joining, so the
// reader never shows up in what it reads. cfg.LeaseTTL judges who is alive
// (0: the default).
func ReadStatus(ctx context.Context, cfg Config) (Status, error) {
	if err := cfg.defaults(); err != nil {
		return Status{}, err
	}
	pc, err := pgxpool.ParseConfig(cfg.URL)
	if err != nil {
		return Status{}, fmt.Errorf("cluster: database URL: %w", err)
	}
	pc.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return Status{}, fmt.Errorf("cluster: connect: %w", err)
	}
	defer pool.Close()
	var exists bool
	if err := pool.QueryRow(ctx, `SELECT to_regclass('cluster_members') IS NOT NULL`).Scan(&exists); err != nil {
		return Status{}, fmt.Errorf("cluster: status: %w", err)
	}
	if !exists {
		return Status{Leaders: map[string]string{}}, nil // no gateway has joined yet
	}
	n := &Node{cfg: cfg, pool: pool}
	return n.Status(ctx)
}
