// Package shellhooks runs the `hooks:` section of config.yaml: per hook event a
// list of commands that get the event's payload as JSON on stdin and may answer
// with a directive on stdout, in Hermes' shape or in Claude Code's (so existing
// Claude Code hook scripts work unchanged). Each command runs without a shell,
// in a reaper cell of its own, bounded by its timeout, and only after the user
// consented to that (event, command) pair once (shell-hooks-allowlist.json).
//
// The package parses the section (Parse), runs a hook (Runner), turns what it
// printed into the result a plugin callback would have returned (Evaluate), and
// keeps the consent records (Allowlist). internal/app registers the consented
// hooks on the plugin hook dispatcher, after the plugins' own callbacks.
package shellhooks

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"
	"time"

	"github.com/hermes-go/hermes/internal/hooks"
)

const (
	// DefaultTimeout bounds a hook that sets no timeout (upstream's 60 s).
	DefaultTimeout = 60 * time.Second
	// MaxTimeout is the most a hook may ask for; more is clamped (upstream's 300 s).
	MaxTimeout = 300 * time.Second
	// BlockExitCode blocks a pre_tool_call whatever the hook printed (Claude Code's contract).
	BlockExitCode = 2
	// AllowlistFile is the consent store's name in HERMES_HOME.
	AllowlistFile = "shell-hooks-allowlist.json"
)

// unsupported are hooks whose result a shell hook has no way to express.
var unsupported = map[string]bool{string(hooks.HookTransformAPIErrorClassification): true}

// reserved are keys of `hooks:` that configure something else, not an event.
var reserved = map[string]bool{"output_spill": true, "outbound": true}

// toolEvents are the hooks whose payload names a tool: only they honour matcher.
var toolEvents = map[string]bool{string(hooks.HookPreToolCall): true, string(hooks.HookPostToolCall): true}

// blockingEvents honour a block: exit code 2 and fail_closed apply only to them.
var blockingEvents = map[string]bool{string(hooks.HookPreToolCall): true}

// Spec is one entry of `hooks:`, validated.
type Spec struct {
	Event      string
	Index      int    // position in the event's list, for messages
	Command    string // as configured (trimmed); also the consent key
	Matcher    string // "" matches every tool
	Timeout    time.Duration
	FailClosed bool

	matcher *regexp.Regexp
}

// Where names the entry as config.yaml spells it: hooks.pre_tool_call[0].
func (s Spec) Where() string { return fmt.Sprintf("hooks.%s[%d]", s.Event, s.Index) }

// MatchesTool reports whether the hook runs for a call of tool. Matchers are
// honoured for tool events only and must match the whole name (upstream's
// re.fullmatch): "terminal|patch" does not match "terminal_v2".
func (s Spec) MatchesTool(tool string) bool {
	if s.matcher == nil || !toolEvents[s.Event] {
		return true
	}
	return s.matcher.MatchString(tool)
}

// Parse reads the `hooks:` section (config.yaml's value, nil when absent). The
// entries that are wrong are reported together in err, each naming its place
// (hooks.pre_tool_call[0].matcher) and what to do; a guard that silently does
// not load is worse than a command that refuses to start. What hermes can fix
// for the user (a timeout past the maximum, a matcher on an event that has no
// tool) comes back as warnings.
func Parse(section any) (specs []Spec, warnings []string, err error) {
	if section == nil {
		return nil, nil, nil
	}
	m, ok := section.(map[string]any)
	if !ok {
		return nil, nil, fmt.Errorf("config.yaml hooks: must be a mapping of event name to a list of hooks, not %s", kindOf(section))
	}
	events := make([]string, 0, len(m))
	for k := range m {
		events = append(events, k)
	}
	sort.Strings(events)
	var errs []error
	for _, event := range events {
		if reserved[event] {
			continue
		}
		if e := checkEvent(event); e != nil {
			errs = append(errs, fmt.Errorf("config.yaml hooks.%s: %w", event, e))
			continue
		}
		raw := m[event]
		if raw == nil {
			continue
		}
		list, ok := raw.([]any)
		if !ok {
			errs = append(errs, fmt.Errorf("config.yaml hooks.%s: must be a list of hooks ({command: ...}), not %s", event, kindOf(raw)))
			continue
		}
		for i, entry := range list {
			s, ws, e := parseEntry(event, i, entry)
			warnings = append(warnings, ws...)
			if e != nil {
				errs = append(errs, e)
				continue
			}
			specs = append(specs, s)
		}
	}
	return specs, warnings, errors.Join(errs...)
}

// ValidEvent says why event cannot have shell hooks (nil: it can).
func ValidEvent(event string) error { return checkEvent(event) }

