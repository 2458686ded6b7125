package app

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/hermes-go/hermes/internal/cluster"
	"github.com/hermes-go/hermes/internal/gateway"
	"github.com/hermes-go/hermes/internal/gateway/discord"
	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/internal/gateway/telegram"
	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/session"
)

// The gateway's side of a cluster (gateway.store: postgres://, issue 19):
// each Telegram update is queued in PostgreSQL, by whichever process the
// webhook reached (it answers 200 only after the commit) or by the owner of
// the long poll (it confirms an update, with its next offset, only after the
// commit); workers of every process claim items, one conversation at a time
// cluster-wide, and run them through the runner. docs/SCALING.md has the
// design.

// gatewayCluster is one process's part of the cluster.
type gatewayCluster struct {
	mu      sync.Mutex
	cfg     cluster.Config
	node    *cluster.Node
	workers int
	log     *slog.Logger
	// telegram is the adapter whose webhook or long poll feeds the queue
	// (nil: none), and whose Decode the workers use.
	telegram *telegram.Adapter
	// discordCatchUp is gateway.cluster.discord_catchup (0: off).
	discordCatchUp time.Duration
	// served are the platforms this process has adapters for: the only
	// ones whose queued items it claims.
	served []string

	runMu sync.Mutex
	// running: the items whose turns run here, by their delivery
	// ("telegram:<update_id>"): usually one, two when a stale claim of an
	// item unwinds beside a newer one.
	running map[string][]runningItem
}

type runningItem struct {
	node *cluster.Node
	it   *cluster.Item
}

// leaseHeld is the runner's LeaseHeld (nil without a cluster): an item's
// answer goes out only while this process holds every claim of it running
// here.
func (c *gatewayCluster) leaseHeld() func(delivery string) bool {
	if c == nil {
		return nil
	}
	return func(delivery string) bool {
		c.runMu.Lock()
		defer c.runMu.Unlock()
		for _, r := range c.running[delivery] {
			if !r.node.Holds(r.it) {
				return false
			}
		}
		return true
	}
}

// run registers r as running until the returned func is called.
func (c *gatewayCluster) run(delivery string, r runningItem) (done func()) {
	c.runMu.Lock()
	defer c.runMu.Unlock()
	if c.running == nil {
		c.running = map[string][]runningItem{}
	}
	c.running[delivery] = append(c.running[delivery], r)
	return func() {
		c.runMu.Lock()
		defer c.runMu.Unlock()
		rs := c.running[delivery]
		for i := range rs {
			if rs[i].it == r.it {
				rs = append(rs[:i], rs[i+1:]...)
				break
			}
		}
		if len(rs) == 0 {
			delete(c.running, delivery)
		} else {
			c.running[delivery] = rs
		}
	}
}

// clusterConfig reads gateway.cluster.* into the cluster's configuration
// for the store at storeURL (its password, from .env, put in the URL). A
// timing is a duration ("30s", "500ms") or a number of seconds.
func clusterConfig(cfg map[string]any, storeURL, password string) (cluster.Config, error) {
	c := cluster.Config{URL: withPassword(storeURL, password),
		MaxAttempts: intSetting(cfg, []string{"gateway", "cluster", "max_attempts"}, 0)}
	for _, d := range []struct {
		key string
		to  *time.Duration
	}{
		{"lease_ttl", &c.LeaseTTL}, {"heartbeat", &c.Heartbeat}, {"elect_retry", &c.ElectRetry},
		{"poll", &c.Poll}, {"retry_delay", &c.RetryDelay},
	} {
		v, ok := valueAt(cfg, "gateway", "cluster", d.key)
		if !ok || v == nil {
			continue
		}
		dur, err := settingDuration(v)
		if err != nil || dur <= 0 {
			return c, fmt.Errorf("gateway.cluster.%s in config.yaml is %v: write a duration such as 30s or 500ms (or a number of seconds)", d.key, v)
		}
		*d.to = dur
	}
	if c.MaxAttempts < 0 {
		return c, errors.New("gateway.cluster.max_attempts must be a positive number of deliveries")
	}
	if lease := cmp.Or(c.LeaseTTL, 30*time.Second); c.Heartbeat > 0 && c.Heartbeat >= lease {
		return c, fmt.Errorf("gateway.cluster.heartbeat %s is not shorter than gateway.cluster.lease_ttl %s: leases would lapse between heartbeats", c.Heartbeat, lease)
	}
	return c, nil
}

