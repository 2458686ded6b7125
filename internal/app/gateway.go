package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hermes-go/hermes/internal/agent"
	"github.com/hermes-go/hermes/internal/approval"
	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/gateway"
	"github.com/hermes-go/hermes/internal/gateway/auth"
	"github.com/hermes-go/hermes/internal/gateway/discord"
	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/internal/gateway/telegram"
	"github.com/hermes-go/hermes/internal/hooks"
	"github.com/hermes-go/hermes/internal/lazyre"
	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/plugins/registry"
	"github.com/hermes-go/hermes/internal/session"
)

// Exit codes of `hermes gateway run` (upstream's gateway/restart.py): 75 asks
// the service manager for a restart, 78 is a configuration it cannot run.
const (
	ExitGatewayRestart     = 75
	ExitGatewayFatalConfig = 78
)

// Gateway is one `hermes gateway run`: the plugin host loaded as for `hermes
// chat`, the same model and tool pipeline, and a runner over every enabled
// platform.
type Gateway struct {
	h      *Host
	runner *gateway.Runner
	engine *gatewayEngine
	end    func()
	log    *gatewayLog
	// Platforms are the platforms served, in start order.
	Platforms []string
	// Warning is the authorisation start-up warning ("" when someone may talk).
	Warning string
	// requireMention is each platform's require_mention setting.
	requireMention map[string]bool
	// authEnv names plugin platforms' allowlist variables (register_platform's
	// allowed_users_env, allow_all_env).
	authEnv map[string]auth.PlatformEnv
	// skipped are enabled plugin platforms whose check_fn said no, and why.
	skipped []string
	// cluster is the PostgreSQL work queue's side (nil with state.db);
	// admin the health endpoints; owners the connections one process holds
	// (gateway_cluster.go, gateway_admin.go, gateway_owner.go).
	cluster *gatewayCluster
	admin   *gatewayAdmin
	owners  *gatewayOwners
}

// GatewayOptions are what the command asks of the gateway.
type GatewayOptions struct {
	// DrainTimeout overrides gateway.drain_timeout (0 keeps it).
	DrainTimeout time.Duration
}

// configError is a configuration the gateway cannot run with: exit 78.
func configError(format string, args ...any) error {
	return &ExitError{Code: ExitGatewayFatalConfig, Message: "Error: " + fmt.Sprintf(format, args...)}
}

