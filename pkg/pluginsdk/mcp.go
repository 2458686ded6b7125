package pluginsdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hermes-go/hermes/pkg/protocol"
)

// MCPResult is what Context.CallMCP answers, upstream's envelope: OK with the
// tool's Result (and StructuredContent when the server gave it), or not OK with
// Error saying why. Truncated is set when the result was cut at 65536 characters.
type MCPResult struct {
	OK                bool `json:"ok"`
	Result            any  `json:"result,omitempty"`
	StructuredContent any  `json:"structuredContent,omitempty"`
	// Error is the server's error text (JSON text when it was not a string).
	Error     string `json:"-"`
	Truncated bool   `json:"truncated,omitempty"`
}

// UnmarshalJSON reads the envelope; an error that is not a string keeps its JSON text.
func (r *MCPResult) UnmarshalJSON(b []byte) error {
	type plain MCPResult
	var v struct {
		plain
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*r = MCPResult(v.plain)
	if len(v.Error) > 0 && string(v.Error) != "null" {
		if json.Unmarshal(v.Error, &r.Error) != nil {
			r.Error = string(v.Error)
		}
	}
	return nil
}

// MarshalJSON writes the envelope back as the host sent it.
func (r MCPResult) MarshalJSON() ([]byte, error) {
	type plain MCPResult
	return json.Marshal(struct {
		plain
		Error string `json:"error,omitempty"`
	}{plain(r), r.Error})
}

// MCPResultFrom converts the host's envelope map (what an in-process plugin's
// call gets) to an MCPResult.
func MCPResultFrom(env map[string]any) (MCPResult, error) {
	var r MCPResult
	b, err := json.Marshal(env)
	if err != nil {
		return r, fmt.Errorf("call_mcp result: %w", err)
	}
	err = json.Unmarshal(b, &r)
	return r, err
}

// MCPNotAllowedError is CallMCP's error when config.yaml does not list the server
// in plugins.entries.<id>.mcp_allowlist; no MCP server was called. The message is
// upstream's PermissionError text, naming the key to add.
type MCPNotAllowedError struct {
	Server  string
	Message string
}

func (e *MCPNotAllowedError) Error() string { return e.Message }

// mcpAnswerGrace is how long past the call's timeout a plugin waits for the
// host, which answers at the timeout itself: only a wedged host is given up on.
const mcpAnswerGrace = 5 * time.Second

// MCPWait is how long CallMCP waits for the host for a call with this timeout
// (zero is the default 30 s; the host clamps to [1 s, 600 s]).
func MCPWait(timeout time.Duration) time.Duration {
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	return min(max(timeout, time.Second), 600*time.Second) + mcpAnswerGrace
}

func (c *remoteContext) CallMCP(ctx context.Context, server, tool string, args map[string]any, timeout time.Duration) (MCPResult, error) {
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	wait := MCPWait(timeout)
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var res MCPResult
	err := c.s.conn.Call(wctx, protocol.MethodFacade, protocol.FacadeParams{
		Name: "call_mcp", Args: []any{server, tool},
		Kwargs: map[string]any{"arguments": args, "timeout": timeout.Seconds()},
	}, &res)
	var perr *protocol.Error
	switch {
	case err == nil:
		return res, nil
	case errors.As(err, &perr) && perr.Code == protocol.CodePermission:
		return res, &MCPNotAllowedError{Server: server, Message: perr.Message}
	case errors.As(err, &perr):
		return res, fmt.Errorf("call_mcp: %s", perr.Message)
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		return MCPResult{Error: fmt.Sprintf("hermes did not answer the call of tool '%s' on MCP server '%s' within %s; the call was abandoned", tool, server, wait)}, nil
	}
	return res, fmt.Errorf("call_mcp: %w", err)
}

func (c *remoteContext) RegisterRedactionPatterns(patterns []string) int {
	items := make([]any, len(patterns))
	for i, p := range patterns {
		items[i] = p
	}
	var res struct {
		Accepted int `json:"accepted"`
	}
	if err := c.call(protocol.MethodRegisterOther, protocol.RegisterOtherParams{
		Registrar: "register_redaction_patterns", Details: map[string]any{"patterns": items}}, &res); err != nil {
		return 0
	}
	return res.Accepted
}

func (c *remoteContext) RegisterAuxiliaryTask(t AuxiliaryTask) error {
	return c.call(protocol.MethodRegisterOther, protocol.AuxiliaryTaskParams(t.Key, t.DisplayName, t.Description, t.Defaults), nil)
}

func (c *remoteContext) RegisterContextReference(ref ContextReference) error {
	if ref.Expand == nil {
		return errors.New("RegisterContextReference: Expand is required")
	}
	var res protocol.RegisterResult
	if err := c.call(protocol.MethodRegisterOther, protocol.RegisterOtherParams{Registrar: "register_context_reference",
		Name: ref.Prefix, Handle: c.s.addHandle(ref.Expand),
		Details: map[string]any{"prefix": ref.Prefix, "description": ref.Description}}, &res); err != nil {
		return err
	}
	if !res.Registered {
		return fmt.Errorf("context reference @%s: was not registered: %s", ref.Prefix, res.Warning)
	}
	return nil
}