// settingDuration is a config value as a duration: a string time.ParseDuration
// reads, or a number of seconds.
func settingDuration(v any) (time.Duration, error) {
	if x, ok := v.(string); ok {
		return time.ParseDuration(strings.TrimSpace(x))
	}
	if n, ok := toInt(v); ok {
		return time.Duration(n) * time.Second, nil
	}
	if x, ok := v.(float64); ok {
		return time.Duration(x * float64(time.Second)), nil
	}
	return 0, fmt.Errorf("%v is not a duration", v)
}

// prepareCluster reads the cluster's settings when the store is PostgreSQL
// (the node itself is joined by openCluster, on first use); with state.db it
// does nothing and the gateway is one process, as before.
func (g *Gateway) prepareCluster(f *Factory, cfg map[string]any) error {
	storeURL, err := f.storeURL()
	if err != nil || storeURL == "" {
		return err
	}
	pw, err := f.pgPassword()
	if err != nil {
		return err
	}
	cc, err := clusterConfig(cfg, storeURL, pw)
	if err != nil {
		return configError("%v", err)
	}
	c := &gatewayCluster{cfg: cc, log: g.log.logger,
		workers: intSetting(cfg, []string{"gateway", "cluster", "workers"}, intSetting(cfg, []string{"gateway", "max_concurrent_sessions"}, 32))}
	if c.workers <= 0 {
		return configError("gateway.cluster.workers is %d: use a positive number of turns this process runs at once", c.workers)
	}
	if c.discordCatchUp, err = discordCatchUpWindow(cfg); err != nil {
		return configError("%v", err)
	}
	g.cluster = c
	return nil
}

// joinCluster sets up the queue path once the adapters and the engine exist.
func (g *Gateway) joinCluster(adapters []platform.Adapter) {
	c := g.cluster
	if c == nil {
		return
	}
	for _, a := range adapters {
		if o, ok := a.(*ownedAdapter); ok {
			a = o.inner // polling: behind the election
		}
		if tg, ok := a.(*telegram.Adapter); ok {
			c.telegram = tg
		}
		c.served = append(c.served, a.Name())
	}
	// Conversations move between processes: each turn reads its session
	// from the database rather than trusting this process's copy.
	g.engine.shared = true
	if c.telegram != nil {
		c.telegram.SetAccept(g.enqueueTelegram)
	}
}

