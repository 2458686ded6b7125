package hooks

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
)

func TestCatalogOptionalFieldsAreFields(t *testing.T) {
	for _, s := range catalog() {
		for _, f := range s.Optional {
			if !slices.Contains(s.Fields, f) {
				t.Errorf("%s: optional field %q is not one of its Fields", s.Name, f)
			}
		}
	}
}

// payloadOf is a payload carrying exactly the named fields.
func payloadOf(fields ...string) map[string]any {
	p := make(map[string]any, len(fields))
	for _, f := range fields {
		p[f] = nil // None is a value: presence is what counts
	}
	return p
}

func TestCheckPayload(t *testing.T) {
	preTool := strings.Fields("tool_name args task_id session_id tool_call_id turn_id api_request_id middleware_trace")
	finalize := []string{"session_id", "platform"}
	tests := []struct {
		name    string
		hook    Name
		payload map[string]any
		want    string // "" = accepted, else a substring of the error
	}{
		{"every field", HookPreToolCall, payloadOf(preTool...), ""},
		{"telemetry set by the fire site", HookPreToolCall, payloadOf(append(slices.Clone(preTool), TelemetryField)...), ""},
		{"required field missing", HookPreToolCall, payloadOf(preTool[1:]...), "missing tool_name"},
		{"field not in the catalog", HookPreToolCall, payloadOf(append(slices.Clone(preTool), "tool_args")...), "not in the catalog tool_args"},
		{"both", HookPreToolCall, payloadOf(append(slices.Clone(preTool[:7]), "trace")...), "missing middleware_trace; not in the catalog trace"},
		{"optional fields left out", HookOnSessionFinalize, payloadOf(finalize...), ""},
		{"some optional fields sent", HookOnSessionFinalize, payloadOf(append(slices.Clone(finalize), "reason")...), ""},
		{"nil payload", HookOnSessionFinalize, nil, "missing session_id, platform"},
		{"telemetry on a hook without it", HookGatewayPlatformEvent, payloadOf("platform", "event_type", "payload", TelemetryField), "not in the catalog " + TelemetryField},
		{"unknown hook", Name("pre_tool_cal"), payloadOf(preTool...), `"pre_tool_cal" is not a hook of the catalog`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkPayload(tt.hook, tt.payload)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// Every hook accepts its catalog fields (all of them, or only the required ones)
// and refuses one more: the check and the table agree.
func TestCheckPayloadEveryHook(t *testing.T) {
	for _, s := range catalog() {
		var required []string
		for _, f := range s.Fields {
			if !slices.Contains(s.Optional, f) {
				required = append(required, f)
			}
		}
		if err := checkPayload(s.Name, payloadOf(s.Fields...)); err != nil {
			t.Errorf("all fields: %v", err)
		}
		if err := checkPayload(s.Name, payloadOf(required...)); err != nil {
			t.Errorf("required fields: %v", err)
		}
		if err := checkPayload(s.Name, payloadOf(append(slices.Clone(s.Fields), "bogus")...)); err == nil {
			t.Errorf("%s accepted a field it does not have", s.Name)
		}
	}
}

func TestCheckPayloadDoesNotAllocate(t *testing.T) {
	p := payloadOf(strings.Fields("tool_name args result task_id session_id tool_call_id turn_id api_request_id " +
		"duration_ms status error_type error_message middleware_trace")...)
	if n := testing.AllocsPerRun(100, func() { _ = checkPayload(HookPostToolCall, p) }); n != 0 {
		t.Errorf("a fitting payload costs %v allocations", n)
	}
}

// In a test binary the dispatcher refuses a drifting fire outright: the
// callbacks never see it, and the test that drove the fire site fails.
func TestFireRejectsPayloadDriftInTests(t *testing.T) {
	if !testing.Testing() || !checkPayloadsDefault {
		t.Fatal("the payload check is off in a test binary")
	}
	d := New(Options{Logger: slog.New(slog.DiscardHandler)})
	calls := 0
	d.Register(string(HookOnSessionStart), Callback{PluginID: "p", Invoke: func(context.Context, map[string]any) (any, error) {
		calls++
		return nil, nil
	}})
	fire := func(hook Name, payload map[string]any) (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("%v", r)
			}
		}()
		d.Fire(context.Background(), hook, payload)
		return nil
	}
	if err := fire(HookOnSessionStart, payloadOf("session_id", "model", "platform")); err != nil || calls != 1 {
		t.Fatalf("a fitting payload: err %v, %d calls", err, calls)
	}
	err := fire(HookOnSessionStart, map[string]any{"session_id": "s", "model": "m", "surface": "cli"})
	if err == nil || !strings.Contains(err.Error(), "on_session_start fired with a payload that differs from the catalog") ||
		!strings.Contains(err.Error(), "missing platform; not in the catalog surface") {
		t.Fatalf("drifting payload: %v", err)
	}
	if calls != 1 {
		t.Errorf("a rejected payload reached the callback")
	}
	// With no callback registered the fire site has drifted all the same.
	if err := fire(HookOnSessionEnd, nil); err == nil || !strings.Contains(err.Error(), "missing session_id") {
		t.Fatalf("no callbacks: %v", err)
	}
}