// NewGateway loads the plugins and wires the runner. Close it when done.
func (f *Factory) NewGateway(ctx context.Context, o GatewayOptions) (*Gateway, error) {
	hm, err := f.Home()
	if err != nil {
		return nil, err
	}
	approvals := &gatewayApprovals{store: &config.Store{Path: hm.ConfigPath()}, redact: f.Redactor().String, byKey: map[string]*approval.Approver{}}
	f.toolApprover = approvals
	h, err := f.Host(ctx)
	if err != nil {
		return nil, err
	}
	g := &Gateway{h: h, requireMention: map[string]bool{}}
	ok := false
	defer func() {
		if !ok {
			g.Close()
		}
	}()
	g.log = openGatewayLog(f, h.Home().LogsDir())
	if err := h.Load(ctx); err != nil {
		return nil, err
	}
	doc, err := h.Store().Load()
	if err != nil {
		return nil, err
	}
	cfg := doc.Map()
	dotenv, err := config.ReadDotenv(h.home.EnvPath())
	if err != nil {
		return nil, configError("%v", err)
	}
	env := func(k string) string {
		if v, ok := dotenv[k]; ok {
			return v
		}
		return f.Env(k)
	}
	lcfg, err := h.llmConfig(ctx, llm.ModelSection(cfg["model"]), dotenv)
	if err != nil {
		return nil, configError("%v", err)
	}
	client, err := llm.New(lcfg)
	if err != nil {
		return nil, configError("%v", err)
	}
	if err := h.registerShellHooks(ctx, doc); err != nil {
		return nil, err
	}
	if err := h.registerMCPTools(ctx, parseToolsets("", cfg["toolsets"])); err != nil {
		return nil, err
	}
	restoreTools, err := h.chooseToolsets("", cfg["toolsets"])
	if err != nil {
		return nil, err
	}
	pricing, err := parsePricing(cfg)
	if err != nil {
		restoreTools()
		return nil, err
	}
	endAgent := h.Chat(client, lcfg, nil)
	// One memory provider per gateway process, shared by every platform's
	// agent as chat's one agent shares it; closed (its last syncs drained,
	// shutdown called) before the plugins stop.
	memOn := h.attachMemory(ctx)
	memToolsOn := h.memoryToolsOn()
	g.end = func() { h.memory.Close(context.Background()); endAgent(); restoreTools() }

	if err := g.prepareCluster(f, cfg); err != nil {
		return nil, err
	}
	if g.owners, err = g.openOwners(ctx); err != nil {
		return nil, err
	}
	adapters, err := g.adapters(ctx, doc, env)
	if err != nil {
		return nil, err
	}
	adapters = g.owners.wrap(g, adapters, env("TELEGRAM_WEBHOOK_URL") == "")
	store, err := f.OpenStore(ctx, false)
	if err != nil {
		return nil, err
	}
	// On PostgreSQL the pairing state is the database's too (every process
	// of a cluster shares it); with state.db it stays upstream's files.
	pairingState, _ := store.(session.DocStore)
	az, err := f.Authorizer(ctx, auth.Options{Config: doc, Platforms: g.authEnv, State: pairingState})
	if err != nil {
		_ = store.Close()
		return nil, configError("%v", err)
	}
	g.Warning = az.StartupWarning(g.Platforms)
	g.engine = &gatewayEngine{h: h, store: store, model: lcfg.Model, sessions: map[string]*gwSession{}, agents: map[string]*agent.Agent{},
		usage: map[string]llm.Usage{}, pricing: pricing, maxLive: intSetting(cfg, []string{"gateway", "max_live_sessions"}, defaultMaxLive)}
	// SOUL.md is the instance's identity on every platform; the project
	// context files belong to a chat started in a project, not to the gateway.
	soul := loadSoul(h.home.Dir, h.f.Warn)
	cs := readCompression(cfg, h.f.Warn)
	g.engine.newAgent = func(pl string) *agent.Agent {
		var mem agent.Memory
		if memOn {
			mem = h.memory.ForPlatform(pl)
		}
		ag := agent.New(agent.Options{
			Model: lcfg.Model, Provider: lcfg.Provider, BaseURL: lcfg.BaseURL,
			Pipeline: h.Pipeline(), Hooks: h.Registry.Hooks(), Platform: pl,
			SystemPrompt: soul, SystemSections: gatewaySections(h, memToolsOn),
			Memory: mem, PreCompress: preCompressor(mem, h),
			HookOutputDir: filepath.Join(h.home.Dir, "hook_outputs"),
			MaxIterations: intSetting(cfg, []string{"agent", "max_turns"}, 90),
			Middleware:    h.Registry.LLMChains(),
			Redact:        f.Redactor().String,
			Recorder:      gatewayRecorder{sessionRecorder{store}},
		})
		ag.ObserveAttempts(&lcfg)
		ag.SetClient(client)
		// Each platform's agent has its engine, as chat's one agent has; a
		// compaction continues in a child session the key then routes to.
		ag.SetEngine(h.contextEngine(ctx, cs, client, lcfg, logProgress{g.log.logger}), cs.enabled)
		return ag
	}

	keys := platform.DefaultKeyOptions()
	keys.GroupSessionsPerUser = boolSetting(cfg, "group_sessions_per_user", true)
	keys.ThreadSessionsPerUser = boolSetting(cfg, "thread_sessions_per_user", false)
	keys.Profile = f.Profile
	busy, _ := stringAt(cfg, "display", "busy_input_mode")
	drain := time.Duration(intSetting(cfg, []string{"gateway", "drain_timeout"}, 60)) * time.Second
	if o.DrainTimeout > 0 {
		drain = o.DrainTimeout
	}
	g.joinCluster(adapters)
	var ledger gateway.Ledger
	if boolAt(cfg, true, "gateway", "delivery_ledger") {
		ledger = g.cluster.ledger(storeLedger{store}, adapters)
	}
	g.owners.setLedger(ledger)
	g.runner, err = gateway.New(gateway.Options{
		Adapters: adapters, Engine: g.engine, Auth: az, Hooks: h.Registry.Hooks(), Commands: h.Registry, Ledger: ledger, Routes: g.engine,
		RequireMention: g.requireMention,
		Keys:           keys, BusyMode: strings.ToLower(strings.TrimSpace(busy)), BusyAck: boolAt(cfg, true, "display", "busy_ack_enabled"),
		MaxConcurrent:       intSetting(cfg, []string{"gateway", "max_concurrent_sessions"}, 32),
		DrainTimeout:        drain,
		DispatchHookTimeout: time.Duration(intSetting(cfg, []string{"gateway", "dispatch_hook_timeout"}, 30)) * time.Second,
		LeaseHeld:           g.cluster.leaseHeld(),
		Logger:              g.log.logger,
	})
	if err != nil {
		return nil, configError("%v", err)
	}
	if g.admin, err = newGatewayAdmin(cfg); err != nil {
		return nil, err
	}
	approvals.timeout = approvalTimeout(doc)
	approvals.route = f.approvalRoute(doc, func() *registry.Registry { return h.Registry })
	approvals.set(h.Registry.Hooks(), g.runner)
	ok = true
	return g, nil
}

