package shellhooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/hermes-go/hermes/internal/hooks"
	"github.com/hermes-go/hermes/internal/jsonx"
)

// DefaultBlockMessage is the tool error of a block that gave no reason.
const DefaultBlockMessage = "Blocked by shell hook."

const stderrMessageLimit = 400

// topLevel are the payload keys the stdin JSON lifts out of extra.
var topLevel = map[string]bool{"tool_name": true, "args": true, "session_id": true, "parent_session_id": true}

// StdinPayload is what a hook reads on stdin: upstream's wire shape
// {hook_event_name, tool_name, tool_input, session_id, cwd, profile, extra},
// which is also what Claude Code hook scripts read (tool_name, tool_input).
func StdinPayload(event string, payload map[string]any, cwd, profile string) ([]byte, error) {
	var toolInput any
	if args, ok := payload["args"].(map[string]any); ok {
		toolInput = args
	}
	session, _ := payload["session_id"].(string)
	if session == "" {
		session, _ = payload["parent_session_id"].(string)
	}
	extra := make(map[string]any, len(payload))
	for k, v := range payload {
		if !topLevel[k] {
			extra[k] = v
		}
	}
	// A struct keeps upstream's key order on the wire.
	return jsonx.Marshal(struct {
		Event     string         `json:"hook_event_name"`
		ToolName  any            `json:"tool_name"`
		ToolInput any            `json:"tool_input"`
		SessionID string         `json:"session_id"`
		Cwd       string         `json:"cwd"`
		Profile   string         `json:"profile"`
		Extra     map[string]any `json:"extra"`
	}{event, payload["tool_name"], toolInput, session, cwd, profile, extra})
}

// Outcome is what a run of a hook means to the dispatcher: the result a plugin
// callback would have returned (nil: no contribution), and a warning to log
// when the hook misbehaved.
type Outcome struct {
	Result  map[string]any
	Warning string
}

// Evaluate turns a finished run into the hook's contribution. A hook that
// could not run, timed out or printed garbage fails open (no result) unless
// it is a fail_closed pre_tool_call hook, which then blocks. Exit code 2
// blocks a pre_tool_call (its message: a block directive on stdout, else
// stderr, else DefaultBlockMessage). Any other non-zero exit is warned about,
// and stdout is still read (it may carry a block).
func Evaluate(spec Spec, r Result) Outcome {
	blocking := blockingEvents[spec.Event]
	failClosed := spec.FailClosed && blocking
	fail := func(why string) Outcome {
		o := Outcome{Warning: fmt.Sprintf("shell hook %s (%s) %s", spec.Where(), spec.Command, why)}
		if failClosed {
			o.Result = block(fmt.Sprintf("hook %s failed closed: %s", spec.Command, why))
		}
		return o
	}
	switch {
	case r.Err != nil:
		return fail(r.Err.Error())
	case r.TimedOut:
		return fail(fmt.Sprintf("timed out after %s and was killed", spec.Timeout))
	case r.Cancelled:
		// The caller gave up (an interrupt, the dispatcher's own bound): its
		// verdict stands, this hook adds none.
		return Outcome{}
	}
	stderr := strings.TrimSpace(truncate(string(r.Stderr), stderrMessageLimit))
	parsed, perr := ParseResponse(spec.Event, r.Stdout)
	if r.ExitCode == BlockExitCode && blocking {
		if parsed != nil && parsed["action"] == "block" {
			return Outcome{Result: parsed}
		}
		msg := stderr
		if msg == "" {
			msg = DefaultBlockMessage
		}
		return Outcome{Result: block(msg)}
	}
	if r.StdoutTruncated {
		return fail(fmt.Sprintf("printed more than %d MiB on stdout (only that much is read); a directive is one small JSON object", MaxStdout>>20))
	}
	var o Outcome
	if r.ExitCode != 0 {
		o.Warning = fmt.Sprintf("shell hook %s (%s) exited %d", spec.Where(), spec.Command, r.ExitCode)
		if stderr != "" {
			o.Warning += ": " + stderr
		}
	}
	if perr != nil {
		if failClosed {
			// A fail-closed gate must not let a call through on a stack trace.
			return fail(perr.Error())
		}
		if o.Warning == "" {
			o.Warning = fmt.Sprintf("shell hook %s (%s) %s", spec.Where(), spec.Command, perr)
		}
		return o
	}
	o.Result = parsed
	return o
}

