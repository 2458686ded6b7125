package app

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/mcp"
	"github.com/hermes-go/hermes/internal/termsafe"
	"github.com/hermes-go/hermes/internal/tools"
)

// The MCP client of one command: built on first use from config.yaml's
// mcp_servers, shared by the model's mcp__* tools and every plugin's
// ctx.call_mcp (hostapi.Options.MCP is lazyMCP over it), closed with the host.

type hostMCP struct {
	once sync.Once
	m    *mcp.Manager
	err  error
	mu   sync.Mutex
	reg  []string // servers whose tools are in the registry
	// watch: this command lives on (chat), so servers that fail are retried
	// in the background and their tools follow their state (mcpServerChanged).
	watch bool
}

// loadMCPConfig reads mcp_servers (and mcp.servers) with ${VAR} from .env,
// then the environment.
func (h *Host) loadMCPConfig() (*mcp.Config, error) {
	doc, err := h.Store().Load()
	if err != nil {
		return nil, err
	}
	dotenv, err := config.ReadDotenv(h.home.EnvPath())
	if err != nil {
		return nil, err
	}
	x := mcp.Expander{Dotenv: dotenv, Env: h.f.Env, Home: h.f.Env("HOME"), Cwd: h.f.Cwd}
	cfg, err := mcp.Parse(doc.Map(), x)
	if err != nil {
		return nil, Failf("Error: %v", err)
	}
	h.addPortableServers(cfg, x)
	return cfg, nil
}

// addPortableServers adds the mcp.json servers of the enabled portable
// packages, each as "<skill namespace>__<server>" (reference §2.3). A name
// config.yaml already uses keeps the config.yaml server. ${VAR} references
// resolve as in config.yaml (${PLUGIN_ROOT} is the package directory).
func (h *Host) addPortableServers(cfg *mcp.Config, x mcp.Expander) {
	pkgs, warns := h.m.PortableServers()
	cfg.Warnings = append(cfg.Warnings, warns...)
	for _, pkg := range pkgs {
		for _, ps := range pkg.Servers {
			name := pkg.Namespace + "__" + ps.Name
			expand := func(v string) string {
				out, missing := x.Expand(v)
				for _, n := range missing {
					cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("plugin %s: mcp.json server %s uses ${%s}, which is not set in .env or the environment; kept as written", pkg.Plugin, ps.Name, n))
				}
				return out
			}
			ps.Command, ps.Cwd, ps.URL = expand(ps.Command), expand(ps.Cwd), expand(ps.URL)
			for i := range ps.Args {
				ps.Args[i] = expand(ps.Args[i])
			}
			for k, v := range ps.Env {
				ps.Env[k] = expand(v)
			}
			for k, v := range ps.Headers {
				ps.Headers[k] = expand(v)
			}
			if _, taken := cfg.Lookup(name); taken {
				cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("plugin %s: MCP server %s is also in config.yaml; using config.yaml's", pkg.Plugin, name))
				continue
			}
			s := &mcp.ServerConfig{Name: name, Command: ps.Command, Args: ps.Args, Env: ps.Env, Cwd: ps.Cwd,
				URL: ps.URL, Headers: ps.Headers, Transport: "stdio", Timeout: mcp.DefaultTimeout,
				ConnectTimeout: mcp.DefaultConnectTimeout, Enabled: true, Trust: mcp.TrustFull, Resources: true, Prompts: true}
			if ps.Type == "streamable-http" {
				s.Transport = "http"
			}
			cfg.Servers = append(cfg.Servers, s)
		}
	}
	sort.Slice(cfg.Servers, func(i, j int) bool { return cfg.Servers[i].Name < cfg.Servers[j].Name })
}

// MCP is the command's MCP client; the config is read on first use, nothing
// connects until a server is used.
func (h *Host) MCP() (*mcp.Manager, error) {
	h.mcp.once.Do(func() {
		cfg, err := h.loadMCPConfig()
		if err != nil {
			h.mcp.err = err
			return
		}
		for _, w := range cfg.Warnings {
			h.f.Warn(w)
		}
		opts := mcp.Options{Config: cfg, Reaper: h.f.procs, Environ: h.f.environ(), Logger: h.f.Logger(),
			Warn: h.f.Warn, Version: h.f.Version, Now: h.f.Now,
			Stderr: func(server, line string) { h.f.Logs().Append("mcp:"+server, "stderr", termsafe.Line(line)) }}
		if h.Approver != nil {
			opts.Approver = h.Approver
		}
		if h.mcp.watch {
			opts.ServerChanged = h.mcpServerChanged
		}
		h.mcp.m = mcp.New(opts)
	})
	return h.mcp.m, h.mcp.err
}

func (h *Host) closeMCP() {
	if h.mcp.m != nil {
		h.mcp.m.Close()
	}
}

