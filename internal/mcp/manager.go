package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hermes-go/hermes/internal/clock"
	"github.com/hermes-go/hermes/internal/reaper"
	"github.com/hermes-go/hermes/internal/tools"
)

// Reconnect rules (wave2 §3.3).
const (
	firstConnectRetries = 3
	reconnectRetries    = 5
	maxBackoff          = 60 * time.Second
	parkInterval        = 300 * time.Second
)

// Options configure a Manager.
type Options struct {
	Config  *Config
	Reaper  *reaper.Reaper
	Environ []string // hermes' environment; stdio servers get only the allowlist of it
	// Stderr receives each line a stdio server writes to stderr.
	Stderr   func(server, line string)
	Logger   *slog.Logger
	Approver tools.Approver // nil: write-capable tools of untrusted servers are refused
	Warn     func(msg string)
	Version  string
	Now      func() time.Time
	// Sleep waits between connect attempts; tests make it instant.
	Sleep func(ctx context.Context, d time.Duration) error
	// BaseBackoff is the first wait between connect attempts (default 1 s).
	BaseBackoff     time.Duration
	BreakerCooldown time.Duration // default 60 s
	ParkInterval    time.Duration // default 300 s
	// ServerChanged, when set, is told (on its own goroutine, never under a
	// lock) that a server was parked (up false: its tools should leave the
	// model's list) or that the background probe of a parked server brought
	// it back (up true). Long-lived commands (chat, mcp serve) set it; with
	// it nil a parked server is only tried again when called.
	ServerChanged func(server string, up bool)
}

// Manager owns one connection per configured server, made on first use and
// shared by every caller. It implements hostapi.MCPCaller.
type Manager struct {
	opts Options
	mu   sync.Mutex
	cfg  *Config
	conn map[string]*conn
	// life ends the background probes of this configuration (Close, Reload).
	life context.Context
	stop context.CancelFunc
}

