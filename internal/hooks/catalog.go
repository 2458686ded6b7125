// Package hooks holds the plugin hook catalog (what each hook is, what it
// carries, how its results are used and how long a callback may take) and the
// dispatcher that fires hooks at registered plugin callbacks.
//
// The catalog is data: fire sites and the dispatcher read hook semantics from
// the table below and nowhere else.
package hooks

import (
	"slices"
	"sort"
	"sync"
)

// Returns says how a fire site uses the values callbacks return.
type Returns int

const (
	// ReturnsIgnored: observer hook, return values are dropped.
	ReturnsIgnored Returns = iota
	// ReturnsDirective: pre_tool_call block/approve/modify directives (see PreToolCall).
	ReturnsDirective
	// ReturnsFirstString: the first string result replaces the value, "" included.
	ReturnsFirstString
	// ReturnsFirstNonEmptyString: the first non-empty string result replaces the value.
	ReturnsFirstNonEmptyString
	// ReturnsContext: strings or {"context": str} are joined into the user message (see LLMContext).
	ReturnsContext
	// ReturnsFieldsDict: dicts of field overrides applied in order, last writer wins per field.
	ReturnsFieldsDict
	// ReturnsErrorClassification: first dict with a valid failover reason wins.
	ReturnsErrorClassification
	// ReturnsGatewayDirective: first recognised skip/rewrite/allow dict controls dispatch.
	ReturnsGatewayDirective
	// ReturnsTTSDirective: block, or {"text": replacement}; malformed results fail closed.
	ReturnsTTSDirective
	// ReturnsVerifyDirective: continue/block directive with a message keeps the turn going.
	ReturnsVerifyDirective
)

var returnsNames = [...]string{
	ReturnsIgnored:             "ignored",
	ReturnsDirective:           "directive",
	ReturnsFirstString:         "first_string",
	ReturnsFirstNonEmptyString: "first_non_empty_string",
	ReturnsContext:             "context",
	ReturnsFieldsDict:          "fields_dict",
	ReturnsErrorClassification: "error_classification",
	ReturnsGatewayDirective:    "gateway_directive",
	ReturnsTTSDirective:        "tts_directive",
	ReturnsVerifyDirective:     "verify_directive",
}

func (r Returns) String() string {
	if r >= 0 && int(r) < len(returnsNames) {
		return returnsNames[r]
	}
	return "unknown"
}

// Class is the timeout class of a hook: whether the dispatcher bounds a
// callback by plugins.hook_callback_timeout and what a timeout means.
type Class int

const (
	// Unbounded: callbacks run to completion (or until the caller gives up).
	Unbounded Class = iota
	// BoundedFailOpen: a callback that exceeds the timeout is skipped.
	BoundedFailOpen
	// FailClosed: a callback that exceeds the timeout or fails yields a block directive.
	FailClosed
	// CallerThread: callbacks run one after another on the firing goroutine, never bounded.
	CallerThread
)

var classNames = [...]string{
	Unbounded:       "unbounded",
	BoundedFailOpen: "bounded_fail_open",
	FailClosed:      "fail_closed",
	CallerThread:    "caller_thread",
}

func (c Class) String() string {
	if c >= 0 && int(c) < len(classNames) {
		return classNames[c]
	}
	return "unknown"
}

// Spec describes one hook.
type Spec struct {
	Name Name
	// Fields are the payload keyword arguments fire sites send, in upstream's
	// documented order.
	Fields []string
	// Optional are the Fields upstream sends on some paths only (see Doc); a fire
	// site sends every other field, even when its value is None.
	Optional []string
	Returns  Returns
	Class    Class
	// Telemetry says whether the dispatcher adds telemetry_schema_version.
	Telemetry bool
	// Doc says when the hook fires.
	Doc string
}

// Shared field groups; each hook still gets its own slice (see init).
var (
	streamCommon = []string{"turn_id", "iteration", "session_id", "model", "provider", "surface"}
	kanbanCommon = []string{"task_id", "board", "assignee", "run_id", "profile_name"}
	approvalBase = []string{"command", "description", "pattern_key", "pattern_keys", "session_key", "surface",
		"turn_id", "tool_call_id", "request_id", "request_digest"}
	auxIdentity = []string{"aux_task", "task_id", "turn_id", "session_id", "platform", "api_request_id",
		"api_call_count", "retry_count", "streaming", "model", "provider", "base_url", "api_mode"}
)