// ParseResponse translates what a hook printed into the Hermes result shape:
// for pre_tool_call {"action":"block","message"}, {"action":"approve",...} or
// {"action":"modify","args"}; for pre_verify {"action":"continue","message"};
// for every other hook {"context": text}. It reads Hermes' directives
// ({"action": ...}, {"context": ...}) and Claude Code's ({"decision":"block",
// "reason"}, {"hookSpecificOutput": {"permissionDecision": "deny"|"ask",
// "permissionDecisionReason", "updatedInput", "additionalContext"}}). Empty
// stdout is no result; stdout that is not one JSON object is an error.
func ParseResponse(event string, stdout []byte) (map[string]any, error) {
	stdout = bytes.TrimSpace(stdout)
	if len(stdout) == 0 {
		return nil, nil
	}
	var data map[string]any
	if err := json.Unmarshal(stdout, &data); err != nil || data == nil {
		return nil, fmt.Errorf("printed something that is not a JSON object (expected a directive such as {\"decision\": \"block\", \"reason\": \"...\"}, or nothing): %q", truncate(string(stdout), 120))
	}
	switch event {
	case string(hooks.HookPreToolCall):
		return parsePreToolCall(data), nil
	case string(hooks.HookPreVerify):
		return parsePreVerify(data), nil
	}
	return parseContext(data), nil
}

func parsePreToolCall(data map[string]any) map[string]any {
	spec, _ := data["hookSpecificOutput"].(map[string]any)
	decision, _ := spec["permissionDecision"].(string)
	reason := firstString(spec["permissionDecisionReason"])
	switch {
	case data["action"] == "block":
		return block(firstString(data["message"], data["reason"]))
	case data["decision"] == "block":
		return block(firstString(data["reason"], data["message"]))
	case decision == "deny":
		return block(firstString(reason, data["reason"]))
	case decision == "ask":
		// Claude Code asks the user; hermes' equivalent is the approval prompt.
		return map[string]any{"action": "approve", "message": reason}
	}
	for _, m := range []struct {
		verb, key string
		val       any
	}{{"action", "args", data["args"]}, {"decision", "tool_input", data["tool_input"]}} {
		if data[m.verb] == "modify" {
			if args, ok := m.val.(map[string]any); ok && len(args) > 0 {
				return map[string]any{"action": "modify", "args": args}
			}
		}
	}
	if in, ok := spec["updatedInput"].(map[string]any); ok && len(in) > 0 {
		return map[string]any{"action": "modify", "args": in}
	}
	return nil
}

func parsePreVerify(data map[string]any) map[string]any {
	// "continue" (Hermes) and "block" (Claude Code's Stop hook) both mean: keep going.
	action := strings.ToLower(strings.TrimSpace(firstString(data["action"], data["decision"])))
	msg := strings.TrimSpace(firstString(data["message"], data["reason"]))
	if (action == "continue" || action == "block") && msg != "" {
		return map[string]any{"action": "continue", "message": msg}
	}
	return nil
}

func parseContext(data map[string]any) map[string]any {
	ctx := firstString(data["context"])
	if strings.TrimSpace(ctx) == "" {
		spec, _ := data["hookSpecificOutput"].(map[string]any)
		ctx = firstString(spec["additionalContext"])
	}
	if strings.TrimSpace(ctx) == "" {
		return nil
	}
	return map[string]any{"context": ctx}
}

func block(msg string) map[string]any {
	if msg == "" {
		msg = DefaultBlockMessage
	}
	return map[string]any{"action": "block", "message": msg}
}

// firstString is the first non-empty string among vs.
func firstString(vs ...any) string {
	for _, v := range vs {
		if s, ok := v.(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// truncate cuts s to n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