// New returns a Manager over opts.Config; nothing connects until asked.
func New(opts Options) *Manager {
	if opts.Config == nil {
		opts.Config = &Config{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Warn == nil {
		opts.Warn = func(string) {}
	}
	if opts.Stderr == nil {
		opts.Stderr = func(string, string) {}
	}
	if opts.Now == nil {
		opts.Now = clock.Now
	}
	if opts.Sleep == nil {
		opts.Sleep = sleepCtx
	}
	if opts.BaseBackoff == 0 {
		opts.BaseBackoff = time.Second
	}
	if opts.BreakerCooldown == 0 {
		opts.BreakerCooldown = breakerCooldown
	}
	if opts.ParkInterval == 0 {
		opts.ParkInterval = parkInterval
	}
	m := &Manager{opts: opts}
	m.setConfig(opts.Config)
	return m
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (m *Manager) setConfig(cfg *Config) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cfg = cfg
	m.life, m.stop = context.WithCancel(context.Background())
	m.conn = map[string]*conn{}
	for _, s := range cfg.Servers {
		m.conn[s.Name] = &conn{m: m, srv: s, br: &breaker{now: m.opts.Now, cooldown: m.opts.BreakerCooldown}}
	}
}

// Reload closes every connection and takes cfg as the servers from now on
// (/reload-mcp); the next use connects again.
func (m *Manager) Reload(cfg *Config) {
	m.Close()
	m.setConfig(cfg)
}

// Config is the configuration in force.
func (m *Manager) Config() *Config {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cfg
}

// Close ends every connection and the servers' processes.
func (m *Manager) Close() {
	m.mu.Lock()
	m.stop()
	conns := make([]*conn, 0, len(m.conn))
	for _, c := range m.conn {
		conns = append(conns, c)
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(c.close)
	}
	wg.Wait()
}

func (m *Manager) lookup(server string) (*conn, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.conn[server]; ok {
		return c, nil
	}
	names := make([]string, 0, len(m.conn))
	for n := range m.conn {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return nil, fmt.Errorf("no MCP server is configured, so MCP server '%s' cannot be called: add one with "+
			"`hermes mcp add NAME -- CMD ARGS…` (stdio) or `hermes mcp add NAME --url URL` (HTTP)", server)
	}
	return nil, fmt.Errorf("unknown MCP server %q; the configured servers are: %s", server, strings.Join(names, ", "))
}

// conn is one server's connection and what it told us.
type conn struct {
	m   *Manager
	srv *ServerConfig
	br  *breaker

	mu          sync.Mutex // held while connecting
	session     *mcp.ClientSession
	tools       []*mcp.Tool
	caps        *mcp.ServerCapabilities
	everUp      bool
	lastErr     error
	parkedUntil time.Time
	probing     bool // parked, and a background probe is waiting to try again
	probeGen    int  // which park the running probe belongs to
	connectTime time.Duration
	generation  int
}

// connectMode is how hard a connect tries.
type connectMode uint8

const (
	modeCall  connectMode = iota // a call: the retries, then park (a parked server fails at once)
	modeProbe                    // the background probe: the retries, even while parked
	modeQuick                    // starting up: one attempt; the retries go on in the background
	modeOnce                     // a diagnosis (hermes mcp test): one attempt, its error as it is
)

// ensure returns the live session, connecting (with retries) when there is none.
func (c *conn) ensure(ctx context.Context) (*mcp.ClientSession, error) {
	return c.connectAs(ctx, modeCall)
}

func (c *conn) connectAs(ctx context.Context, mode connectMode) (*mcp.ClientSession, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.session != nil {
		return c.session, nil
	}
	if !c.srv.Enabled {
		return nil, fmt.Errorf("MCP server %q is disabled (enabled: false in config.yaml)", c.srv.Name)
	}
	now := c.m.opts.Now()
	if mode != modeProbe && now.Before(c.parkedUntil) {
		return nil, fmt.Errorf("MCP server %q is parked after repeated connect failures (next try in ~%ds): %w",
			c.srv.Name, int(c.parkedUntil.Sub(now).Seconds())+1, c.lastErr)
	}
	retries := firstConnectRetries
	if c.everUp {
		retries = reconnectRetries
	}
	if mode == modeQuick || mode == modeOnce {
		retries = 0
	}
	backoff := c.m.opts.BaseBackoff
	var err error
	for attempt := 0; attempt <= retries; attempt++ {
		if attempt > 0 {
			if serr := c.m.opts.Sleep(ctx, backoff); serr != nil {
				return nil, fmt.Errorf("connect to MCP server %q: %w", c.srv.Name, serr)
			}
			backoff = min(backoff*2, maxBackoff)
		}
		if err = c.connect(ctx); err == nil {
			c.parkedUntil = time.Time{}
			c.unpark()
			return c.session, nil
		}
		if permanent(err) || ctx.Err() != nil {
			break
		}
	}
	c.lastErr = err
	switch {
	case ctx.Err() != nil:
	case mode == modeQuick:
		c.retryInBackground(!permanent(err))
	case mode == modeCall:
		c.parkedUntil = c.m.opts.Now().Add(c.m.opts.ParkInterval)
		c.park()
	case mode == modeProbe:
		c.parkedUntil = c.m.opts.Now().Add(c.m.opts.ParkInterval)
	}
	return nil, err
}

// permanentError marks a failure retrying cannot fix (the command is missing).
type permanentError struct{ error }

func (e permanentError) Unwrap() error { return e.error }

func permanent(err error) bool {
	var p permanentError
	return errors.As(err, &p)
}

func (c *conn) transport() (mcp.Transport, error) {
	if c.srv.Transport == "http" {
		hc := &http.Client{Transport: headerTransport{headers: c.srv.Headers, base: http.DefaultTransport}}
		return &mcp.StreamableClientTransport{Endpoint: c.srv.URL, HTTPClient: hc, DisableStandaloneSSE: true}, nil
	}
	if _, err := lookPath(c.srv.Command, c.srv.Cwd, c.m.opts.Environ); err != nil {
		return nil, permanentError{fmt.Errorf("MCP server %q: %w", c.srv.Name, err)}
	}
	name := c.srv.Name
	return &stdioTransport{srv: c.srv, reaper: c.m.opts.Reaper, environ: c.m.opts.Environ,
		log: func(line string) { c.m.opts.Stderr(name, line) }}, nil
}

// connect makes one attempt, bounded by connect_timeout, and lists the tools.
func (c *conn) connect(ctx context.Context) error {
	t, err := c.transport()
	if err != nil {
		return err
	}
	start := c.m.opts.Now()
	cctx, cancel := context.WithTimeout(ctx, c.srv.ConnectTimeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "hermes", Version: c.m.opts.Version}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { c.refetch() },
	})
	cs, err := client.Connect(cctx, t, nil)
	if err != nil {
		if st, ok := t.(*stdioTransport); ok {
			if note := st.exitNote(); note != "" {
				err = fmt.Errorf("%w; %s", err, note)
			}
		}
		return c.connectError(cctx, err)
	}
	caps := &mcp.ServerCapabilities{}
	if ir := cs.InitializeResult(); ir != nil && ir.Capabilities != nil {
		caps = ir.Capabilities
	}
	var list []*mcp.Tool
	if caps.Tools != nil {
		if list, err = listTools(cctx, cs); err != nil {
			_ = cs.Close()
			return c.connectError(cctx, err)
		}
	}
	c.session, c.tools, c.caps, c.everUp = cs, list, caps, true
	c.connectTime = c.m.opts.Now().Sub(start)
	c.generation++
	gen := c.generation
	go func() {
		_ = cs.Wait()
		c.mu.Lock()
		if c.generation == gen {
			c.session = nil // the next call reconnects
		}
		c.mu.Unlock()
	}()
	return nil
}

func (c *conn) connectError(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("MCP server %q did not finish connecting within %s (connect_timeout in config.yaml): %w",
			c.srv.Name, c.srv.ConnectTimeout, err)
	}
	return fmt.Errorf("connect to MCP server %q: %w", c.srv.Name, err)
}

// maxTools bounds a listing (upstream caps pagination at 50 pages).
const maxTools = 5000

func listTools(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
	var out []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("list tools: %w", err)
		}
		if out = append(out, t); len(out) >= maxTools {
			break
		}
	}
	return out, nil
}

func (c *conn) refetch() {
	c.mu.Lock()
	cs := c.session
	c.mu.Unlock()
	if cs == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.srv.ConnectTimeout)
	defer cancel()
	if list, err := listTools(ctx, cs); err == nil {
		c.mu.Lock()
		c.tools = list
		c.mu.Unlock()
	}
}

// drop forgets cs if it is still the live session and closes it.
func (c *conn) drop(cs *mcp.ClientSession) {
	c.mu.Lock()
	live := c.session == cs
	if live {
		c.session = nil
		c.generation++
	}
	c.mu.Unlock()
	if live {
		_ = cs.Close()
	}
}

func (c *conn) close() {
	c.mu.Lock()
	cs := c.session
	c.session = nil
	c.generation++
	c.mu.Unlock()
	if cs != nil {
		_ = cs.Close()
	}
}

func (c *conn) readOnly(tool string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range c.tools {
		if t.Name == tool {
			return t.Annotations != nil && t.Annotations.ReadOnlyHint
		}
	}
	return false
}

// headerTransport adds the configured headers (secrets) to every request.
type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}
