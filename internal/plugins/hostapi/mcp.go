package hostapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hermes-go/hermes/internal/tools"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// ctx.call_mcp(server, tool, arguments=None, timeout=30): a plugin calls a tool
// on one of the user's MCP servers through the one MCP client (Options.MCP),
// gated per plugin by plugins.entries.<id>.mcp_allowlist. The envelope is built
// here, host side, so Python and Go plugins get the same dict.

const (
	// mcpResultCharCap is upstream's _MCP_RESULT_CHAR_CAP, counted in characters.
	mcpResultCharCap  = 65536
	mcpTruncatedMark  = "… [truncated]"
	mcpDefaultTimeout = 30 * time.Second
	mcpMinTimeout     = time.Second
	mcpMaxTimeout     = 600 * time.Second
)

func callMCP(ctx context.Context, s *Session, fp protocol.FacadeParams) (any, error) {
	arg := func(i int, name string) any {
		if i < len(fp.Args) {
			return fp.Args[i]
		}
		return fp.Kwargs[name]
	}
	return s.CallMCP(ctx, pyStr(arg(0, "server")), pyStr(arg(1, "tool")), fp.Kwargs["arguments"], MCPTimeout(fp.Kwargs["timeout"]))
}

// CallMCP serves ctx.call_mcp for every kind of plugin: the gate (a denied call
// is a CodePermission error and never reaches the client), then the call bounded
// by timeout, then upstream's envelope ({"ok": ...}).
func (s *Session) CallMCP(ctx context.Context, server, tool string, arguments any, timeout time.Duration) (map[string]any, error) {
	if ok, evidence := s.mcpAllowed(server); !ok {
		s.h.log.Info("mcp_call", "plugin", s.p.ID(), "server", server, "tool", tool, "decision", "deny", "evidence", evidence)
		return nil, protocol.Errorf(protocol.CodePermission, "%s", MCPNotAllowedMessage(s.pluginName(), s.p.ID(), server))
	}
	var args map[string]any
	switch a := arguments.(type) {
	case nil:
		args = map[string]any{}
	case map[string]any:
		args = a
	default:
		raw, _ := json.Marshal(a)
		return nil, protocol.Errorf(protocol.CodeTypeError, "ctx.call_mcp: arguments must be a dict (or None), not %s", jsonKind(raw))
	}
	timeout = clampMCPTimeout(timeout)
	s.h.log.Info("mcp_call", "plugin", s.p.ID(), "server", server, "tool", tool, "decision", "allow", "timeout", timeout)
	mcp := s.h.opts.MCP
	if mcp == nil {
		return mcpFailure(fmt.Sprintf("no MCP server is configured, so MCP server '%s' cannot be called: "+
			"add one with `hermes mcp add NAME -- CMD ARGS…` (stdio) or `hermes mcp add NAME --url URL` (HTTP)", server)), nil
	}
	// An untrusted server's approval prompt names the plugin as the asker, and
	// never offers it "always".
	cctx, cancel := context.WithTimeout(tools.WithOrigin(ctx, tools.Origin{Kind: tools.FromPlugin, Plugin: s.p.ID(), Facade: "ctx.call_mcp"}), timeout)
	defer cancel()
	type answer struct {
		raw string
		err error
	}
	// The client is asked to honour cctx; the select makes sure the plugin is
	// answered at the deadline even if it does not.
	done := make(chan answer, 1)
	go func() {
		raw, err := mcp.CallTool(cctx, server, tool, args, timeout)
		done <- answer{raw, err}
	}()
	var a answer
	select {
	case a = <-done:
	case <-cctx.Done():
		a.err = cctx.Err()
	}
	switch {
	case a.err == nil:
		return mcpEnvelope(a.raw), nil
	case ctx.Err() != nil:
		return mcpFailure(fmt.Sprintf("the call of tool '%s' on MCP server '%s' was cancelled", tool, server)), nil
	case errors.Is(a.err, context.DeadlineExceeded):
		return mcpFailure(fmt.Sprintf("MCP server '%s' did not answer tool '%s' within %s (ctx.call_mcp's timeout; pass a larger timeout=, at most 600)",
			server, tool, timeout)), nil
	default:
		return mcpFailure(a.err.Error()), nil
	}
}

// MCPNotAllowedMessage is upstream's PermissionError text for a denied ctx.call_mcp.
func MCPNotAllowedMessage(name, id, server string) string {
	return fmt.Sprintf("Plugin '%s' is not allowed to call MCP server '%s'. Add it to plugins.entries.%s.mcp_allowlist "+
		"in config.yaml to grant access (default is no MCP access).", name, server, id)
}

