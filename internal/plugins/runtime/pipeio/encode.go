package pipeio

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"

	"github.com/hermes-go/hermes/internal/jsonx"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// AppendRequest frames a request by hand: params already encoded (RawParams) go
// in as they are, where a Message would make encoding/json validate and copy
// them a second time, and a tool call's are encoded straight into the frame.
func (t *Transport) AppendRequest(b []byte, id int64, method string, params any) ([]byte, error) {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":`...)
	b = jsonx.AppendString(b, method)
	b = append(b, `,"params":`...)
	var err error
	switch p := params.(type) {
	case protocol.RawParams:
		b = append(b, p...)
	case protocol.ToolCallParams:
		b, err = appendToolCall(b, p)
	default:
		var enc []byte
		enc, err = jsonx.Marshal(params)
		b = append(b, enc...)
	}
	if err != nil {
		return nil, err
	}
	return append(b, "}\n"...), nil
}

// appendToolCall encodes tool call params as encoding/json does, without reflection.
func appendToolCall(b []byte, p protocol.ToolCallParams) ([]byte, error) {
	b = append(b, `{"handle":`...)
	b = jsonx.AppendString(b, p.Handle)
	b = append(b, `,"args":`...)
	var err error
	if b, err = appendValue(b, p.Args); err != nil {
		return nil, err
	}
	if len(p.Kwargs) > 0 {
		b = append(b, `,"kwargs":`...)
		if b, err = appendValue(b, p.Kwargs); err != nil {
			return nil, err
		}
	}
	if p.DispatchDepth != 0 {
		b = append(b, `,"dispatch_depth":`...)
		b = strconv.AppendInt(b, int64(p.DispatchDepth), 10)
	}
	return append(b, '}'), nil
}

// appendValue encodes the plain JSON values tool arguments are made of, exactly
// as encoding/json does (sorted keys, same escaping but for HTML, see
// jsonx.Marshal); anything else goes through jsonx.Marshal.
func appendValue(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return jsonx.AppendString(b, x), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case json.Number:
		if x == "" {
			return append(b, '0'), nil
		}
		// Out of float64's range (1e400) is still a JSON number: passed on as written.
		if _, err := strconv.ParseFloat(string(x), 64); err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, &json.UnsupportedValueError{Str: string(x)}
		}
		return append(b, x...), nil
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.AppendInt(b, int64(x), 10), nil
		}
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case map[string]any:
		if x == nil {
			return append(b, "null"...), nil
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonx.AppendString(b, k)
			b = append(b, ':')
			var err error
			if b, err = appendValue(b, x[k]); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case []any:
		if x == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendValue(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	}
	enc, err := jsonx.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, enc...), nil
}