// openCluster returns this gateway's cluster node, joining the cluster on
// the first call; nil without error when the store is state.db (one
// process, no cluster). Every part of the gateway that needs the cluster
// (the queue, the owner election) gets the one node from here.
func (g *Gateway) openCluster(ctx context.Context) (*cluster.Node, error) {
	c := g.cluster
	if c == nil {
		return nil, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.node != nil {
		return c.node, nil
	}
	n, err := cluster.Open(ctx, c.cfg)
	if err != nil {
		return nil, err
	}
	c.node = n
	return n, nil
}

// runCluster joins the cluster and starts this process's workers; the
// returned stop, called once the runner has stopped, waits for the drain
// SIGTERM (ctx's end) began, then leaves the cluster.
func (g *Gateway) runCluster(ctx context.Context) (stop func(), err error) {
	if g.cluster == nil {
		return func() {}, nil
	}
	node, err := g.openCluster(ctx)
	if err != nil {
		return nil, err
	}
	c := g.cluster
	node.Serve(c.served...)
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var workers sync.WaitGroup
	if c.telegram != nil {
		// Decoding needs the bot's name (mentions in groups). The adapter
		// learns it when it runs, but with long polling only the owner's
		// runs: every other process asks for it here.
		workers.Add(1)
		go func() {
			defer workers.Done()
			if err := c.telegram.Identify(ctx); err != nil {
				c.log.Warn("gateway: cluster queue: cannot decode Telegram updates", "error", err)
			}
		}()
	}
	for range c.workers {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for c.telegram != nil && !c.telegram.Identified() {
				select {
				case <-wctx.Done():
					return
				case <-ctx.Done():
					return
				case <-time.After(50 * time.Millisecond):
				}
			}
			g.work(wctx, node)
		}()
	}
	workers.Add(1)
	go func() { defer workers.Done(); g.serveDirect(wctx, node) }()
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		select {
		case <-ctx.Done():
		case <-wctx.Done():
			return
		}
		// Stop claiming; the items running here finish within the runner's
		// drain (its DrainTimeout), and what is left is handed back.
		dctx, dcancel := context.WithTimeout(context.Background(), g.runner.DrainTimeout()+5*time.Second)
		defer dcancel()
		if err := node.Drain(dctx); err != nil {
			c.log.Warn("gateway: cluster drain", "error", err)
		}
	}()
	return func() {
		<-drained
		cancel()
		workers.Wait()
		node.Close()
	}, nil
}

// work claims items until the node drains or ctx ends.
func (g *Gateway) work(ctx context.Context, node *cluster.Node) {
	for {
		it, err := node.Next(ctx)
		if err != nil {
			if !errors.Is(err, cluster.ErrDraining) && ctx.Err() == nil {
				g.cluster.log.Warn("gateway: cluster queue", "error", err)
			}
			return
		}
		g.runItem(ctx, node, it)
	}
}

// runItem runs one claimed item and finishes it: Done once its answer is
// recorded, Fail (retry, then dead letter) when it cannot run, nothing when
// the runner is draining (Drain hands the lease back).
func (g *Gateway) runItem(ctx context.Context, node *cluster.Node, it *cluster.Item) {
	log := g.cluster.log.With("session_key", it.SessionKey, "update_id", it.UpdateID, "attempt", it.Attempt)
	if !node.Holds(it) {
		// The claim's answer came back later than a lease expiry (the
		// database slow or cut off): the item may be another's already.
		log.Warn("gateway: a claimed update came back too late to be surely this process's; leaving it to its lease's expiry")
		node.Drop(it)
		return
	}
	defer g.cluster.run(itemDelivery(it), runningItem{node: node, it: it})()
	// Heartbeats renew the lease while the turn runs; once they have not
	// reached the database for a lease expiry, another process may have the
	// conversation, so this one stops acting on it.
	watched := make(chan struct{})
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-watched:
				return
			case <-t.C:
				if !node.Holds(it) {
					g.runner.StopQueued(it.SessionKey, itemDelivery(it))
					return
				}
			}
		}
	}()
	err := g.handleItem(ctx, it)
	close(watched)
	switch {
	case errors.Is(err, gateway.ErrDraining):
		return
	case err != nil:
		log.Warn("gateway: queued update failed", "error", err)
		if dead, ferr := node.Fail(context.WithoutCancel(ctx), it, err); ferr != nil {
			// Its lease is no longer renewed: it lapses and the item is
			// delivered again.
			node.Drop(it)
			log.Warn("gateway: cluster queue: could not give an item back; it is delivered again after its lease expires", "error", ferr)
		} else if dead {
			log.Error("gateway: queued update dead-lettered after too many attempts", "error", err)
			if ev, ok := g.itemEvent(ctx, it); ok {
				g.runner.Notify(it.Platform, platform.Outbound{ChatID: ev.Source.ChatID, ThreadID: ev.Source.ThreadID,
					Text: "⚠️ Sorry, that failed: " + err.Error()})
			}
		}
		return
	}
	// The answer is recorded: finish the item, retrying while the database
	// is away (a restart); losing the lease means another process already
	// redelivered it.
	for delay := 100 * time.Millisecond; ; delay = min(2*delay, 2*time.Second) {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		err := node.Done(dctx, it)
		cancel()
		if err == nil {
			return
		}
		if errors.Is(err, cluster.ErrLeaseLost) {
			log.Warn("gateway: a queued update's lease was lost before it finished; another process runs it again")
			return
		}
		log.Warn("gateway: cluster queue: finishing an item failed; retrying", "error", err)
		time.Sleep(delay)
	}
}

