package mcp

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hermes-go/hermes/internal/tools"
)

// Source is the registry source of a server's tools.
func Source(server string) string { return "mcp:" + server }

// ModelTools connects every enabled server (in parallel) and returns their
// tools for the registry: mcp__<server>__<tool> in toolset mcp-<server>, plus
// the resource and prompt helpers a server advertises and its config allows.
// A server that fails to connect or a tool with an unusable schema is a
// warning; the rest are kept.
func (m *Manager) ModelTools(ctx context.Context, want func(server string) bool) (list []*tools.Tool, warnings []string) {
	if want == nil {
		want = func(string) bool { return true }
	}
	later := ""
	if m.opts.ServerChanged != nil {
		later = " (it is tried again in the background; its tools are offered when it answers)"
	}
	for name, err := range m.ConnectAll(ctx, want) {
		warnings = append(warnings, fmt.Sprintf("MCP server %q is not available; its tools are not offered%s: %s", name, later, Redact(err.Error())))
	}
	for _, s := range m.Config().Servers {
		if !s.Enabled || !want(s.Name) {
			continue
		}
		got, warns := m.ServerModelTools(s.Name)
		list = append(list, got...)
		warnings = append(warnings, warns...)
	}
	return list, warnings
}

// ServerModelTools is ModelTools of one server that is connected now; it
// does not connect (a parked server's probe brings it back).
func (m *Manager) ServerModelTools(server string) (list []*tools.Tool, warnings []string) {
	c, err := m.lookup(server)
	if err != nil || !c.srv.Enabled {
		return nil, nil
	}
	if !c.mu.TryLock() {
		return nil, nil // connecting (retries in the background hold c.mu): not up yet
	}
	up, mcpTools, caps := c.session != nil, c.tools, c.caps
	c.mu.Unlock()
	if !up {
		return nil, nil
	}
	return m.serverTools(c.srv, mcpTools, caps)
}

func (m *Manager) serverTools(s *ServerConfig, mcpTools []*mcp.Tool, caps *mcp.ServerCapabilities) (out []*tools.Tool, warns []string) {
	taken := map[string]bool{}
	for _, mt := range mcpTools {
		if !s.allowed(mt.Name) {
			continue
		}
		name, cut := ToolName(s.Name, mt.Name)
		if cut {
			warns = append(warns, fmt.Sprintf("MCP tool %q of server %q has a name over 64 characters; offered as %s", mt.Name, s.Name, name))
		}
		if taken[name] {
			warns = append(warns, fmt.Sprintf("MCP tool %q of server %q has the same model name (%s) as another of its tools; skipped", mt.Name, s.Name, name))
			continue
		}
		params, err := schemaMap(mt.InputSchema)
		desc := stripTags(mt.Description)
		if desc == "" {
			desc = fmt.Sprintf("MCP tool %s from %s", mt.Name, s.Name)
		}
		t := &tools.Tool{Name: name, Toolset: Toolset(s.Name), Source: Source(s.Name), Description: desc,
			Schema: map[string]any{"name": name, "description": desc, "parameters": params}}
		if err == nil {
			if p := t.SchemaProblem(); p != "" {
				err = fmt.Errorf("%s", p)
			}
		}
		if err != nil {
			warns = append(warns, fmt.Sprintf("MCP tool %q of server %q has an invalid input schema, so it is not offered: %v", mt.Name, s.Name, err))
			continue
		}
		server, tool := s.Name, mt.Name
		t.Handler = func(ctx context.Context, args, _ map[string]any) (string, error) {
			return m.CallTool(ctx, server, tool, args, 0)
		}
		taken[name] = true
		out = append(out, t)
	}
	for _, u := range m.utilityTools(s, caps) {
		if taken[u.Name] {
			continue // a native tool wins over a helper of the same name
		}
		taken[u.Name] = true
		out = append(out, u)
	}
	return out, warns
}

