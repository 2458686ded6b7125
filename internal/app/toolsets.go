package app

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hermes-go/hermes/internal/tools"
)

// The tool set of a command: which toolsets the model and plugins may call.
// In a chat it is --toolsets (else config.yaml `toolsets:`); outside one
// (`hermes tools call`, a plugin CLI command) it is config.yaml's. Every call
// through the host's pipeline is held to it, so ctx.dispatch_tool cannot
// reach a tool the model was not given.

// toolsetChoice is one choice of toolsets and where it came from.
type toolsetChoice struct {
	names []string // nil: every toolset
	from  string   // "--toolsets" or "config.yaml toolsets:", for messages
}

func (c *toolsetChoice) allows(t *tools.Tool) bool {
	return c == nil || c.names == nil || slices.Contains(c.names, t.Toolset)
}

// parseToolsets reads --toolsets (comma-separated; "" when not given) or,
// without it, config.yaml's `toolsets:` list. No names or "all" is every
// toolset; a flag given, even empty of names, wins over the config.
func parseToolsets(flag string, fromConfig any) *toolsetChoice {
	c := &toolsetChoice{from: "config.yaml toolsets:"}
	var raw []string
	switch v := fromConfig.(type) {
	case []any:
		for _, x := range v {
			if s, ok := x.(string); ok {
				raw = append(raw, s)
			}
		}
	case string: // `toolsets: file, terminal`
		raw = strings.Split(v, ",")
	}
	if flag != "" {
		c.from, raw = "--toolsets", strings.Split(flag, ",")
	}
	for _, n := range raw {
		if n = strings.TrimSpace(n); n != "" {
			c.names = append(c.names, n)
		}
	}
	if slices.Contains(c.names, "all") {
		c.names = nil
	}
	return c
}

// unknown returns the names no registered tool belongs to.
func (c *toolsetChoice) unknown(known []string) []string {
	var out []string
	for _, n := range c.names {
		if !slices.Contains(known, n) {
			out = append(out, n)
		}
	}
	return out
}

// toolsets lists the toolsets of the registered tools, sorted.
func toolsets(list []*tools.Tool) []string {
	seen := map[string]bool{}
	for _, t := range list {
		seen[t.Toolset] = true
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// toolGate holds the command's current choice. A chat replaces it for its
// lifetime; until something does, config.yaml's is read on first use.
type toolGate struct {
	cur        atomic.Pointer[toolsetChoice]
	configOnce sync.Once
	config     *toolsetChoice
	load       func() any // config.yaml's `toolsets:` value
}

func (g *toolGate) choice() *toolsetChoice {
	if c := g.cur.Load(); c != nil {
		return c
	}
	g.configOnce.Do(func() { g.config = parseToolsets("", g.load()) })
	return g.config
}

func (g *toolGate) allows(t *tools.Tool) bool { return g.choice().allows(t) }

// set makes c the choice until the returned func puts back the one before.
func (g *toolGate) set(c *toolsetChoice) (restore func()) {
	prev := g.cur.Swap(c)
	return func() { g.cur.Store(prev) }
}

// configToolsets reads `toolsets:` from config.yaml; an unreadable file enables
// nothing rather than everything (the command reports the file elsewhere).
func (h *Host) configToolsets() any {
	doc, err := h.Store().Load()
	if err != nil {
		return []any{}
	}
	v, _ := doc.Get("toolsets")
	return v
}

// chooseToolsets makes --toolsets (flag, "" when not given) or config.yaml's
// `toolsets:` the chat's tool set. A flag naming a toolset no tool belongs to
// is a usage error listing those there are; such a name in config.yaml is a
// warning (a plugin providing it may be disabled or failing for now).
func (h *Host) chooseToolsets(flag string, fromConfig any) (restore func(), err error) {
	c := parseToolsets(flag, fromConfig)
	known := toolsets(h.Registry.Tools().List())
	known = mergeSorted(known, h.mcpToolsets()) // configured servers not connected for this choice
	if bad := c.unknown(known); len(bad) > 0 {
		msg := fmt.Sprintf("%s names %s, which no tool belongs to; the toolsets are: %s (or all)",
			c.from, quoteList(bad), strings.Join(known, ", "))
		if c.from == "--toolsets" {
			return nil, FlagErrorf("%s", msg)
		}
		h.f.Warn(msg)
	}
	return h.tools.set(c), nil
}

// ToolDisabled says why t is outside the command's tool set, "" when it is in.
func (h *Host) ToolDisabled(t *tools.Tool) string {
	c := h.tools.choice()
	if c.allows(t) {
		return ""
	}
	return fmt.Sprintf("tool %q is in toolset %q, which %s does not enable (it enables: %s); add %s there, or use all",
		t.Name, t.Toolset, c.from, strings.Join(c.names, ", "), t.Toolset)
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// hostTools runs ctx.dispatch_tool calls through the host's pipeline, so they
// are held to the tool set in force when they arrive.
type hostTools struct{ h *Host }

func (r hostTools) Run(ctx context.Context, c tools.Call) tools.Outcome {
	return r.h.Pipeline().Run(ctx, c)
}
