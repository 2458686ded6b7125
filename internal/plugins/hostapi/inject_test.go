package hostapi

import (
	"encoding/json"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/testutil/syncbuf"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// Gateway-mode inject_message: what reaches the runner, and the warnings of
// each refusal before it.
func TestInjectMessageGatewayMode(t *testing.T) {
	allowed := "plugins:\n  entries:\n    pa:\n      allow_gateway_injection: true\n"
	const key = "agent:main:telegram:dm:5"
	tests := []struct {
		name     string
		cfg      string
		noGW     bool
		accept   bool
		args     []any
		kwargs   map[string]any
		want     bool
		injected []string
		warning  string
	}{
		{name: "accepted", cfg: allowed, accept: true, args: []any{"hi"}, kwargs: map[string]any{"session_key": key},
			want: true, injected: []string{"pa|" + key + "|hi"}},
		{name: "the runner refuses", cfg: allowed, args: []any{"hi"}, kwargs: map[string]any{"session_key": key},
			injected: []string{"pa|" + key + "|hi"}},
		{name: "another role is marked", cfg: allowed, accept: true, args: []any{"done"}, kwargs: map[string]any{"session_key": key, "role": "system"},
			want: true, injected: []string{"pa|" + key + "|[system] done"}},
		{name: "no gateway", cfg: allowed, noGW: true, args: []any{"hi"}, kwargs: map[string]any{"session_key": key},
			warning: "no CLI reference and no gateway runner in this process"},
		{name: "no session key", cfg: allowed, args: []any{"hi"}, kwargs: map[string]any{"session_key": nil},
			warning: "gateway mode requires session_key"},
		{name: "blank session key", cfg: allowed, args: []any{"hi"}, kwargs: map[string]any{"session_key": "  "},
			warning: "gateway mode requires session_key"},
		{name: "not allowed", args: []any{"hi"}, kwargs: map[string]any{"session_key": key},
			warning: "set plugins.entries.pa.allow_gateway_injection: true in config.yaml"},
		{name: "allowed as a string is no bool", cfg: "plugins:\n  entries:\n    pa:\n      allow_gateway_injection: maybe\n",
			args: []any{"hi"}, kwargs: map[string]any{"session_key": key}, warning: "allow_gateway_injection: true"},
		{name: "another plugin's permission", cfg: "plugins:\n  entries:\n    other:\n      allow_gateway_injection: true\n",
			args: []any{"hi"}, kwargs: map[string]any{"session_key": key}, warning: "allow_gateway_injection: true"},
		{name: "unreadable config denies", cfg: "<dir>", args: []any{"hi"}, kwargs: map[string]any{"session_key": key},
			warning: "allow_gateway_injection: true"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rn := &testRunner{log: slog.New(slog.DiscardHandler), accept: tc.accept}
			var gw GatewayServices = boundGateway{rn}
			if tc.noGW {
				gw = boundGateway{nil}
			}
			log := &syncbuf.Buffer{}
			s := paSession(t, tc.cfg, gw, slog.New(slog.NewTextHandler(log, nil)))
			params, err := json.Marshal(protocol.FacadeParams{Name: "inject_message", Args: tc.args, Kwargs: tc.kwargs})
			if err != nil {
				t.Fatal(err)
			}
			got, perr := call(t, s, protocol.MethodFacade, string(params))
			if perr != nil || got != tc.want {
				t.Fatalf("inject_message = %v, %v; want %v", got, perr, tc.want)
			}
			if !reflect.DeepEqual(rn.injected, tc.injected) {
				t.Errorf("the runner got %q, want %q", rn.injected, tc.injected)
			}
			if tc.warning != "" && !strings.Contains(log.String(), tc.warning) {
				t.Errorf("log lacks %q:\n%s", tc.warning, log.String())
			}
			if tc.warning == "" && strings.Contains(log.String(), "level=WARN") {
				t.Errorf("unexpected warning:\n%s", log.String())
			}
		})
	}
}
