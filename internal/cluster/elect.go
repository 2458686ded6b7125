package cluster

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// Election is one process's candidacy for a role (a Discord gateway
// connection, Telegram long polling): at most one process in the cluster
// leads a role at a time.
type Election struct {
	n       *Node
	role    string
	onLead  func(ctx context.Context)
	leading atomic.Bool
	gained  atomic.Int64 // times leadership was gained
	stop    context.CancelFunc
	done    chan struct{}
	mu      sync.Mutex
	changes []chan bool
}

// checkEvery caps how often a leader checks its connection (and so how long
// it may act after losing the server): see campaign's keepalive settings.
const checkEvery = 3 * time.Second

// leaderKey maps a role to its advisory lock key; the high bytes keep it
// apart from migrationLock and from other applications' small keys.
func leaderKey(role string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte("hermes-leader:" + role))
	return int64(h.Sum64() | 1<<62)
}

// Elect campaigns for role until ctx ends or Stop. Leadership is a
// session-level advisory lock held on a dedicated connection: it ends when
// that connection does, so a killed leader's role is free as soon as the
// server notices the dead connection, and followers retry every ElectRetry.
// While leading, onLead runs with a context that is cancelled the moment
// leadership is in doubt (the connection failed a check, which happens every
// Heartbeat, at most 3s): the leader must stop acting then. When onLead returns by
// itself the role is given up and campaigned for again.
func (n *Node) Elect(ctx context.Context, role string, onLead func(ctx context.Context)) *Election {
	ctx, cancel := context.WithCancel(ctx)
	e := &Election{n: n, role: role, onLead: onLead, stop: cancel, done: make(chan struct{})}
	go e.run(ctx)
	return e
}

// Leading says whether this process leads the role now.
func (e *Election) Leading() bool { return e.leading.Load() }

// Gained counts how often leadership was gained.
func (e *Election) Gained() int { return int(e.gained.Load()) }

// Changes is a channel that receives true when leadership is gained and false
// when it is lost. Sends do not block: a slow reader sees the latest change
// at least (the buffer keeps one).
func (e *Election) Changes() <-chan bool {
	ch := make(chan bool, 1)
	e.mu.Lock()
	e.changes = append(e.changes, ch)
	e.mu.Unlock()
	return ch
}

func (e *Election) announce(v bool) {
	e.leading.Store(v)
	e.n.setLeads(e.role, v)
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ch := range e.changes {
		select {
		case <-ch: // drop a stale value: the newest matters
		default:
		}
		ch <- v
	}
}

// Stop gives up the candidacy (and leadership) and waits for onLead to end.
func (e *Election) Stop() {
	e.stop()
	<-e.done
}

func (e *Election) run(ctx context.Context) {
	defer close(e.done)
	key := leaderKey(e.role)
	for ctx.Err() == nil {
		if err := e.campaign(ctx, key); err != nil && ctx.Err() == nil {
			select {
			case <-ctx.Done():
			case <-time.After(e.n.cfg.ElectRetry):
			}
		}
	}
}

// campaign connects, tries the lock until it has it, then leads until the
// connection fails, onLead returns or ctx ends.
func (e *Election) campaign(ctx context.Context, key int64) error {
	cfg, err := pgx.ParseConfig(e.n.cfg.URL)
	if err != nil {
		return err
	}
	cfg.RuntimeParams["application_name"] = "hermes-leader " + e.role
	// The server drops a silent client (a partition, a dead machine) after
	// about 20s on TCP, which frees the lock; the leader itself steps down
	// within 2×checkEvery (6s at most) of losing the server, well before, so
	// two leaders never act at once. A killed process's socket is closed by
	// its kernel and the server frees the lock at once.
	cfg.RuntimeParams["tcp_keepalives_idle"] = "10"
	cfg.RuntimeParams["tcp_keepalives_interval"] = "2"
	cfg.RuntimeParams["tcp_keepalives_count"] = "5"
	cfg.RuntimeParams["tcp_user_timeout"] = "20000"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = conn.Close(cctx)
		cancel()
	}()
	for {
		var got bool
		if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", key).Scan(&got); err != nil {
			return err
		}
		if got {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(e.n.cfg.ElectRetry):
		}
	}
	return e.lead(ctx, conn, key)
}

func (e *Election) lead(ctx context.Context, conn *pgx.Conn, key int64) error {
	e.gained.Add(1)
	e.announce(true)
	lctx, cancel := context.WithCancel(ctx)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		e.onLead(lctx)
	}()
	every := min(e.n.cfg.Heartbeat, checkEvery)
	t := time.NewTicker(every)
	defer t.Stop()
	var err error
loop:
	for {
		select {
		case <-ctx.Done():
			err = ctx.Err()
			break loop
		case <-finished:
			break loop
		case <-t.C:
			pctx, pcancel := context.WithTimeout(ctx, every)
			perr := conn.Ping(pctx)
			pcancel()
			if perr != nil {
				err = fmt.Errorf("leader connection: %w", perr)
				break loop
			}
		}
	}
	// Stop acting first; only then is the lock let go.
	cancel()
	<-finished
	e.announce(false)
	if err == nil || errors.Is(err, context.Canceled) {
		uctx, ucancel := context.WithTimeout(context.Background(), time.Second)
		_, _ = conn.Exec(uctx, "SELECT pg_advisory_unlock($1)", key)
		ucancel()
	}
	if err == nil && ctx.Err() == nil {
		// onLead gave up by itself: let a follower have a turn before
		// campaigning again.
		select {
		case <-ctx.Done():
		case <-time.After(e.n.cfg.ElectRetry):
		}
	}
	return err
}

// LossWindow bounds how long a leader whose lock was taken from it (its
// database session ended) may go on believing it leads: until its next
// check and that check's timeout. A new leader that must never overlap its
// predecessor (one websocket per bot) waits this long before it acts.
func (n *Node) LossWindow() time.Duration {
	return 2*min(n.cfg.Heartbeat, checkEvery) + 100*time.Millisecond
}

// ElectRetry is how often a follower tries for a role: a role given up is
// taken within it.
func (n *Node) ElectRetry() time.Duration { return n.cfg.ElectRetry }

// LastHeld is what a new leader of role can know of its predecessor: the
// database's clock now and, when the members table still shows another
// process leading role (one that died: a live leader that steps down says
// so at once), that process's last heartbeat, the last moment its
// connection was known to be up; zero when no such row is left.
func (n *Node) LastHeld(ctx context.Context, role string) (now, held time.Time, err error) {
	var last *time.Time
	err = n.pool.QueryRow(ctx, `SELECT now(), (SELECT max(last_seen) FROM cluster_members WHERE id <> $1 AND $2 = ANY(leads))`,
		n.cfg.ID, role).Scan(&now, &last)
	if err != nil {
		return time.Time{}, time.Time{}, fmt.Errorf("cluster: when %s was last held: %w", role, err)
	}
	if last != nil {
		held = *last
	}
	return now, held, nil
}
