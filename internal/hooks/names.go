package hooks

// Name is a hook name. Fire sites name hooks by the constants below, so a
// misspelt hook is a compile error instead of a hook that never fires; the names
// plugins register with stay plain strings (an unknown one is kept, as upstream).
type Name string

// The hooks of the catalog, in its order.
const (
	// Tool calls.
	HookPreToolCall             Name = "pre_tool_call"
	HookPostToolCall            Name = "post_tool_call"
	HookTransformToolResult     Name = "transform_tool_result"
	HookTransformTerminalOutput Name = "transform_terminal_output"

	// LLM turn.
	HookPreLLMCall         Name = "pre_llm_call"
	HookPostLLMCall        Name = "post_llm_call"
	HookTransformLLMOutput Name = "transform_llm_output"
	HookPreVerify          Name = "pre_verify"

	// Streaming observers.
	HookOnStreamStart    Name = "on_stream_start"
	HookOnStreamDelta    Name = "on_stream_delta"
	HookOnStreamEnd      Name = "on_stream_end"
	HookOnInterimMessage Name = "on_interim_message"

	// Provider requests.
	HookPreAPIRequest                   Name = "pre_api_request"
	HookPostAPIRequest                  Name = "post_api_request"
	HookAPIRequestError                 Name = "api_request_error"
	HookTransformAPIErrorClassification Name = "transform_api_error_classification"
	HookPreAuxiliaryCall                Name = "pre_auxiliary_call"
	HookPostAuxiliaryCall               Name = "post_auxiliary_call"

	// Sessions.
	HookOnSessionStart    Name = "on_session_start"
	HookOnSessionEnd      Name = "on_session_end"
	HookOnSessionFinalize Name = "on_session_finalize"
	HookOnSessionReset    Name = "on_session_reset"
	HookAgentLoopStopped  Name = "agent_loop_stopped"
	HookOnSkillLifecycle  Name = "on_skill_lifecycle"

	// Subagents.
	HookSubagentStart Name = "subagent_start"
	HookSubagentStop  Name = "subagent_stop"

	// Gateway and commands.
	HookPreGatewayDispatch   Name = "pre_gateway_dispatch"
	HookGatewayPlatformEvent Name = "gateway_platform_event"
	HookGatewayReady         Name = "gateway_ready"
	HookPreCommand           Name = "pre_command"

	// Approvals.
	HookPreApprovalRequest   Name = "pre_approval_request"
	HookPostApprovalResponse Name = "post_approval_response"

	// Rooms and speech.
	HookOnRoomMemberActivity Name = "on_room_member_activity"
	HookPreTranscription     Name = "pre_transcription"
	HookPreTTSSynthesis      Name = "pre_tts_synthesis"

	// Kanban.
	HookKanbanTaskClaimed        Name = "kanban_task_claimed"
	HookKanbanTaskCompleted      Name = "kanban_task_completed"
	HookKanbanTaskBlocked        Name = "kanban_task_blocked"
	HookOnKanbanWorkerSpawned    Name = "on_kanban_worker_spawned"
	HookOnKanbanWorkerExited     Name = "on_kanban_worker_exited"
	HookOnKanbanWorkerStaleClaim Name = "on_kanban_worker_stale_claim"
	HookOnKanbanTaskUpdated      Name = "on_kanban_task_updated"
	HookOnKanbanDispatchTick     Name = "on_kanban_dispatch_tick"
)
