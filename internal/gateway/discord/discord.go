// Package discord is the gateway's Discord adapter (wave2 §2.8) on discordgo:
// the gateway websocket for events, REST for everything the bot does. It
// turns Discord's events into platform.Events (DMs always, guild channels on
// a mention, threads as their own sessions, auto-threads on a mention) and
// implements platform.Adapter, ReactionAdder and ThreadRenamer.
package discord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"

	"github.com/hermes-go/hermes/internal/clock"
	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/internal/termsafe"
)

// Name is the platform's name in sources, session keys and config.
const Name = "discord"

// Intents are what the bot asks the gateway for: guilds (channels and
// threads), guild and direct messages, their content, and members (roles),
// as upstream's setup guide requires.
const Intents = discordgo.IntentsGuilds | discordgo.IntentsGuildMessages | discordgo.IntentsDirectMessages |
	discordgo.IntentMessageContent | discordgo.IntentsGuildMembers

// Options configure an Adapter. The zero value of a bool is "off": callers
// wanting upstream's defaults start from OptionsFromEnv.
type Options struct {
	Token string // the bot token, with or without the "Bot " prefix
	// BaseURL replaces https://discord.com for REST (platforms.discord.extra.
	// base_url); its /api/v9/gateway/bot names the websocket. "" is Discord.
	BaseURL        string
	RequireMention bool // guild channels answer only a mention (DISCORD_REQUIRE_MENTION)
	AutoThread     bool // a mention in a text channel opens a thread for the answer (DISCORD_AUTO_THREAD)
	// AllowedRoles are role ids whose members are authorised by the adapter
	// (DISCORD_ALLOWED_ROLES): Source.RoleAuthorized.
	AllowedRoles []string
	// FreeResponseChannels answer without a mention; NoThreadChannels never
	// auto-thread.
	FreeResponseChannels []string
	NoThreadChannels     []string
	// IgnoredChannels are never answered; AllowedChannels, when set, are the
	// only ones answered (DMs are not channels here). A thread follows its
	// parent.
	IgnoredChannels []string
	AllowedChannels []string
	// AllowBots is which messages of other bots are answered
	// (DISCORD_ALLOW_BOTS): BotsNone (the zero value), BotsMentions, BotsAll.
	AllowBots string
	// ReplyToMode is which pieces of an answer reply to the user's message
	// (DISCORD_REPLY_TO_MODE): ReplyFirst (the zero value), ReplyAll, ReplyOff.
	ReplyToMode string
	// Seen, when set, is asked about each message about to be delivered
	// (past every filter): false means it was handled already, by another
	// process of a cluster. An error delivers it anyway: a message is not
	// dropped because the database hiccupped.
	Seen func(ctx context.Context, messageID string) (fresh bool, err error)
	// Accept, when set, takes each message about to be delivered (past
	// every filter) instead of the handler: a cluster queues it for any
	// process to run (Queued), or it was queued already (Duplicate), or it is
	// to be handed to the handler here after all (Local: then Seen is asked
	// as without Accept). An error is retried with a back-off in the event
	// worker, holding the events behind it, until ctx ends.
	Accept func(ctx context.Context, ev platform.Event) (Acceptance, error)
	// CatchUp, when set, is asked at each READY what to read back: see
	// CatchUp. false reads nothing.
	CatchUp func(ctx context.Context) (CatchUp, bool)
	Logger  *slog.Logger
	Now     func() time.Time
	// ReconnectMin and ReconnectMax bound the wait between failed connects
	// (1s and 2m when zero).
	ReconnectMin, ReconnectMax time.Duration
}

// Acceptance is what Accept did with a message.
type Acceptance int

const (
	Queued    Acceptance = iota // taken: another part of the gateway runs it
	Duplicate                   // taken before (another process, a catch-up read it again): dropped
	Local                       // not taken: delivered to the handler as without Accept
)

// AllowBots values.
const (
	BotsNone     = ""
	BotsMentions = "mentions"
	BotsAll      = "all"
)

