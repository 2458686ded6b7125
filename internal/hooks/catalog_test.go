package hooks

import (
	"slices"
	"sort"
	"strings"
	"testing"
)

// The upstream VALID_HOOKS set (reference §4.1), verbatim, plus the S3 additions.
const upstreamValidHooks = `
pre_tool_call post_tool_call transform_terminal_output transform_tool_result transform_llm_output pre_llm_call
post_llm_call on_stream_start on_stream_delta on_stream_end on_interim_message pre_verify pre_api_request
post_api_request api_request_error transform_api_error_classification on_session_start on_session_end
on_session_finalize on_session_reset on_skill_lifecycle subagent_start subagent_stop pre_gateway_dispatch
agent_loop_stopped pre_approval_request post_approval_response on_room_member_activity pre_transcription
kanban_task_claimed kanban_task_completed kanban_task_blocked on_kanban_worker_spawned on_kanban_worker_exited
on_kanban_worker_stale_claim on_kanban_task_updated on_kanban_dispatch_tick gateway_platform_event pre_command
`

var s3Hooks = []string{"pre_auxiliary_call", "post_auxiliary_call", "pre_tts_synthesis"}

// newerHooks are in newer upstream code than the reference's VALID_HOOKS (wave2 §2.9).
var newerHooks = []string{"gateway_ready"}

func TestCatalogIsExactlyTheUpstreamSet(t *testing.T) {
	valid := strings.Fields(upstreamValidHooks)
	if len(valid) != 39 {
		t.Fatalf("reference list has %d names, want 39", len(valid))
	}
	want := append(append(slices.Clone(valid), s3Hooks...), newerHooks...)
	sort.Strings(want)

	got := Names()
	if !slices.Equal(got, want) {
		t.Errorf("Names() differs from the upstream set\n got: %v\nwant: %v", got, want)
	}
	if len(catalog()) != len(want) {
		t.Errorf("catalog has %d entries (duplicates?), want %d", len(catalog()), len(want))
	}
	if !sort.StringsAreSorted(got) {
		t.Errorf("Names() not sorted: %v", got)
	}
	for _, n := range want {
		if !Valid(n) {
			t.Errorf("Valid(%q) = false", n)
		}
	}
	for _, n := range []string{"", "PRE_TOOL_CALL", "pre_tool_call ", "on_compression_complete"} {
		if Valid(n) {
			t.Errorf("Valid(%q) = true", n)
		}
	}
}

func TestCatalogClasses(t *testing.T) {
	// Reference §4.2's sets, listed independently of the catalog.
	bounded := []string{"post_tool_call", "transform_terminal_output", "transform_tool_result",
		"transform_llm_output", "pre_llm_call", "post_llm_call", "pre_api_request", "post_api_request",
		"api_request_error", "pre_auxiliary_call", "post_auxiliary_call", "pre_verify", "on_session_start",
		"on_session_end"}
	failClosed := []string{"pre_tool_call", "pre_tts_synthesis"}
	callerThread := []string{"subagent_stop"}

	want := map[string]Class{}
	for _, n := range bounded {
		want[n] = BoundedFailOpen
	}
	for _, n := range failClosed {
		want[n] = FailClosed
	}
	for _, n := range callerThread {
		want[n] = CallerThread
	}
	for _, n := range Names() {
		s, _ := Lookup(n)
		w, ok := want[n]
		if !ok {
			w = Unbounded // every hook not in a set runs unbounded
		}
		if s.Class != w {
			t.Errorf("%s: class %v, want %v", n, s.Class, w)
		}
	}
}

func TestCatalogReturns(t *testing.T) {
	want := map[string]Returns{
		"pre_tool_call":                      ReturnsDirective,
		"transform_tool_result":              ReturnsFirstString,
		"transform_terminal_output":          ReturnsFirstString,
		"transform_llm_output":               ReturnsFirstNonEmptyString,
		"pre_llm_call":                       ReturnsContext,
		"pre_transcription":                  ReturnsFieldsDict,
		"transform_api_error_classification": ReturnsErrorClassification,
		"pre_gateway_dispatch":               ReturnsGatewayDirective,
		"pre_tts_synthesis":                  ReturnsTTSDirective,
		"pre_verify":                         ReturnsVerifyDirective,
	}
	for _, n := range Names() {
		s, _ := Lookup(n)
		w, ok := want[n]
		if !ok {
			w = ReturnsIgnored
		}
		if s.Returns != w {
			t.Errorf("%s: returns %v, want %v", n, s.Returns, w)
		}
	}
}

func TestCatalogEntries(t *testing.T) {
	for _, s := range catalog() {
		t.Run(string(s.Name), func(t *testing.T) {
			if s.Telemetry != (s.Name != "gateway_platform_event") {
				t.Errorf("Telemetry = %v", s.Telemetry)
			}
			if s.Doc == "" {
				t.Error("empty Doc")
			}
			if len(s.Fields) == 0 {
				t.Error("no Fields")
			}
			seen := map[string]bool{}
			for _, f := range s.Fields {
				if seen[f] {
					t.Errorf("field %q listed twice", f)
				}
				seen[f] = true
				if f == TelemetryField {
					t.Errorf("%s is added by the dispatcher, not a fire-site field", f)
				}
			}
			if s.Class.String() == "unknown" || s.Returns.String() == "unknown" {
				t.Errorf("class %v / returns %v has no name", s.Class, s.Returns)
			}
		})
	}
}

func TestCatalogFields(t *testing.T) {
	// Spot checks of §4.3, including family members that share field groups.
	tests := []struct {
		hook string
		want string
	}{
		{"pre_tool_call", "tool_name args task_id session_id tool_call_id turn_id api_request_id middleware_trace"},
		{"transform_terminal_output", "command output returncode task_id env_type"},
		{"pre_tts_synthesis", "text provider"},
		{"on_stream_start", "turn_id iteration session_id model provider surface"},
		{"on_stream_delta", "turn_id iteration session_id model provider surface delta kind"},
		{"on_stream_end", "turn_id iteration session_id model provider surface final_text finished error"},
		{"kanban_task_claimed", "task_id board assignee run_id profile_name"},
		{"kanban_task_blocked", "task_id board assignee run_id profile_name reason"},
		{"on_kanban_task_updated", "task_id board assignee run_id profile_name changed_fields"},
		{"on_kanban_dispatch_tick", "board profile_name dry_run outcome result"},
		{"gateway_platform_event", "platform event_type payload"},
	}
	for _, tt := range tests {
		t.Run(tt.hook, func(t *testing.T) {
			s, ok := Lookup(tt.hook)
			if !ok {
				t.Fatal("not found")
			}
			if got := strings.Join(s.Fields, " "); got != tt.want {
				t.Errorf("fields\n got: %s\nwant: %s", got, tt.want)
			}
		})
	}
}

func TestLookupReturnsACopy(t *testing.T) {
	s, ok := Lookup("pre_tool_call")
	if !ok {
		t.Fatal("pre_tool_call not found")
	}
	s.Fields[0] = "mutated"
	again, _ := Lookup("pre_tool_call")
	if again.Fields[0] != "tool_name" {
		t.Errorf("Lookup exposed the table: Fields[0] = %q", again.Fields[0])
	}
	n := Names()
	n[0] = "mutated"
	if Names()[0] == "mutated" {
		t.Error("Names exposed the sorted table")
	}
	if _, ok := Lookup("nope"); ok {
		t.Error("Lookup(nope) = ok")
	}
}