// adapters builds the adapter of every enabled platform: enabled by its
// credentials in .env or the environment, or platforms.<name>.enabled
// (an explicit false wins).
func (g *Gateway) adapters(ctx context.Context, doc *config.Doc, env func(string) string) ([]platform.Adapter, error) {
	var out []platform.Adapter
	enabled := func(name, tokenVar string) (bool, error) { return g.platformEnabled(doc, env, name, tokenVar) }
	on, err := enabled(telegram.Name, "TELEGRAM_BOT_TOKEN")
	if err != nil {
		return nil, err
	}
	if on {
		base, err := extraString(doc, env, telegram.Name, "base_url")
		if err != nil {
			return nil, err
		}
		drop := true
		if v, ok := doc.GetPath([]string{"platforms", telegram.Name, "extra", "drop_pending_on_cold_boot"}); ok {
			drop, _ = config.Bool(v)
		}
		drop = drop && g.owners == nil // a takeover is no cold boot: what waited is the cluster's
		port := env("TELEGRAM_WEBHOOK_PORT")
		if port == "" {
			port = "8443"
		}
		if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return nil, configError("TELEGRAM_WEBHOOK_PORT is %q: use a port number", port)
		}
		a, err := telegram.New(telegram.Options{Token: env("TELEGRAM_BOT_TOKEN"), BaseURL: base, DropPending: drop, Logger: g.log.logger,
			WebhookURL: env("TELEGRAM_WEBHOOK_URL"), WebhookSecret: env("TELEGRAM_WEBHOOK_SECRET"), WebhookListen: ":" + port})
		if err != nil {
			return nil, configError("%v", err)
		}
		out = append(out, a)
		g.Platforms = append(g.Platforms, telegram.Name)
		g.requireMention[telegram.Name] = platformBool(doc, telegram.Name, "require_mention", false)
	}
	on, err = enabled(discord.Name, "DISCORD_BOT_TOKEN")
	if err != nil {
		return nil, err
	}
	if on {
		a, err := g.discordAdapter(doc, env)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
		g.Platforms = append(g.Platforms, discord.Name)
		// The adapter applies DISCORD_REQUIRE_MENTION itself: it knows the
		// free-response channels and the threads it opened.
		g.requireMention[discord.Name] = false
	}
	plugged, err := g.pluginAdapters(ctx, doc, env)
	if err != nil {
		return nil, err
	}
	out = append(out, plugged...)
	if len(out) == 0 {
		if len(g.skipped) > 0 {
			return nil, configError("no messaging platform is enabled: the plugin platforms %s cannot run here; see gateway.log for their install hints", strings.Join(g.skipped, ", "))
		}
		return nil, configError("no messaging platform is enabled: set TELEGRAM_BOT_TOKEN (the token @BotFather gave you) or DISCORD_BOT_TOKEN (the bot's token in the Discord Developer Portal) in %s, or enable a plugin's platform with platforms.<name>.enabled: true in config.yaml, then run hermes gateway again", g.h.home.EnvPath())
	}
	return out, nil
}

// extraString reads platforms.<pl>.extra.<key>, its ${VAR} references
// expanded from the environment and .env (as model settings are).
// platformBool reads a platform's boolean setting where upstream's docs put
// it: platforms.<pl>.extra.<key>, platforms.<pl>.<key>, or a top-level <pl>: block.
func platformBool(doc *config.Doc, pl, key string, def bool) bool {
	for _, path := range [][]string{{"platforms", pl, "extra", key}, {"platforms", pl, key}, {pl, key}} {
		if v, ok := doc.GetPath(path); ok {
			if b, ok := config.Bool(v); ok {
				return b
			}
		}
	}
	return def
}

