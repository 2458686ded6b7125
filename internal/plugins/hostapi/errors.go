package hostapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hermes-go/hermes/internal/hooks"
	"github.com/hermes-go/hermes/internal/plugins/runtime"
	"github.com/hermes-go/hermes/internal/tools"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// HandlerData extracts the plugin exception details from a protocol error.
func HandlerData(e *protocol.Error) protocol.HandlerErrorData {
	var d protocol.HandlerErrorData
	if len(e.Data) > 0 {
		_ = json.Unmarshal(e.Data, &d)
	}
	return d
}

// pluginError is a plugin exception as the hook dispatcher sees it.
type pluginError struct {
	typ, msg string
}

func (e *pluginError) Error() string         { return e.msg }
func (e *pluginError) ExceptionType() string { return e.typ }

var _ hooks.ExceptionError = (*pluginError)(nil)

// asPluginError maps call failures to an exception class and message.
func asPluginError(err error) *pluginError {
	var perr *protocol.Error
	if errors.As(err, &perr) {
		d := HandlerData(perr)
		if d.Type != "" {
			return &pluginError{typ: d.Type, msg: perr.Message}
		}
		return &pluginError{typ: "HostError", msg: perr.Message}
	}
	var ee *runtime.ExitError
	if errors.As(err, &ee) {
		return &pluginError{typ: "PluginExited", msg: ee.Message}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &pluginError{typ: "TimeoutError", msg: "timed out"}
	}
	return &pluginError{typ: "Error", msg: err.Error()}
}

// normalizeToolResult applies the handler contract: a string, or the multimodal
// envelope; anything else is reported as a contract error, as upstream does.
//
// JSON null must be caught before decoding into a string: encoding/json leaves the
// string empty without an error, which made a handler returning None a success.
func normalizeToolResult(name string, raw json.RawMessage) (string, error) {
	kind := jsonKind(raw)
	if kind == "str" {
		var s string
		if err := json.Unmarshal(raw, &s); err == nil {
			return s, nil
		}
	}
	if kind == "dict" {
		var obj map[string]any
		if err := json.Unmarshal(raw, &obj); err == nil {
			if mm, _ := obj["_multimodal"].(bool); mm {
				if _, ok := obj["content"].([]any); ok {
					return string(raw), nil
				}
			}
			// The Python bridge names the type of a result JSON cannot show (bytes, object()).
			if t, ok := obj["_hermes_unsupported_result"].(string); ok && len(obj) == 1 && t != "" {
				kind = t
			}
		}
	}
	return "", &tools.ToolError{Type: "tool_result_contract",
		Message: fmt.Sprintf("Tool handler returned unsupported result type: %s (tool %s must return a JSON string)", kind, name)}
}

// jsonKind names the Python type a JSON value decodes to.
func jsonKind(raw json.RawMessage) string {
	t := strings.TrimSpace(string(raw))
	switch {
	case t == "" || t == "null":
		return "NoneType"
	case t[0] == '"':
		return "str"
	case t[0] == '{':
		return "dict"
	case t[0] == '[':
		return "list"
	case t == "true" || t == "false":
		return "bool"
	case strings.ContainsAny(t, ".eE"):
		return "float"
	default:
		return "int"
	}
}