// ReplyToMode values.
const (
	ReplyFirst = ""
	ReplyAll   = "all"
	ReplyOff   = "off"
)

// stableConnection is how long a connection must last for a drop to be
// resumed at once rather than after the back-off.
const stableConnection = 10 * time.Second

// Adapter is one bot's connection to Discord.
type Adapter struct {
	transport *http.Transport
	opts      Options
	log       *slog.Logger
	now       func() time.Time
	session   *discordgo.Session

	running   atomic.Bool
	connected atomic.Bool
	botID     atomic.Value  // string, from READY
	down      chan struct{} // a disconnect happened (buffer 1)
	events    chan any      // discordgo events, in order, for the worker

	mu       sync.Mutex
	quit     chan struct{}          // closed when Run ends: handlers stop waiting
	channels map[string]channelInfo // what the bot knows of channels and threads
	botOwned map[string]bool        // threads the bot opened: answered without a mention
	pending  map[string]*prospect   // message id → the auto-thread its answer opens
	order    []string               // pending's ids, oldest first (it is bounded)
	renaming map[string]string      // thread → the name the bot is giving it
	where    *ring                  // message id → the channel it is in
	seen     *ring                  // message and interaction ids already delivered
	roles    map[string]bool
	free     map[string]bool
	noThread map[string]bool
	ignored  map[string]bool
	allowed  map[string]bool
}

// New makes an Adapter; it connects when Run is called.
func New(opts Options) (*Adapter, error) {
	token := strings.TrimSpace(opts.Token)
	if token == "Bot" || strings.HasPrefix(token, "Bot ") {
		token = strings.TrimSpace(token[len("Bot"):])
	}
	if token == "" {
		return nil, errors.New("discord: no bot token: set DISCORD_BOT_TOKEN in ~/.hermes/.env")
	}
	s, err := discordgo.New("Bot " + token)
	if err != nil {
		return nil, fmt.Errorf("discord: %w", err)
	}
	// A transport of its own, so Run can close its idle connections.
	transport := http.DefaultTransport.(*http.Transport).Clone()
	client := &http.Client{Timeout: 30 * time.Second, Transport: transport}
	if opts.BaseURL != "" {
		base, err := parseBaseURL(opts.BaseURL)
		if err != nil {
			return nil, err
		}
		client.Transport = rebase{base: base, next: transport}
	}
	s.Client = client
	s.Identify.Intents = Intents
	// The adapter owns reconnecting (so it stops with Run's context) and
	// rate-limit waits (so they end with the caller's); discordgo's state
	// cache is not used.
	s.ShouldReconnectOnError = false
	s.ShouldRetryOnRateLimit = false
	s.StateEnabled = false
	// Handlers run in the websocket reader, in order; they only enqueue.
	s.SyncEvents = true
	// discordgo prints to the process's stderr; the adapter logs what matters.
	s.LogLevel = -1

	a := &Adapter{
		transport: transport,
		opts:      opts,
		log:       opts.Logger,
		now:       opts.Now,
		session:   s,
		down:      make(chan struct{}, 1),
		events:    make(chan any, 512),
		channels:  map[string]channelInfo{},
		botOwned:  map[string]bool{},
		pending:   map[string]*prospect{},
		renaming:  map[string]string{},
		where:     newRing(4096),
		seen:      newRing(4096),
		roles:     set(opts.AllowedRoles),
		free:      set(opts.FreeResponseChannels),
		noThread:  set(opts.NoThreadChannels),
		ignored:   set(opts.IgnoredChannels),
		allowed:   set(opts.AllowedChannels),
	}
	a.addHandlers()
	switch opts.AllowBots {
	case BotsNone, BotsMentions, BotsAll:
	default:
		return nil, fmt.Errorf("discord: allow bots \"%s\": want none, mentions or all", termsafe.Line(opts.AllowBots))
	}
	switch opts.ReplyToMode {
	case ReplyFirst, ReplyAll, ReplyOff:
	default:
		return nil, fmt.Errorf("discord: reply-to mode \"%s\": want off, first or all", termsafe.Line(opts.ReplyToMode))
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.now == nil {
		a.now = clock.Now
	}
	if a.opts.ReconnectMin <= 0 {
		a.opts.ReconnectMin = time.Second
	}
	if a.opts.ReconnectMax <= 0 {
		a.opts.ReconnectMax = 2 * time.Minute
	}
	return a, nil
}

func set(ids []string) map[string]bool {
	m := make(map[string]bool, len(ids))
	for _, id := range ids {
		if id = strings.TrimSpace(id); id != "" {
			m[id] = true
		}
	}
	return m
}

// parseBaseURL checks base_url: an http(s) URL with a host.
func parseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimRight(strings.TrimSpace(raw), "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("discord: platforms.discord.extra.base_url \"%s\" is not an http(s) URL with a host (e.g. http://127.0.0.1:8080)", termsafe.Line(raw))
	}
	return u, nil
}