func checkEvent(event string) error {
	if unsupported[event] {
		return fmt.Errorf("%s is for Python plugins only (a shell hook cannot return its result); remove the entry or write a plugin", event)
	}
	if hooks.Valid(event) {
		return nil
	}
	if near := closest(event, hooks.Names()); near != "" {
		return fmt.Errorf("unknown hook event %q; did you mean %s?", event, near)
	}
	return fmt.Errorf("unknown hook event %q (valid: %s)", event, strings.Join(hooks.Names(), ", "))
}

func parseEntry(event string, i int, raw any) (Spec, []string, error) {
	s := Spec{Event: event, Index: i, Timeout: DefaultTimeout}
	where := s.Where()
	m, ok := raw.(map[string]any)
	if !ok {
		return s, nil, fmt.Errorf("config.yaml %s: must be a mapping with a command key, not %s", where, kindOf(raw))
	}
	var warnings []string
	for k := range m {
		switch k {
		case "command", "matcher", "timeout", "fail_closed", "failClosed":
		default:
			warnings = append(warnings, fmt.Sprintf("config.yaml %s: unknown key %q ignored (known: command, matcher, timeout, fail_closed)", where, k))
		}
	}
	cmd, _ := m["command"].(string)
	s.Command = strings.TrimSpace(cmd)
	if s.Command == "" {
		return s, warnings, fmt.Errorf("config.yaml %s: needs a non-empty command (the program to run and its arguments, e.g. command: ~/.hermes/hooks/guard.sh)", where)
	}
	if _, err := SplitCommand(s.Command); err != nil {
		return s, warnings, fmt.Errorf("config.yaml %s.command: %w", where, err)
	}
	if v, set := m["matcher"]; set && v != nil {
		pat, ok := v.(string)
		if !ok {
			return s, warnings, fmt.Errorf("config.yaml %s.matcher: must be a string (a regular expression over the tool name), not %s", where, kindOf(v))
		}
		pat = strings.TrimSpace(pat) // YAML folding leaves spaces that would never match
		switch {
		case pat == "":
		case !toolEvents[event]:
			warnings = append(warnings, fmt.Sprintf("config.yaml %s.matcher: ignored, matchers apply to pre_tool_call and post_tool_call only; the hook runs on every %s", where, event))
		default:
			_, err := regexp.Compile(pat) // its own error, not the anchored form's
			re, anchoredErr := regexp.Compile(`^(?:` + pat + `)$`)
			if err == nil {
				err = anchoredErr
			}
			if err != nil {
				return s, warnings, fmt.Errorf("config.yaml %s.matcher: %q is not a valid regular expression (%v); fix it (Go RE2 syntax: no lookarounds or backreferences) or remove the matcher to run on every tool", where, pat, unwrapRegexp(err))
			}
			s.Matcher, s.matcher = pat, re
		}
	}
	if v, set := m["timeout"]; set && v != nil {
		secs, ok := number(v)
		switch {
		case !ok:
			return s, warnings, fmt.Errorf("config.yaml %s.timeout: must be a number of seconds, not %s", where, kindOf(v))
		case secs < 1:
			return s, warnings, fmt.Errorf("config.yaml %s.timeout: %v is too short; give at least 1 (seconds), or leave it out for %d", where, v, int(DefaultTimeout.Seconds()))
		case time.Duration(secs*float64(time.Second)) > MaxTimeout:
			warnings = append(warnings, fmt.Sprintf("config.yaml %s.timeout: %v s is over the maximum; %d s is used", where, v, int(MaxTimeout.Seconds())))
			s.Timeout = MaxTimeout
		default:
			s.Timeout = time.Duration(secs * float64(time.Second))
		}
	}
	fc, set := m["fail_closed"] // the canonical spelling wins over Claude Code's
	if !set {
		fc, set = m["failClosed"]
	}
	if set && fc != nil {
		b, ok := fc.(bool)
		if !ok {
			return s, warnings, fmt.Errorf("config.yaml %s.fail_closed: must be true or false, not %s", where, kindOf(fc))
		}
		if b && !blockingEvents[event] {
			warnings = append(warnings, fmt.Sprintf("config.yaml %s.fail_closed: ignored, only pre_tool_call can fail closed; this hook fails open", where))
			b = false
		}
		s.FailClosed = b
	}
	return s, warnings, nil
}

func unwrapRegexp(err error) string {
	var re *syntax.Error
	if errors.As(err, &re) {
		return re.Code.String() + ": " + re.Expr
	}
	return err.Error()
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int, int64, uint64, float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	}
	return fmt.Sprintf("%T", v)
}

// closest is the valid name nearest to name, if any is near enough to be a typo.
func closest(name string, names []string) string {
	best, bestD := "", len(name)/3+1
	for _, n := range names {
		if d := distance(name, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// distance is the Levenshtein distance of a and b, in bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
