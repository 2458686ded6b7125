package hooks

import (
	"log/slog"
	"maps"
	"strings"
	"unicode/utf8"
)

// Directive is the decision pre_tool_call callbacks reached.
type Directive struct {
	Action  string // "block" | "approve" | ""
	Message string // block: the tool error text; approve: optional reason
	RuleKey string // approve only; the caller falls back to the tool name
}

// PreToolCall folds pre_tool_call results into one directive and the
// arguments the tool should run with.
//
// Any valid block beats any approve whatever the order (our choice where
// upstream versions differ); otherwise the first valid approve wins. Modify
// results are shallow-merged in order over args, later keys winning, and are
// applied even when a result blocks. The returned map is nil when no modify
// applied; args itself is never changed. Invalid shapes are ignored.
func PreToolCall(results []any, args map[string]any) (Directive, map[string]any) {
	var (
		modified       map[string]any
		block, approve *Directive
	)
	for i, r := range results {
		m, ok := r.(map[string]any)
		if !ok {
			ignoreResult(HookPreToolCall, i, "not a dict")
			continue
		}
		action, isAction := m["action"].(string)
		decision, isDecision := m["decision"].(string)
		switch {
		case isAction && action == "modify":
			modified = mergeModify(modified, args, m["args"], i)
		case !isAction && isDecision && decision == "modify": // shell hook form
			modified = mergeModify(modified, args, m["tool_input"], i)
		case isAction && action == "block":
			msg, _ := m["message"].(string)
			if msg == "" {
				ignoreResult(HookPreToolCall, i, "block without a message")
				continue
			}
			if block == nil {
				block = &Directive{Action: "block", Message: msg}
			}
		case !isAction && isDecision && decision == "block": // shell hook form
			msg, _ := m["reason"].(string)
			if msg == "" {
				ignoreResult(HookPreToolCall, i, "block without a reason")
				continue
			}
			if block == nil {
				block = &Directive{Action: "block", Message: msg}
			}
		case isAction && action == "approve":
			if approve == nil {
				msg, _ := m["message"].(string)
				key, _ := m["rule_key"].(string)
				approve = &Directive{Action: "approve", Message: msg, RuleKey: strings.TrimSpace(key)}
			}
		default:
			ignoreResult(HookPreToolCall, i, "no recognised action")
		}
	}
	switch {
	case block != nil:
		return *block, modified
	case approve != nil:
		return *approve, modified
	}
	return Directive{}, modified
}

func mergeModify(acc, args map[string]any, partial any, i int) map[string]any {
	p, ok := partial.(map[string]any)
	if !ok || len(p) == 0 {
		ignoreResult(HookPreToolCall, i, "modify without a non-empty args dict")
		return acc
	}
	if acc == nil {
		acc = make(map[string]any, len(args)+len(p))
		maps.Copy(acc, args)
	}
	maps.Copy(acc, p)
	return acc
}

func ignoreResult(hook Name, i int, why string) {
	slog.Debug("ignoring hook result", "hook", string(hook), "index", i, "reason", why)
}

// FirstString returns the first string result. With nonEmpty, empty strings
// are passed over (transform_llm_output); without, "" is a valid replacement
// (transform_tool_result, transform_terminal_output).
func FirstString(results []any, nonEmpty bool) (string, bool) {
	for _, r := range results {
		if s, ok := r.(string); ok && (s != "" || !nonEmpty) {
			return s, true
		}
	}
	return "", false
}

// MaxContextChars caps each piece of pre_llm_call context, in characters.
const MaxContextChars = 10_000

// LLMContextResult is the context pre_llm_call callbacks contributed.
type LLMContextResult struct {
	// Pieces are the non-empty contributions in plugin order, uncut.
	Pieces []string
	// Oversized indexes the Pieces longer than MaxContextChars. The caller
	// spills each to a file and replaces it in Pieces with a short preview.
	Oversized []int
}

// LLMContext collects every non-empty string or {"context": string} result.
func LLMContext(results []any) LLMContextResult {
	var out LLMContextResult
	for i, r := range results {
		var s string
		switch v := r.(type) {
		case string:
			s = v
		case map[string]any:
			s, _ = v["context"].(string)
		}
		if s == "" {
			ignoreResult(HookPreLLMCall, i, "no context string")
			continue
		}
		if utf8.RuneCountInString(s) > MaxContextChars {
			out.Oversized = append(out.Oversized, len(out.Pieces))
		}
		out.Pieces = append(out.Pieces, s)
	}
	return out
}

// Text joins the pieces with blank lines. A piece still over the cap (the
// caller did not spill it) is cut to MaxContextChars so the cap always holds.
func (r LLMContextResult) Text() string {
	parts := make([]string, len(r.Pieces))
	for i, p := range r.Pieces {
		parts[i] = truncateRunes(p, MaxContextChars)
	}
	return strings.Join(parts, "\n\n")
}