// schemaMap makes the server's inputSchema the tool's parameters: it must be
// a JSON object of type "object".
func schemaMap(v any) (map[string]any, error) {
	if v == nil {
		return map[string]any{"type": "object", "properties": map[string]any{}}, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("the schema is not a JSON object")
	}
	if t, ok := m["type"]; ok && t != "object" {
		return nil, fmt.Errorf("the schema's type is %v, not object", t)
	}
	if _, ok := m["type"]; !ok {
		m["type"] = "object"
	}
	return m, nil
}

func (m *Manager) utilityTools(s *ServerConfig, caps *mcp.ServerCapabilities) []*tools.Tool {
	if caps == nil {
		return nil
	}
	var out []*tools.Tool
	add := func(tool, desc string, params map[string]any, h func(ctx context.Context, cs *mcp.ClientSession, args map[string]any) (any, error)) {
		name, _ := ToolName(s.Name, tool)
		server := s.Name
		out = append(out, &tools.Tool{Name: name, Toolset: Toolset(s.Name), Source: Source(s.Name), Description: desc,
			Schema: map[string]any{"name": name, "description": desc, "parameters": params},
			Handler: func(ctx context.Context, args, _ map[string]any) (string, error) {
				return m.utilityCall(ctx, server, args, h)
			}})
	}
	noArgs := map[string]any{"type": "object", "properties": map[string]any{}}
	if caps.Resources != nil && s.Resources {
		add("list_resources", "List the resources of MCP server "+s.Name, noArgs,
			func(ctx context.Context, cs *mcp.ClientSession, _ map[string]any) (any, error) {
				return cs.ListResources(ctx, nil)
			})
		add("read_resource", "Read a resource of MCP server "+s.Name+" by URI", map[string]any{"type": "object",
			"properties": map[string]any{"uri": map[string]any{"type": "string"}}, "required": []any{"uri"}},
			func(ctx context.Context, cs *mcp.ClientSession, args map[string]any) (any, error) {
				uri, _ := args["uri"].(string)
				return cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			})
	}
	if caps.Prompts != nil && s.Prompts {
		add("list_prompts", "List the prompts of MCP server "+s.Name, noArgs,
			func(ctx context.Context, cs *mcp.ClientSession, _ map[string]any) (any, error) {
				return cs.ListPrompts(ctx, nil)
			})
		add("get_prompt", "Get a prompt of MCP server "+s.Name+" by name", map[string]any{"type": "object",
			"properties": map[string]any{"name": map[string]any{"type": "string"}, "arguments": map[string]any{"type": "object"}},
			"required":   []any{"name"}},
			func(ctx context.Context, cs *mcp.ClientSession, args map[string]any) (any, error) {
				name, _ := args["name"].(string)
				pa := map[string]string{}
				if a, ok := args["arguments"].(map[string]any); ok {
					for k, v := range a {
						pa[k] = fmt.Sprint(v)
					}
				}
				return cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: pa})
			})
	}
	return out
}

// utilityCall runs a resources/prompts request under the same breaker.
func (m *Manager) utilityCall(ctx context.Context, server string, args map[string]any,
	h func(ctx context.Context, cs *mcp.ClientSession, args map[string]any) (any, error)) (string, error) {
	c, err := m.lookup(server)
	if err != nil {
		return "", err
	}
	if ok, msg := c.br.allow(server); !ok {
		return "", fmt.Errorf("%s", msg)
	}
	cs, err := c.ensure(ctx)
	if err != nil {
		c.br.record(false, false)
		return "", err
	}
	cctx, cancel := context.WithTimeout(ctx, c.srv.Timeout)
	defer cancel()
	res, err := h(cctx, cs, args)
	if err != nil {
		c.br.record(false, false)
		return "", fmt.Errorf("MCP server %q: %s", server, Redact(err.Error()))
	}
	c.br.record(true, false)
	b, err := json.Marshal(res)
	if err != nil {
		return "", err
	}
	var v any
	_ = json.Unmarshal(b, &v)
	return encode(map[string]any{"result": v}), nil
}
