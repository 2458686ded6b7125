package pipeio

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/hermes-go/hermes/pkg/protocol"
)

// agrees checks that when the fast decoder accepts a line, it means exactly what the
// general decoder makes of it.
func agrees(t *testing.T, line []byte) (accepted bool) {
	t.Helper()
	fast := fastResponse(line)
	if fast == nil {
		return false
	}
	var slow protocol.Message
	if err := json.Unmarshal(bytes.TrimSpace(line), &slow); err != nil {
		t.Fatalf("fast path accepted %q, which the decoder rejects: %v", line, err)
	}
	if slow.JSONRPC != fast.JSONRPC || !bytes.Equal(slow.ID, fast.ID) || !jsonEqual(slow.Result, fast.Result) ||
		slow.Method != "" || slow.Error != nil || slow.Params != nil {
		t.Fatalf("fast path read %q as %+v, the decoder as %+v", line, fast, slow)
	}
	return true
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

func TestFastResponse(t *testing.T) {
	cases := []struct {
		line   string
		accept bool
	}{
		{`{"jsonrpc":"2.0","id":7,"result":"{\"success\": true}"}` + "\n", true},
		{`{"jsonrpc":"2.0","id":12,"result":{"a":[1,2,{"b":null}]}}`, true},
		{`{"jsonrpc":"2.0","id":3,"result":null}`, true},
		{`{"jsonrpc":"2.0","id":3,"result":"x","error":{"code":1,"message":"m"}}`, false},
		{`{"jsonrpc":"2.0","id":"7","result":1}`, false},
		{`{"jsonrpc":"2.0","id":-7,"result":1}`, false},
		{`{"jsonrpc":"2.0","id":7,"method":"x","result":1}`, false},
		{`{"jsonrpc":"2.0","id":7,"result":}`, false},
		{`{"jsonrpc":"2.0","id":7,"result":1`, false},
	}
	for _, c := range cases {
		if got := agrees(t, []byte(c.line)); got != c.accept {
			t.Errorf("fastResponse(%q) accepted=%v, want %v", c.line, got, c.accept)
		}
	}
}

func FuzzFastResponse(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":7,"result":"ok"}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":7,"result":{"x":1},"error":null}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":7,"result":"a"}, {"b":1}`))
	f.Fuzz(func(t *testing.T, line []byte) { agrees(t, line) })
}

func TestPlainJSONString(t *testing.T) {
	for _, raw := range []string{
		`""`, `"plain"`, `"{\"success\": true, \"greeting\": \"Hello, Ada!\"}"`,
		`"tab\tnew\nline\r\b\f\/\\"`, `"héllo \"wörld\""`, `"\u00e9"`, `"\ud83d\ude00"`,
		`"x\"`, `"a"b"`, `"ctl` + "\x01" + `"`, `"bad ` + "\xff" + `"`, `12`, `null`, `"`,
	} {
		agreesString(t, []byte(raw))
	}
	if _, ok := plainJSONString([]byte(`"{\"a\": \"b\"}"`)); !ok {
		t.Error("a result with escaped quotes took the slow path")
	}
}

// agreesString checks plainJSONString against encoding/json on valid JSON: when
// it accepts, it must decode the same string.
func agreesString(t *testing.T, raw []byte) {
	t.Helper()
	got, ok := plainJSONString(raw)
	var want string
	err := json.Unmarshal(raw, &want)
	if !json.Valid(raw) {
		return // never reaches it: responses are validated when read
	}
	if ok && (err != nil || got != want) {
		t.Fatalf("plainJSONString(%q) = %q, encoding/json: %q, %v", raw, got, want, err)
	}
}

func FuzzPlainJSONString(f *testing.F) {
	f.Add([]byte(`"{\"success\": true}"`))
	f.Add([]byte(`"a\u0041\\\/"`))
	f.Fuzz(func(t *testing.T, raw []byte) { agreesString(t, raw) })
}