// mcpAllowed reads plugins.entries.<id>.mcp_allowlist fresh: a missing key, a
// value that is not a list (even "*") or an unreadable config denies, and "*"
// in the list is a server name like any other, as upstream.
func (s *Session) mcpAllowed(server string) (bool, string) {
	doc, err := s.h.config.Load()
	if err != nil {
		return false, "config unreadable"
	}
	v, ok := doc.GetPath([]string{"plugins", "entries", s.p.ID(), "mcp_allowlist"})
	if !ok {
		return false, "no mcp_allowlist"
	}
	list, ok := v.([]any)
	if !ok {
		return false, "mcp_allowlist is not a list"
	}
	for _, x := range list {
		if pyStr(x) == server {
			return true, "mcp_allowlist"
		}
	}
	return false, "not in mcp_allowlist"
}

func (s *Session) pluginName() string {
	if m := s.p.Manifest(); m != nil && m.Name != "" {
		return m.Name
	}
	return s.p.ID()
}

// MCPTimeout reads ctx.call_mcp's timeout as upstream's float(timeout): a
// number, a bool or a numeric string; anything else (and NaN) is the default
// 30 s. The result is clamped to [1 s, 600 s].
func MCPTimeout(v any) time.Duration {
	secs := math.NaN()
	switch t := v.(type) {
	case float64:
		secs = t
	case json.Number:
		secs, _ = strconv.ParseFloat(t.String(), 64)
	case int:
		secs = float64(t)
	case int64:
		secs = float64(t)
	case uint64:
		secs = float64(t)
	case bool:
		secs = 0
		if t {
			secs = 1
		}
	case string:
		if f, err := strconv.ParseFloat(strings.TrimSpace(t), 64); err == nil {
			secs = f
		}
	}
	if math.IsNaN(secs) {
		return mcpDefaultTimeout
	}
	secs = min(max(secs, mcpMinTimeout.Seconds()), mcpMaxTimeout.Seconds())
	return time.Duration(secs * float64(time.Second))
}

// clampMCPTimeout keeps a Go caller's timeout in [1 s, 600 s]; zero is the default.
func clampMCPTimeout(d time.Duration) time.Duration {
	if d == 0 {
		return mcpDefaultTimeout
	}
	return min(max(d, mcpMinTimeout), mcpMaxTimeout)
}

func mcpFailure(msg string) map[string]any { return map[string]any{"ok": false, "error": msg} }

// mcpEnvelope is upstream's _mcp_envelope over the client's tool-result text:
// capped at 65536 characters, then {"error"} → ok false, {"result"} → ok true
// with structuredContent when given, anything else → ok true with the parsed
// JSON or the raw text.
func mcpEnvelope(raw string) map[string]any {
	truncated := false
	if len(raw) > mcpResultCharCap && utf8.RuneCountInString(raw) > mcpResultCharCap {
		cut, n := 0, 0
		for cut = range raw {
			if n == mcpResultCharCap {
				break
			}
			n++
		}
		raw = raw[:cut] + mcpTruncatedMark
		truncated = true
	}
	var env map[string]any
	parsed, ok := parseJSON(raw)
	obj, isObj := parsed.(map[string]any)
	switch {
	case ok && isObj && hasKey(obj, "error"):
		env = map[string]any{"ok": false, "error": obj["error"]}
	case ok && isObj && hasKey(obj, "result"):
		env = map[string]any{"ok": true, "result": obj["result"]}
		if sc, ok := obj["structuredContent"]; ok {
			env["structuredContent"] = sc
		}
	case ok:
		env = map[string]any{"ok": true, "result": parsed}
	default:
		env = map[string]any{"ok": true, "result": raw}
	}
	if truncated {
		env["truncated"] = true
	}
	return env
}

func hasKey(m map[string]any, k string) bool {
	_, ok := m[k]
	return ok
}

// parseJSON decodes one JSON value, keeping numbers exact (a large integer in a
// result keeps every digit on its way to the plugin).
func parseJSON(raw string) (any, bool) {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if strings.TrimSpace(raw[dec.InputOffset():]) != "" {
		return nil, false // trailing data: not one JSON document
	}
	return v, true
}

// pyStr is Python's str() of a value as it arrives from config.yaml or the
// plugin, for comparing with a server name as upstream's [str(x) for x in ...].
func pyStr(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case nil:
		return "None"
	case bool:
		if t {
			return "True"
		}
		return "False"
	case float64:
		if t == math.Trunc(t) && math.Abs(t) < 1e16 {
			return strconv.FormatFloat(t, 'f', 1, 64)
		}
		return strconv.FormatFloat(t, 'g', -1, 64)
	case json.Number:
		return t.String()
	}
	return fmt.Sprint(v)
}