func extraString(doc *config.Doc, env func(string) string, pl, key string) (string, error) {
	v, ok := doc.GetPath([]string{"platforms", pl, "extra", key})
	if !ok || v == nil {
		return "", nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", configError("platforms.%s.extra.%s in config.yaml must be a string, not %T", pl, key, v)
	}
	var missing string
	s = varRef.Get().ReplaceAllStringFunc(s, func(ref string) string {
		name := ref[2 : len(ref)-1]
		val := env(name)
		if val == "" && missing == "" {
			missing = name
		}
		return val
	})
	if missing != "" {
		return "", configError("platforms.%s.extra.%s refers to ${%s}, which is set neither in the environment nor in .env", pl, key, missing)
	}
	return strings.TrimSpace(s), nil
}

var varRef = lazyre.New(`\$\{[A-Za-z_][A-Za-z0-9_]*\}`)

// Run serves until ctx ends (SIGTERM), then drains. A platform that fails
// for good ends it too: a refused token exits 78 (fix the configuration),
// anything else 75 (restart me).
func (g *Gateway) Run(ctx context.Context) error {
	g.log.logger.Info("gateway: started", "platforms", strings.Join(g.Platforms, ","))
	if g.Warning != "" {
		g.log.logger.Warn(g.Warning)
	}
	// Plugins reach the runner (platform actions, injection) only while it serves.
	g.owners.setRunner(g.runner)
	g.h.gw.bind(&gatewayBinding{r: g.runner, log: g.log.logger, owners: g.owners})
	stopCluster, err := g.runCluster(ctx)
	if err != nil {
		g.h.gw.bind(nil)
		return &ExitError{Code: ExitGatewayRestart, Message: "Error: " + err.Error() + " (exit 75: restart the gateway)"}
	}
	stopAdmin, err := g.serveAdmin(ctx)
	if err != nil {
		stopCluster()
		g.h.gw.bind(nil)
		return configError("%v", err)
	}
	err = g.runner.Run(ctx)
	stopCluster()
	stopAdmin()
	g.h.gw.bind(nil)
	g.log.logger.Info("gateway: stopped")
	switch {
	case err == nil:
		return nil
	case errors.Is(err, telegram.ErrTokenRefused), errors.Is(err, discord.ErrTokenRefused),
		errors.Is(err, discord.ErrIntentsRefused), errors.Is(err, discord.ErrNotDiscord):
		return configError("%v", err)
	}
	return &ExitError{Code: ExitGatewayRestart, Message: "Error: " + err.Error() + " (exit 75: restart the gateway)"}
}

// Close ends the sessions, closes state.db and stops every plugin.
func (g *Gateway) Close() {
	defer g.owners.close()
	if g.engine != nil {
		g.engine.endAll() // before the provider closes (g.end)
		g.engine.close()
	}
	if g.end != nil {
		g.end()
	}
	g.h.Close()
	if g.log != nil {
		g.log.close()
	}
}

// gatewayEngine is the runner's Engine: the agent over state.db, one live
// session per key.
type gatewayEngine struct {
	h        *Host
	store    session.Backend
	model    string
	newAgent func(platform string) *agent.Agent

	mu       sync.Mutex
	agents   map[string]*agent.Agent // per platform: the platform is in every hook payload
	sessions map[string]*gwSession
	usage    map[string]llm.Usage // per key, this process's turns
	pricing  map[string]ModelPrice
	clock    int64
	// maxLive bounds the conversations kept in memory; an idle one beyond it
	// is dropped (ended for the memory provider) and read again from
	// state.db at its next message.
	maxLive int
	ending  sync.WaitGroup // endEvicted's calls under way
	// shared: other processes run this store's conversations too (a
	// cluster), so every turn reads its session from the store.
	shared bool
}

type gwSession struct {
	mu   sync.Mutex // one open or turn at a time
	s    *agent.Session
	used int64 // when it last ran (a counter)
}

// defaultMaxLive is how many conversations stay in memory between turns.
const defaultMaxLive = 256

var _ gateway.Engine = (*gatewayEngine)(nil)

func (e *gatewayEngine) agentFor(pl string) *agent.Agent {
	e.mu.Lock()
	defer e.mu.Unlock()
	ag, ok := e.agents[pl]
	if !ok {
		ag = e.newAgent(pl)
		e.agents[pl] = ag
	}
	return ag
}