// rebase sends the requests discordgo addresses to https://discord.com to
// another server. discordgo's endpoints are package variables; rewriting in
// this one Session's transport points only this adapter elsewhere. A base
// ending in /api/vN replaces Discord's /api/v9; any other path is a prefix.
type rebase struct {
	base *url.URL
	next http.RoundTripper
}

func (r rebase) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host != "discord.com" {
		return r.next.RoundTrip(req)
	}
	out := req.Clone(req.Context())
	u := *req.URL
	u.Scheme, u.Host, u.RawPath = r.base.Scheme, r.base.Host, ""
	path := req.URL.Path
	if i := strings.LastIndex(r.base.Path, "/api/v"); i >= 0 && !strings.Contains(r.base.Path[i+len("/api/v"):], "/") {
		path = strings.TrimPrefix(path, "/api/v"+discordgo.APIVersion)
	}
	u.Path = r.base.Path + path
	out.URL, out.Host = &u, r.base.Host
	return r.next.RoundTrip(out)
}

// Name implements platform.Adapter.
func (a *Adapter) Name() string { return Name }

// Connected implements platform.Adapter: the gateway session is up.
func (a *Adapter) Connected() bool { return a.connected.Load() }

// Run connects, delivers events to h until ctx ends, and disconnects. A
// dropped connection is resumed (events missed meanwhile are replayed by
// Discord); a rejected token or intents end Run with the reason.
func (a *Adapter) Run(ctx context.Context, h platform.Handler) error {
	if !a.running.CompareAndSwap(false, true) {
		return errors.New("discord: Run called twice on one adapter")
	}
	defer a.running.Store(false)
	quit := make(chan struct{})
	a.mu.Lock()
	a.quit = quit
	a.mu.Unlock()
	defer close(quit)
	a.session.Dialer = &websocket.Dialer{HandshakeTimeout: 15 * time.Second, NetDialContext: closeWith(ctx)}
	workerDone := make(chan struct{})
	workCtx, stopWork := context.WithCancel(ctx)
	go func() {
		defer close(workerDone)
		a.work(workCtx, h)
	}()
	defer func() {
		stopWork()
		<-workerDone
		a.transport.CloseIdleConnections()
	}()

	wait := a.opts.ReconnectMin
	checked := false
	for {
		err := a.checkGateway(ctx, &checked)
		if err == nil {
			err = a.session.Open()
		}
		switch {
		case err == nil || errors.Is(err, discordgo.ErrWSAlreadyOpen):
			up := a.now()
			select {
			case <-ctx.Done():
				a.connected.Store(false)
				_ = a.session.Close()
				return nil
			case <-a.down:
			}
			// A connection that held resumes at once; one dropped right
			// after connecting backs off like a failed connect.
			if a.now().Sub(up) >= stableConnection {
				wait = a.opts.ReconnectMin
				a.log.Info("discord: disconnected, resuming")
				continue
			}
			a.log.Warn("discord: dropped right after connecting, waiting", "in", wait)
		case fatal(err) != nil:
			return fatal(err)
		default:
			a.log.Warn("discord: connect failed, retrying", "err", termsafe.Line(err.Error()), "in", wait)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = min(wait*2, a.opts.ReconnectMax)
	}
}

// checkGateway asks /gateway/bot once per Run, before the first connect:
// a wrong token or base_url then fails at once with what to fix, and the
// log shows how many session starts Discord still allows today.
func (a *Adapter) checkGateway(ctx context.Context, checked *bool) error {
	if *checked {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var gb *discordgo.GatewayBotResponse
	err := a.withRetry(ctx, func(o ...discordgo.RequestOption) (err error) {
		gb, err = a.session.GatewayBot(o...)
		return err
	})
	var rest *discordgo.RESTError
	if errors.As(err, &rest) && rest.Response != nil && rest.Response.StatusCode == http.StatusNotFound {
		return &fatalError{fmt.Errorf("discord: %w: %s has no /api/v9/gateway/bot (404): check platforms.discord.extra.base_url", ErrNotDiscord, termsafe.Line(a.apiBase()))}
	}
	if err != nil {
		return err
	}
	*checked = true
	a.log.Info("discord: gateway found", "url", termsafe.Line(gb.URL), "shards", gb.Shards,
		"session_starts_left", gb.SessionStartLimit.Remaining)
	return nil
}

func (a *Adapter) apiBase() string {
	if a.opts.BaseURL == "" {
		return "https://discord.com"
	}
	return a.opts.BaseURL
}

// Run's errors for a configuration Discord will never accept: the gateway
// exits 78 (fix the configuration) on any of them, not 75 (restart me).
var (
	ErrTokenRefused   = errors.New("the bot token was rejected")
	ErrIntentsRefused = errors.New("the gateway refused the intents")
	ErrNotDiscord     = errors.New("the base URL does not serve the Discord API")
)

type fatalError struct{ err error }

func (e *fatalError) Error() string { return e.err.Error() }
func (e *fatalError) Unwrap() error { return e.err }

// closeWith dials connections that close when ctx ends: discordgo's reads
// have no deadline, and this is what unblocks them on shutdown.
func closeWith(ctx context.Context) func(context.Context, string, string) (net.Conn, error) {
	var d net.Dialer
	return func(dialCtx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(dialCtx, network, addr)
		if err != nil {
			return nil, err
		}
		return &ctxConn{Conn: c, stop: context.AfterFunc(ctx, func() { c.Close() })}, nil
	}
}

type ctxConn struct {
	net.Conn
	stop func() bool
}

func (c *ctxConn) Close() error {
	c.stop()
	return c.Conn.Close()
}

// fatal is the error that makes retrying pointless (a bad token, intents the
// bot may not have), with what to do; nil for anything worth retrying.
func fatal(err error) error {
	var fe *fatalError
	if errors.As(err, &fe) {
		return fe
	}
	var rest *discordgo.RESTError
	if errors.As(err, &rest) && rest.Response != nil && rest.Response.StatusCode == http.StatusUnauthorized {
		return fmt.Errorf("discord: %w (401): check DISCORD_BOT_TOKEN", ErrTokenRefused)
	}
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		switch ce.Code {
		case 4004:
			return fmt.Errorf("discord: %w by the gateway (4004): check DISCORD_BOT_TOKEN", ErrTokenRefused)
		case 4013, 4014:
			return fmt.Errorf("discord: %w (%d): enable the Message Content and Server Members intents for the bot in the Discord Developer Portal", ErrIntentsRefused, ce.Code)
		}
	}
	return nil
}

// ring remembers the last n keys (and a value each), forgetting the oldest.
type ring struct {
	keys []string
	next int
	vals map[string]string
}

func newRing(n int) *ring { return &ring{keys: make([]string, n), vals: make(map[string]string, n)} }

func (r *ring) put(k, v string) {
	if _, ok := r.vals[k]; ok {
		r.vals[k] = v
		return
	}
	if old := r.keys[r.next]; old != "" {
		delete(r.vals, old)
	}
	r.keys[r.next] = k
	r.next = (r.next + 1) % len(r.keys)
	r.vals[k] = v
}

func (r *ring) get(k string) (string, bool) {
	v, ok := r.vals[k]
	return v, ok
}