// itemDelivery names a queue item as its event's Delivery and its turn's
// stored user message do.
func itemDelivery(it *cluster.Item) string { return it.Platform + ":" + it.UpdateID }

func (g *Gateway) handleItem(ctx context.Context, it *cluster.Item) error {
	if it.Platform == discord.Name {
		return g.handleDiscordItem(ctx, it)
	}
	if it.Platform != telegram.Name || g.cluster.telegram == nil {
		return fmt.Errorf("a queued update of platform %s, which this process does not serve", it.Platform)
	}
	ev, ok := g.cluster.telegram.Decode(ctx, it.Payload)
	if !ok {
		return nil // nothing the gateway acts on (the webhook queues only what decodes)
	}
	// The turn's user message is stored with the update it answers, so a
	// redelivery finds how far the turn got by identity.
	ev.Delivery = itemDelivery(it)
	if it.Attempt > 1 {
		done, err := g.resumeItem(ctx, it, &ev)
		if err != nil || done {
			return err
		}
	}
	return g.runner.HandleQueued(ctx, telegram.Name, ev)
}

// resumeItem is a redelivered item's look at the last stored step, found by
// the update's identity (ev.Delivery, stored with its turn's user message),
// never by its text: the same text may be a new message, and the stored
// text may differ from the update's (a reply quote, an attachment note).
//
//   - its user message stored and answered: the turn is not run again; the
//     stored answer is sent through the ledger, marked as a possible
//     duplicate (the one redelivery the design allows: the dead process may
//     have sent it before it died);
//   - stored but not answered: ev is marked Stored, and the turn continues
//     from the stored history without appending the message again;
//   - not stored: the turn runs as a first delivery would.
func (g *Gateway) resumeItem(ctx context.Context, it *cluster.Item, ev *platform.Event) (done bool, err error) {
	st, err := findTurn(ctx, g.engine.store, it.SessionKey, ev.Delivery)
	if err != nil {
		return false, err
	}
	log := g.cluster.log.With("session_key", it.SessionKey, "update_id", it.UpdateID, "attempt", it.Attempt)
	switch {
	case !st.stored:
		return false, nil
	case st.answer != nil:
		log.Info("gateway: a redelivered update's turn had finished; sending its stored answer once more")
		text := st.answer.Content
		if g.engine.h != nil {
			text = g.engine.h.Redact(text)
		}
		out := platform.Outbound{ChatID: ev.Source.ChatID, ThreadID: ev.Source.ThreadID, Text: text}
		if ev.Source.ChatType != platform.ChatDM {
			out.ReplyTo = ev.MessageID // as the turn would have answered
		}
		return true, g.runner.DeliverStored(it.Platform, it.SessionKey, ev.Delivery, out)
	case st.later:
		// Items of a conversation run in order, so a later turn after an
		// unanswered one means the conversation moved on: nothing to resume.
		log.Warn("gateway: a redelivered update's turn stopped unanswered and later turns followed; not running it again")
		return true, nil
	default:
		log.Info("gateway: a redelivered update's message is stored without its answer; continuing its turn")
		ev.Stored = true
		return false, nil
	}
}

// storedTurn is how far the turn answering one delivery got in the store.
type storedTurn struct {
	stored bool         // its user message is stored
	at     int          // that message's index in the session's history
	answer *llm.Message // its final answer, when stored
	later  bool         // another delivery's turn follows it
}