func (e *gatewayEngine) entry(key string) *gwSession {
	e.mu.Lock()
	defer e.mu.Unlock()
	s, ok := e.sessions[key]
	if !ok {
		s = &gwSession{}
		e.sessions[key] = s
	}
	e.clock++
	s.used = e.clock
	return s
}

// evict drops the least recently used idle conversations beyond maxLive.
func (e *gatewayEngine) evict() {
	var gone []*agent.Session
	defer func() { e.endEvicted(gone) }()
	e.mu.Lock()
	defer e.mu.Unlock()
	for len(e.sessions) > e.maxLive {
		var oldKey string
		var old *gwSession
		for k, s := range e.sessions {
			if old == nil || s.used < old.used {
				oldKey, old = k, s
			}
		}
		if !old.mu.TryLock() {
			return // the oldest is running: nothing idle is older
		}
		delete(e.sessions, oldKey)
		if old.s != nil {
			gone = append(gone, old.s)
		}
		old.mu.Unlock()
	}
}

// open returns key's session: live, stored (resumed across a restart), or new.
func (e *gatewayEngine) open(ctx context.Context, ag *agent.Agent, key string, src platform.Source, gs *gwSession) error {
	if gs.s != nil && !e.shared {
		return nil
	}
	stored, msgs, err := e.store.KeyMessages(ctx, key)
	if err == nil {
		gs.s = ag.ResumeSession(ctx, stored, msgs)
		return nil
	}
	if !errors.Is(err, session.ErrNotFound) {
		return err
	}
	id, err := e.create(ctx, key, src)
	if err != nil {
		return err
	}
	gs.s = ag.NewSession(ctx, id)
	return nil
}

func (e *gatewayEngine) create(ctx context.Context, key string, src platform.Source) (string, error) {
	id, err := e.store.NewSession(ctx, session.Session{Model: e.model, Source: src.Platform})
	if err != nil {
		return "", err
	}
	origin, _ := json.Marshal(src)
	if err := e.store.BindKey(ctx, key, id, string(origin)); err != nil {
		return "", err
	}
	return id, nil
}

func (e *gatewayEngine) Turn(ctx context.Context, key string, src platform.Source, text string) (gateway.TurnResult, error) {
	ag := e.agentFor(src.Platform)
	gs := e.entry(key)
	gs.mu.Lock()
	defer gs.mu.Unlock()
	ctx = agent.WithSteering(withGatewayTurn(ctx, key, src), gateway.SteeringFrom(ctx))
	// Opening is not interrupted: a message stopped at once is still stored.
	if err := e.open(context.WithoutCancel(ctx), ag, key, src, gs); err != nil {
		return gateway.TurnResult{}, err
	}
	t, err := e.run(ctx, ag, key, gs, text)
	res := gateway.TurnResult{SessionID: gs.s.ID}
	if t != nil {
		e.mu.Lock()
		u := e.usage[key]
		u.PromptTokens += t.Usage.PromptTokens
		u.CompletionTokens += t.Usage.CompletionTokens
		u.TotalTokens += t.Usage.TotalTokens
		e.usage[key] = u
		e.mu.Unlock()
		res.Usage = t.Usage
		res.Reply = e.h.Redact(t.Final)
		if uerr := storeTurnUsage(ctx, e.store, gs.s.ID, e.model, e.pricing, t); uerr != nil {
			e.h.f.Logger().Warn("could not record the turn's token usage", "session", gs.s.ID, "error", uerr)
		}
	}
	// Runs with this session still locked: it is the newest, never the one dropped.
	defer e.evict()
	if err != nil {
		return res, errors.New(e.h.Redact(err.Error()))
	}
	return res, nil
}