func join(groups ...[]string) []string {
	var out []string
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

func f(names ...string) []string { return names }

// catalogTable is the one table of hooks: the 39 upstream VALID_HOOKS names, the
// S3 additions pre_auxiliary_call, post_auxiliary_call and pre_tts_synthesis, and the
// newer gateway_ready. It is
// built on first use rather than in package init, which every hermes command pays.
func catalogTable() []Spec {
	return []Spec{
		// Tool calls.
		{Name: HookPreToolCall, Returns: ReturnsDirective, Class: FailClosed, Telemetry: true,
			Fields: f("tool_name", "args", "task_id", "session_id", "tool_call_id", "turn_id", "api_request_id", "middleware_trace"),
			Doc:    "Before each tool call executes; may block, require approval or rewrite the arguments."},
		{Name: HookPostToolCall, Returns: ReturnsIgnored, Class: BoundedFailOpen, Telemetry: true,
			Fields: f("tool_name", "args", "result", "task_id", "session_id", "tool_call_id", "turn_id", "api_request_id",
				"duration_ms", "status", "error_type", "error_message", "middleware_trace"),
			Doc: "After each tool call produced a result, including blocked and failed calls."},
		{Name: HookTransformToolResult, Returns: ReturnsFirstString, Class: BoundedFailOpen, Telemetry: true,
			Fields: f("tool_name", "args", "result", "task_id", "session_id", "tool_call_id", "turn_id", "api_request_id",
				"duration_ms", "status", "error_type", "error_message"),
			Doc: "After post_tool_call, before the result joins the conversation; a string replaces the result."},
		{Name: HookTransformTerminalOutput, Returns: ReturnsFirstString, Class: BoundedFailOpen, Telemetry: true,
			Fields: f("command", "output", "returncode", "task_id", "env_type"),
			Doc:    "Inside the terminal tool after output capture (returncode is None while running); a string replaces the output."},

		// LLM turn.
		{Name: HookPreLLMCall, Returns: ReturnsContext, Class: BoundedFailOpen, Telemetry: true,
			Fields: f("session_id", "task_id", "turn_id", "user_message", "conversation_history", "is_first_turn", "model",
				"platform", "parent_session_id", "sender_id"),
			Doc: "Once per turn before the tool loop; returned context is appended to the user message."},
		{Name: HookPostLLMCall, Returns: ReturnsIgnored, Class: BoundedFailOpen, Telemetry: true,
			Fields: f("session_id", "task_id", "turn_id", "user_message", "assistant_response", "conversation_history", "model", "platform"),
			Doc:    "After a turn finished successfully and was not interrupted."},
		{Name: HookTransformLLMOutput, Returns: ReturnsFirstNonEmptyString, Class: BoundedFailOpen, Telemetry: true,
			Fields: f("response_text", "session_id", "model", "platform"),
			Doc:    "Before post_llm_call and delivery; a non-empty string replaces the response."},
		{Name: HookPreVerify, Returns: ReturnsVerifyDirective, Class: BoundedFailOpen, Telemetry: true,
			Fields: f("session_id", "platform", "model", "coding", "attempt", "final_response", "changed_paths"),
			Doc:    "At the verify gate of a turn that edited code; a continue directive adds a synthetic user turn."},

		// Streaming observers.
		{Name: HookOnStreamStart, Returns: ReturnsIgnored, Class: Unbounded, Telemetry: true, Fields: join(streamCommon),
			Doc: "When a streaming LLM response begins."},
		{Name: HookOnStreamDelta, Returns: ReturnsIgnored, Class: Unbounded, Telemetry: true, Fields: join(streamCommon, f("delta", "kind")),
			Doc: "For each streamed text delta (reasoning deltas only with plugins.stream_reasoning_deltas)."},
		{Name: HookOnStreamEnd, Returns: ReturnsIgnored, Class: Unbounded, Telemetry: true, Fields: join(streamCommon, f("final_text", "finished", "error")),
			Doc: "When a streaming response finishes or fails, after the stream closed."},
		{Name: HookOnInterimMessage, Returns: ReturnsIgnored, Class: Unbounded, Telemetry: true, Fields: join(streamCommon, f("text", "already_streamed")),
			Doc: "When an assistant message is surfaced mid-loop before the final answer."},

		// Provider requests.
		{Name: HookPreAPIRequest, Returns: ReturnsIgnored, Class: BoundedFailOpen, Telemetry: true,
			Fields: f("task_id", "turn_id", "api_request_id", "session_id", "user_message", "conversation_history", "platform",
				"model", "provider", "base_url", "api_mode", "api_call_count", "retry_count", "request_messages", "message_count",
				"tool_count", "approx_input_tokens", "request_char_count", "max_tokens", "started_at", "middleware_trace", "request"),
			Doc: "Before each provider request attempt."},
		{Name: HookPostAPIRequest, Returns: ReturnsIgnored, Class: BoundedFailOpen, Telemetry: true,
			Fields: f("task_id", "turn_id", "api_request_id", "session_id", "platform", "model", "provider", "base_url", "api_mode",
				"api_call_count", "api_duration", "started_at", "ended_at", "finish_reason", "message_count", "response_model",
				"response", "usage", "assistant_message", "assistant_content_chars", "assistant_tool_call_count"),
			Doc: "After a provider request succeeded and was normalised."},
		{Name: HookAPIRequestError, Returns: ReturnsIgnored, Class: BoundedFailOpen, Telemetry: true,
			Fields: f("task_id", "turn_id", "api_request_id", "session_id", "platform", "model", "provider", "base_url", "api_mode",
				"api_call_count", "api_duration", "started_at", "ended_at", "status_code", "retry_count", "max_retries", "retryable",
				"reason", "error", "request"),
			Doc: "After each failed provider request attempt."},
		{Name: HookTransformAPIErrorClassification, Returns: ReturnsErrorClassification, Class: Unbounded, Telemetry: true,
			Fields: f("provider", "model", "status_code", "error_type", "error_code", "error_message", "error_body", "error",
				"approx_tokens", "context_length", "num_messages"),
			Doc: "Once per failed provider call, before the built-in error classifier; the first valid reason wins."},
		{Name: HookPreAuxiliaryCall, Returns: ReturnsIgnored, Class: BoundedFailOpen, Telemetry: true,
			Fields: join(auxIdentity, f("request_messages", "system_prompt", "message_count", "tool_count", "approx_input_tokens",
				"request_char_count", "max_tokens", "started_at", "request")),
			Doc: "Before each attempt of an auxiliary LLM call (titling, compression, vision, ...)."},
		{Name: HookPostAuxiliaryCall, Returns: ReturnsIgnored, Class: BoundedFailOpen, Telemetry: true,
			Fields: join(auxIdentity, f("message_count", "started_at", "api_duration", "ended_at", "finish_reason", "response_model",
				"usage", "response", "assistant_content_chars", "assistant_tool_call_count", "error", "error_type")),
			Doc: "After an auxiliary LLM call attempt returned or failed."},

		// Sessions.
		{Name: HookOnSessionStart, Returns: ReturnsIgnored, Class: BoundedFailOpen, Telemetry: true,
			Fields: f("session_id", "model", "platform"),
			Doc:    "On the first turn of a new session."},
		{Name: HookOnSessionEnd, Returns: ReturnsIgnored, Class: BoundedFailOpen, Telemetry: true,
			Fields: f("session_id", "task_id", "turn_id", "completed", "failed", "interrupted", "turn_exit_reason", "model", "platform",
				"reason", "api_request_id"),
			Optional: f("reason", "api_request_id"),
			Doc:      "At the end of every conversation run and on CLI exit mid-turn (exit paths may add reason, api_request_id)."},
		{Name: HookOnSessionFinalize, Returns: ReturnsIgnored, Class: Unbounded, Telemetry: true,
			Fields:   f("session_id", "platform", "reason", "old_session_id", "new_session_id"),
			Optional: f("reason", "old_session_id", "new_session_id"),
			Doc:      "At session teardown in CLI, TUI or gateway (session_id may be None; the last three are optional)."},
		{Name: HookOnSessionReset, Returns: ReturnsIgnored, Class: Unbounded, Telemetry: true,
			Fields:   f("session_id", "platform", "reason", "old_session_id", "new_session_id"),
			Optional: f("reason", "old_session_id", "new_session_id"),
			Doc:      "At a session boundary or gateway session swap (reason and old/new ids depend on the surface)."},
		{Name: HookAgentLoopStopped, Returns: ReturnsIgnored, Class: Unbounded, Telemetry: true,
			Fields: f("session_key", "platform", "reason", "invalidation_reason"),
			Doc:    "Right after a running turn was interrupted (/stop, /new fast path, TUI interrupt)."},
		{Name: HookOnSkillLifecycle, Returns: ReturnsIgnored, Class: Unbounded, Telemetry: true,
			Fields: f("action", "skill_name", "provenance", "task_id", "session_id", "use_count", "reused", "reuse_after_patch"),
			Doc:    "After a skill's usage state changed."},

		// Subagents.
		{Name: HookSubagentStart, Returns: ReturnsIgnored, Class: Unbounded, Telemetry: true,
			Fields: f("parent_session_id", "parent_turn_id", "parent_subagent_id", "child_session_id", "child_subagent_id",
				"child_role", "child_goal"),
			Doc: "After a child agent was built, before it runs."},
		{Name: HookSubagentStop, Returns: ReturnsIgnored, Class: CallerThread, Telemetry: true,
			Fields: f("parent_session_id", "parent_turn_id", "child_session_id", "child_role", "child_summary", "child_status",
				"tool_call_history", "duration_ms"),
			Doc: "After a child agent finished; dispatched on the parent's thread."},

		// Gateway and commands.
		{Name: HookPreGatewayDispatch, Returns: ReturnsGatewayDirective, Class: Unbounded, Telemetry: true,
			Fields: f("event", "gateway", "session_store"),
			Doc:    "For each inbound non-internal gateway message, before auth and pairing; may skip or rewrite it."},
		// No telemetry marker: each event type defines its own payload envelope.
		{Name: HookGatewayPlatformEvent, Returns: ReturnsIgnored, Class: Unbounded, Telemetry: false,
			Fields: f("platform", "event_type", "payload"),
			Doc:    "After authorisation, for a normalised platform event (reactions, edits, deletes, threads)."},
		// Newer upstream (not in VALID_HOOKS of the reference snapshot): once per
		// gateway start, after its platforms connected.
		{Name: HookGatewayReady, Returns: ReturnsIgnored, Class: Unbounded, Telemetry: true,
			Fields: f("gateway", "adapters"),
			Doc:    "Once after `hermes gateway` started and its platforms connected (those that could)."},
		{Name: HookPreCommand, Returns: ReturnsIgnored, Class: Unbounded, Telemetry: true,
			Fields: f("surface", "command", "alias_used", "args_raw", "session_key", "platform"),
			Doc:    "Before a recognised slash command's handler runs (not for running-agent /stop or /approve)."},

		// Approvals.
		{Name: HookPreApprovalRequest, Returns: ReturnsIgnored, Class: Unbounded, Telemetry: true,
			Fields:   join(approvalBase),
			Optional: f("request_id", "request_digest"),
			Doc:      "Before a prompted or smart approval (request_id, request_digest only for transports)."},
		{Name: HookPostApprovalResponse, Returns: ReturnsIgnored, Class: Unbounded, Telemetry: true,
			Fields:   join(approvalBase, f("choice", "decided_by")),
			Optional: f("request_id", "request_digest", "decided_by"),
			Doc:      "After an approval decision, timeout, withdrawal or notification failure (decided_by only for smart approvals)."},

		// Rooms and speech.
		{Name: HookOnRoomMemberActivity, Returns: ReturnsIgnored, Class: Unbounded, Telemetry: true,
			Fields: f("room_id", "thread_id", "member_id", "turn_id", "task_id", "execution_generation", "kind", "seq", "payload"),
			Doc:    "For each runtime event of a hosted group-chat member turn."},
		{Name: HookPreTranscription, Returns: ReturnsFieldsDict, Class: Unbounded, Telemetry: true,
			Fields: f("file_path", "provider", "model", "language", "prompt", "source"),
			Doc:    "After speech-to-text provider resolution, before the backend runs; may override prompt, language, model."},
		{Name: HookPreTTSSynthesis, Returns: ReturnsTTSDirective, Class: FailClosed, Telemetry: true,
			Fields: f("text", "provider"),
			Doc:    "Before each text-to-speech synthesis request; may block it or replace the text."},

		// Kanban.
		{Name: HookKanbanTaskClaimed, Returns: ReturnsIgnored, Class: Unbounded, Telemetry: true, Fields: join(kanbanCommon),
			Doc: "After a task claim was committed, before the worker spawns."},
		{Name: HookKanbanTaskCompleted, Returns: ReturnsIgnored, Class: Unbounded, Telemetry: true, Fields: join(kanbanCommon, f("summary")),
			Doc: "After a task was completed and cleaned up."},
		{Name: HookKanbanTaskBlocked, Returns: ReturnsIgnored, Class: Unbounded, Telemetry: true, Fields: join(kanbanCommon, f("reason")),
			Doc: "After a task moved to blocked."},
		{Name: HookOnKanbanWorkerSpawned, Returns: ReturnsIgnored, Class: Unbounded, Telemetry: true,
			Fields: join(kanbanCommon, f("worker_pid", "workspace_path")),
			Doc:    "After a worker was spawned and its pid persisted."},
		{Name: HookOnKanbanWorkerExited, Returns: ReturnsIgnored, Class: Unbounded, Telemetry: true,
			Fields: join(kanbanCommon, f("worker_pid", "exit_kind", "exit_code", "outcome", "retry_status")),
			Doc:    "After a dead worker's task was reclaimed."},
		{Name: HookOnKanbanWorkerStaleClaim, Returns: ReturnsIgnored, Class: Unbounded, Telemetry: true,
			Fields: join(kanbanCommon, f("worker_pid", "heartbeat_stale", "retry_status")),
			Doc:    "After an expired claim was reclaimed."},
		{Name: HookOnKanbanTaskUpdated, Returns: ReturnsIgnored, Class: Unbounded, Telemetry: true,
			Fields: join(kanbanCommon, f("changed_fields")),
			Doc:    "After a committed task field write outside claim/complete/block (changed_fields holds names only)."},
		{Name: HookOnKanbanDispatchTick, Returns: ReturnsIgnored, Class: Unbounded, Telemetry: true,
			Fields: f("board", "profile_name", "dry_run", "outcome", "result"),
			Doc:    "Once per dispatcher tick, after the dispatch lock was released."},
	}
}

type catalogIndex struct {
	specs       []Spec
	byName      map[Name]*Spec
	sortedNames []string
	shapes      map[Name]payloadShape
}

var index = sync.OnceValue(func() *catalogIndex {
	specs := catalogTable()
	ix := &catalogIndex{specs: specs, byName: make(map[Name]*Spec, len(specs)), shapes: make(map[Name]payloadShape, len(specs))}
	for i := range specs {
		s := &specs[i]
		s.Fields = slices.Clip(slices.Clone(s.Fields))
		s.Optional = slices.Clip(slices.Clone(s.Optional))
		ix.byName[s.Name] = s
		ix.shapes[s.Name] = newPayloadShape(s)
		ix.sortedNames = append(ix.sortedNames, string(s.Name))
	}
	sort.Strings(ix.sortedNames)
	return ix
})

// catalog returns the indexed table.
func catalog() []Spec { return index().specs }

// Lookup returns the spec of a known hook.
func Lookup(name string) (Spec, bool) {
	s, ok := index().byName[Name(name)]
	if !ok {
		return Spec{}, false
	}
	out := *s
	// Callers must not be able to edit the table.
	out.Fields, out.Optional = slices.Clone(s.Fields), slices.Clone(s.Optional)
	return out, true
}

// Valid reports whether name is a known hook.
func Valid(name string) bool {
	_, ok := index().byName[Name(name)]
	return ok
}

// Names returns every hook name, sorted.
func Names() []string { return slices.Clone(index().sortedNames) }