// findTurn reads key's conversation for the user message stored with
// delivery and what followed it: up to the next delivery's message, the
// last assistant message without tool calls is the turn's answer.
func findTurn(ctx context.Context, s session.Backend, key, delivery string) (storedTurn, error) {
	var st storedTurn
	k, err := s.LookupKey(ctx, key)
	if errors.Is(err, session.ErrNotFound) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	hist, err := s.History(ctx, k.SessionID)
	if errors.Is(err, session.ErrNotFound) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	st.at = -1
	for i, m := range hist {
		if m.SourceID == delivery && m.Role == llm.RoleUser {
			st.at = i
		}
	}
	if st.at < 0 {
		return st, nil
	}
	st.stored = true
	for _, m := range hist[st.at+1:] {
		if m.SourceID != "" {
			st.later = true
			break
		}
		if m.Role == llm.RoleAssistant && len(m.ToolCalls) == 0 && strings.TrimSpace(m.Content) != "" {
			st.answer = &m.Message
		}
	}
	return st, nil
}

// ledger is the delivery ledger as a cluster member sees it (l itself with
// state.db). At start a runner sends what the ledger still owes; on a shared
// store that includes answers another live process recorded a moment ago
// and is sending now. Only answers older than two lease expiries are owed:
// by then their process has finished them or died, and a dead process's
// unfinished items come back through the queue anyway. A connection one
// process holds (gateway.RedeliversOnLead) is redelivered by the process that
// takes it over, once its owner is gone: what it owes is owed at once.
func (c *gatewayCluster) ledger(l storeLedger, adapters []platform.Adapter) gateway.Ledger {
	if c == nil {
		return l
	}
	ttl := c.cfg.LeaseTTL
	if ttl <= 0 {
		ttl = 30 * time.Second
	}
	onLead, roles := map[string]bool{}, map[string]string{}
	for _, a := range adapters {
		if _, ok := a.(gateway.RedeliversOnLead); ok {
			onLead[a.Name()] = true
		}
		if o, ok := a.(*ownedAdapter); ok {
			roles[a.Name()] = o.role
		}
	}
	queued := func(ctx context.Context, role string) (map[int64]bool, error) {
		c.mu.Lock()
		n := c.node
		c.mu.Unlock()
		if n == nil {
			return nil, nil
		}
		return queuedAnswers(ctx, n, role)
	}
	return clusterLedger{storeLedger: l, settle: 2 * ttl, onLead: onLead, roles: roles, queued: queued}
}

type clusterLedger struct {
	storeLedger
	settle time.Duration
	onLead map[string]bool
	// roles: the owned platforms' roles, whose routed answers still in the
	// outbox (queued) are the outbox's to send, not a redelivery's.
	roles  map[string]string
	queued func(ctx context.Context, role string) (map[int64]bool, error)
}

func (l clusterLedger) Unsent(ctx context.Context, pl string) ([]gateway.Unsent, error) {
	// Read before the ledger: an action acked in between was marked first
	// (the owner marks, then acks), or failed for good and is owed.
	var queued map[int64]bool
	if role := l.roles[pl]; role != "" && l.queued != nil {
		q, err := l.queued(ctx, role)
		if err != nil {
			return nil, err
		}
		queued = q
	}
	rows, err := l.s.UnsentDeliveries(ctx, pl, l.s.Now().Add(-24*time.Hour), 3)
	if err != nil {
		return nil, err
	}
	cutoff := l.s.Now().Add(-l.settle)
	if l.onLead[pl] {
		cutoff = l.s.Now()
	}
	out := make([]gateway.Unsent, 0, len(rows))
	for _, d := range rows {
		var r ledgerRoute
		if d.CreatedAt.After(cutoff) || queued[d.ID] || json.Unmarshal([]byte(d.Route), &r) != nil || r.ChatID == "" {
			continue
		}
		out = append(out, gateway.Unsent{ID: d.ID, Attempts: d.Attempts, Out: platform.Outbound{ChatID: r.ChatID, ThreadID: r.ThreadID, Text: d.Text}})
	}
	return out, nil
}