func (e *gatewayEngine) NewSession(ctx context.Context, key string, src platform.Source) (string, error) {
	ag := e.agentFor(src.Platform)
	gs := e.entry(key)
	gs.mu.Lock()
	defer gs.mu.Unlock()
	old := ""
	if gs.s != nil {
		old = gs.s.ID
	} else if k, err := e.store.LookupKey(ctx, key); err == nil {
		old = k.SessionID
	}
	id, err := e.create(ctx, key, src)
	if err != nil {
		return "", err
	}
	d := e.h.Registry.Hooks()
	if old != "" {
		e.endMemorySession(ctx, old, gs.s, id)
		_ = e.store.EndSession(ctx, old)
		if d.Has(hooks.HookOnSessionFinalize) {
			d.Fire(ctx, hooks.HookOnSessionFinalize, map[string]any{"session_id": old, "platform": src.Platform,
				"reason": "new_session", "old_session_id": old, "new_session_id": id})
		}
	}
	if d.Has(hooks.HookOnSessionReset) {
		d.Fire(ctx, hooks.HookOnSessionReset, map[string]any{"session_id": id, "platform": src.Platform, "reason": "new_session",
			"old_session_id": nilIfEmpty(old), "new_session_id": id})
	}
	gs.s = ag.NewSession(ctx, id)
	e.mu.Lock()
	delete(e.usage, key)
	e.mu.Unlock()
	return id, nil
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (e *gatewayEngine) Info(ctx context.Context, key string) (gateway.SessionInfo, error) {
	// Not under the session's lock: /status must answer while a turn runs.
	e.mu.Lock()
	info := gateway.SessionInfo{Model: e.model, Usage: e.usage[key]}
	e.mu.Unlock()
	k, err := e.store.LookupKey(ctx, key)
	if errors.Is(err, session.ErrNotFound) {
		return info, nil
	}
	if err != nil {
		return info, err
	}
	sess, err := e.store.Get(ctx, k.SessionID)
	if err != nil {
		return info, err
	}
	info.Exists, info.SessionID, info.Messages = true, sess.ID, sess.MessageCount
	if sess.Model != "" {
		info.Model = sess.Model
	}
	return info, nil
}

// Route implements gateway.Routes: the session key's binding in state.db
// and the Source stored with it.
func (e *gatewayEngine) Route(ctx context.Context, key string) (string, platform.Source, bool, error) {
	k, err := e.store.LookupKey(ctx, key)
	if errors.Is(err, session.ErrNotFound) {
		return "", platform.Source{}, false, nil
	}
	if err != nil {
		return "", platform.Source{}, false, err
	}
	var src platform.Source
	if k.Origin == "" || json.Unmarshal([]byte(k.Origin), &src) != nil || src.Platform == "" || src.ChatID == "" {
		return "", platform.Source{}, false, nil
	}
	return k.SessionID, src, true, nil
}

func (e *gatewayEngine) close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	_ = e.store.Close()
}

func boolSetting(cfg map[string]any, key string, def bool) bool { return boolAt(cfg, def, key) }

// storeLedger is the delivery ledger in the session store.
type storeLedger struct{ s ledgerStore }

type ledgerStore interface {
	session.Ledger
	Now() time.Time
}

type ledgerRoute struct {
	ChatID   string `json:"chat_id"`
	ThreadID string `json:"thread_id,omitempty"`
}

func (l storeLedger) Record(ctx context.Context, key, pl string, out platform.Outbound) (int64, error) {
	route, _ := json.Marshal(ledgerRoute{out.ChatID, out.ThreadID})
	return l.s.RecordDelivery(ctx, session.Delivery{SessionKey: key, Platform: pl, Route: string(route), Text: out.Text, Attempts: 1})
}

func (l storeLedger) Attempt(ctx context.Context, id int64) error {
	return l.s.DeliveryAttempt(ctx, id)
}
func (l storeLedger) Delivered(ctx context.Context, ids ...int64) error {
	return l.s.Delivered(ctx, ids...)
}

// Sent: the answer was marked delivered (a cluster's owner asks before a
// routed send it may be performing again).
func (l storeLedger) Sent(ctx context.Context, id int64) (bool, error) {
	return l.s.DeliverySent(ctx, id)
}

// Unsent: upstream's rules, a day's freshness and three attempts.
func (l storeLedger) Unsent(ctx context.Context, pl string) ([]gateway.Unsent, error) {
	rows, err := l.s.UnsentDeliveries(ctx, pl, l.s.Now().Add(-24*time.Hour), 3)
	if err != nil {
		return nil, err
	}
	out := make([]gateway.Unsent, 0, len(rows))
	for _, d := range rows {
		var r ledgerRoute
		if json.Unmarshal([]byte(d.Route), &r) != nil || r.ChatID == "" {
			continue
		}
		out = append(out, gateway.Unsent{ID: d.ID, Attempts: d.Attempts, Out: platform.Outbound{ChatID: r.ChatID, ThreadID: r.ThreadID, Text: d.Text}})
	}
	return out, nil
}