// OfferMCPTools puts every configured MCP server's tools in the registry, as
// chat does: `hermes tools call mcp__fs__read_file` runs the model's tool.
func (h *Host) OfferMCPTools(ctx context.Context) error { return h.registerMCPTools(ctx, nil) }

// registerMCPTools connects the servers whose toolset want allows (all at
// once, none waiting on another) and puts their tools in the registry.
func (h *Host) registerMCPTools(ctx context.Context, want *toolsetChoice) error {
	m, err := h.MCP()
	if err != nil {
		return err
	}
	list, warns := m.ModelTools(ctx, func(server string) bool {
		return want.allows(&tools.Tool{Toolset: mcp.Toolset(server)})
	})
	for _, w := range warns {
		h.f.Warn(w)
	}
	h.mcp.mu.Lock()
	defer h.mcp.mu.Unlock()
	seen := map[string]bool{}
	for _, t := range list {
		if err := h.Registry.Tools().Register(t, false); err != nil {
			h.f.Warn(fmt.Sprintf("MCP tool %s not offered: %v", t.Name, err))
			continue
		}
		if src := t.Source; !seen[src] {
			seen[src] = true
			h.mcp.reg = append(h.mcp.reg, src)
		}
	}
	return nil
}

// mcpServerChanged keeps the registry in step with a parked server: its
// tools leave when it is parked and return (within the tool set chosen)
// when its background probe or a call brings it back.
func (h *Host) mcpServerChanged(server string, up bool) {
	src := mcp.Source(server)
	h.mcp.mu.Lock()
	defer h.mcp.mu.Unlock()
	if !up {
		if i := slices.Index(h.mcp.reg, src); i >= 0 {
			h.Registry.Tools().RemoveSource(src)
			h.mcp.reg = slices.Delete(h.mcp.reg, i, i+1)
			h.f.Warn(fmt.Sprintf("MCP server %q stopped answering; its tools are withdrawn and it is tried again every 5 minutes (/reload-mcp to try now)", termsafe.Line(server)))
		}
		h.f.Logger().Info("mcp server parked", "server", server)
		return
	}
	if slices.Contains(h.mcp.reg, src) {
		return
	}
	list, warns := h.mcp.m.ServerModelTools(server)
	for _, w := range warns {
		h.f.Logger().Warn(w)
	}
	choice, n := h.tools.choice(), 0
	for _, t := range list {
		if !choice.allows(t) {
			continue
		}
		if err := h.Registry.Tools().Register(t, false); err == nil {
			n++
		}
	}
	if n > 0 {
		h.mcp.reg = append(h.mcp.reg, src)
		h.f.Warn(fmt.Sprintf("MCP server %q answers again; its %d tool(s) are offered", termsafe.Line(server), n))
	}
	h.f.Logger().Info("mcp server back", "server", server, "tools", n)
}

// ReloadMCP re-reads the MCP config, closes every connection and registers
// the servers' tools again (/reload-mcp). It reports the servers now offering tools.
func (h *Host) ReloadMCP(ctx context.Context) (int, error) {
	m, err := h.MCP()
	if err != nil {
		return 0, err
	}
	cfg, err := h.loadMCPConfig()
	if err != nil {
		return 0, err
	}
	for _, w := range cfg.Warnings {
		h.f.Warn(w)
	}
	h.mcp.mu.Lock()
	for _, src := range h.mcp.reg {
		h.Registry.Tools().RemoveSource(src)
	}
	h.mcp.reg = nil
	h.mcp.mu.Unlock()
	m.Reload(cfg)
	if err := h.registerMCPTools(ctx, h.tools.choice()); err != nil {
		return 0, err
	}
	h.mcp.mu.Lock()
	defer h.mcp.mu.Unlock()
	return len(h.mcp.reg), nil
}

// mcpToolsets are the toolsets of the enabled MCP servers in config.yaml.
func (h *Host) mcpToolsets() []string {
	m, err := h.MCP()
	if err != nil {
		return nil
	}
	var out []string
	for _, s := range m.Config().Servers {
		if s.Enabled {
			out = append(out, mcp.Toolset(s.Name))
		}
	}
	return out
}

func mergeSorted(a, b []string) []string {
	out := append([]string(nil), a...)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}

// lazyMCP is ctx.call_mcp's caller: the host's MCP client, built on the first call.
type lazyMCP struct{ h *Host }

func (l lazyMCP) CallTool(ctx context.Context, server, tool string, args map[string]any, timeout time.Duration) (string, error) {
	m, err := l.h.MCP()
	if err != nil {
		return "", err
	}
	return m.CallTool(ctx, server, tool, args, timeout)
}

// ReloadMCP is /reload-mcp: the MCP config read again, every server reconnected.
func (c *Chat) ReloadMCP(ctx context.Context) (int, error) { return c.h.ReloadMCP(ctx) }
