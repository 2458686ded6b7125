package mcp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hermes-go/hermes/internal/tools"
)

// CallTool calls tool on server and returns the tool-result JSON (see
// ResultJSON). Order: breaker, connection, trust gate, call. timeout 0 is
// the server's timeout: setting. It implements hostapi.MCPCaller.
func (m *Manager) CallTool(ctx context.Context, server, tool string, args map[string]any, timeout time.Duration) (string, error) {
	c, err := m.lookup(server)
	if err != nil {
		return "", err
	}
	if ok, msg := c.br.allow(server); !ok {
		return "", errors.New(msg)
	}
	cs, err := c.ensure(ctx)
	if err != nil {
		c.br.record(false, false)
		return "", err
	}
	if err := m.trustGate(ctx, c, tool, args); err != nil {
		c.br.record(true, false) // not the server's failure; a probe let through is released
		return "", err
	}
	if timeout <= 0 {
		timeout = c.srv.Timeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if args == nil {
		args = map[string]any{}
	}
	res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		c.br.record(false, false)
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) && cctx.Err() == nil {
			c.drop(cs) // the connection broke: the next call starts it again (this one is never replayed)
		}
		if errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			return "", fmt.Errorf("MCP server %q did not answer %s within %s (timeout in config.yaml)", server, tool, timeout)
		}
		return "", fmt.Errorf("MCP server %q, tool %s: %s", server, tool, Redact(err.Error()))
	}
	c.br.record(!res.IsError, true)
	return ResultJSON(res), nil
}

// ErrNotApproved is the refusal of a write-capable tool on an untrusted server.
var ErrNotApproved = errors.New("not approved")

// trustGate asks a human before a tool not marked readOnlyHint: true runs on
// an untrusted server, with upstream's refusal texts.
func (m *Manager) trustGate(ctx context.Context, c *conn, tool string, args map[string]any) error {
	if c.srv.Trust != TrustUntrusted || c.readOnly(tool) {
		return nil
	}
	server := c.srv.Name
	if m.opts.Approver == nil {
		return fmt.Errorf("the write-capable MCP tool '%s' on untrusted server '%s' was blocked: the approval system was unavailable (fail-closed). "+
			"Run hermes in a terminal to be asked, or set trust: full for this server in config.yaml: %w", tool, server, ErrNotApproved)
	}
	name, _ := ToolName(server, tool)
	choice, err := m.opts.Approver.Approve(ctx, tools.ApprovalRequest{
		ToolName: name, Args: args, RuleKey: "mcp-trust/" + server,
		Message: fmt.Sprintf("MCP server '%s' is untrusted and '%s' is not marked read-only", server, tool),
		Origin:  tools.OriginOf(ctx),
	})
	if msg, ok := tools.BlockMessage(err); ok {
		return fmt.Errorf("the write-capable MCP tool '%s' on untrusted server '%s' was blocked: %s: %w", tool, server, msg, ErrNotApproved)
	}
	if err != nil {
		return fmt.Errorf("the write-capable MCP tool '%s' on untrusted server '%s' was blocked: the approval system was unavailable (fail-closed): %w", tool, server, ErrNotApproved)
	}
	if !choice.Approves() {
		return fmt.Errorf("The user did not approve running write-capable MCP tool '%s' on untrusted server '%s'. "+
			"The command was NOT run. Do not retry without explicit user direction: %w", tool, server, ErrNotApproved)
	}
	return nil
}

// Status is what `hermes mcp list` and `test` show of one server.
type Status struct {
	Name        string        `json:"name"`
	Transport   string        `json:"transport"`
	Enabled     bool          `json:"enabled"`
	Trust       string        `json:"trust"`
	State       string        `json:"state"` // not connected, connecting, connected, failed, disabled, parked
	Tools       int           `json:"tools"` // -1: not known without connecting
	Breaker     string        `json:"breaker"`
	Error       string        `json:"error,omitempty"`
	ConnectTime time.Duration `json:"-"`
}

// Statuses reports every server without connecting.
func (m *Manager) Statuses() []Status {
	cfg := m.Config()
	out := make([]Status, 0, len(cfg.Servers))
	for _, s := range cfg.Servers {
		c, err := m.lookup(s.Name)
		if err != nil {
			continue
		}
		out = append(out, c.status())
	}
	return out
}

func (c *conn) status() Status {
	st := Status{Name: c.srv.Name, Transport: c.srv.Transport, Enabled: c.srv.Enabled, Trust: c.srv.Trust,
		State: "not connected", Tools: -1, Breaker: c.br.state()}
	if !c.mu.TryLock() {
		st.State = "connecting" // c.mu is held for a whole connect: never wait behind one
		return st
	}
	defer c.mu.Unlock()
	st.ConnectTime = c.connectTime
	switch {
	case !c.srv.Enabled:
		st.State = "disabled"
	case c.session != nil:
		st.State, st.Tools = "connected", len(c.tools)
	case c.lastErr != nil && c.m.opts.Now().Before(c.parkedUntil):
		st.State, st.Error = "parked", Redact(c.lastErr.Error())
	case c.lastErr != nil:
		st.State, st.Error = "failed", Redact(c.lastErr.Error())
	}
	return st
}

// Connect connects server now, in one attempt (hermes mcp test: a diagnosis
// reports the first failure rather than retrying it for seconds).
func (m *Manager) Connect(ctx context.Context, server string) (Status, []*mcp.Tool, error) {
	c, err := m.lookup(server)
	if err != nil {
		return Status{}, nil, err
	}
	if _, err := c.connectAs(ctx, modeOnce); err != nil {
		return c.status(), nil, err
	}
	c.mu.Lock()
	list := c.tools
	c.mu.Unlock()
	return c.status(), list, nil
}

// Ping measures one round trip to a connected server.
func (m *Manager) Ping(ctx context.Context, server string) (time.Duration, error) {
	c, err := m.lookup(server)
	if err != nil {
		return 0, err
	}
	cs, err := c.ensure(ctx)
	if err != nil {
		return 0, err
	}
	start := m.opts.Now()
	if err := cs.Ping(ctx, nil); err != nil {
		return 0, fmt.Errorf("ping MCP server %q: %w", server, err)
	}
	return m.opts.Now().Sub(start), nil
}

// ConnectAll connects every enabled server in parallel; each is bounded by its
// own connect_timeout, so a slow or dead one delays none of the others. The
// failures are returned by server name.
func (m *Manager) ConnectAll(ctx context.Context, want func(server string) bool) map[string]error {
	cfg := m.Config()
	var mu sync.Mutex
	errs := map[string]error{}
	var wg sync.WaitGroup
	for _, s := range cfg.Servers {
		if !s.Enabled || want != nil && !want(s.Name) {
			continue
		}
		c, err := m.lookup(s.Name)
		if err != nil {
			continue
		}
		mode := modeCall
		if m.opts.ServerChanged != nil {
			mode = modeQuick // the retries go on in the background and report a success
		}
		wg.Go(func() {
			if _, err := c.connectAs(ctx, mode); err != nil {
				mu.Lock()
				errs[s.Name] = err
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errs
}
