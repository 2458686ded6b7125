package shellhooks

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name     string
		section  any
		want     []Spec // compared on Event, Index, Command, Matcher, Timeout, FailClosed
		warnings []string
		errs     []string
	}{
		{name: "absent", section: nil},
		{name: "full entry",
			section: map[string]any{"pre_tool_call": []any{map[string]any{
				"matcher": " terminal|patch ", "command": "~/guard.sh --strict", "timeout": 5, "fail_closed": true}}},
			want: []Spec{{Event: "pre_tool_call", Command: "~/guard.sh --strict", Matcher: "terminal|patch", Timeout: 5 * time.Second, FailClosed: true}}},
		{name: "defaults and Claude Code's failClosed",
			section: map[string]any{"post_tool_call": []any{map[string]any{"command": "log.sh"}},
				"pre_tool_call": []any{map[string]any{"command": "a", "failClosed": true}}},
			want: []Spec{{Event: "post_tool_call", Command: "log.sh", Timeout: DefaultTimeout},
				{Event: "pre_tool_call", Command: "a", Timeout: DefaultTimeout, FailClosed: true}}},
		{name: "reserved keys and empty event",
			section: map[string]any{"output_spill": map[string]any{"enabled": true}, "outbound": []any{}, "pre_llm_call": nil}},
		{name: "timeout clamped",
			section:  map[string]any{"pre_llm_call": []any{map[string]any{"command": "x", "timeout": 900}}},
			want:     []Spec{{Event: "pre_llm_call", Command: "x", Timeout: MaxTimeout}},
			warnings: []string{"hooks.pre_llm_call[0].timeout: 900 s is over the maximum; 300 s is used"}},
		{name: "matcher on a non-tool event is ignored",
			section:  map[string]any{"pre_llm_call": []any{map[string]any{"command": "x", "matcher": "terminal"}}},
			want:     []Spec{{Event: "pre_llm_call", Command: "x", Timeout: DefaultTimeout}},
			warnings: []string{"hooks.pre_llm_call[0].matcher: ignored"}},
		{name: "fail_closed on a non-blocking event is ignored",
			section:  map[string]any{"post_tool_call": []any{map[string]any{"command": "x", "fail_closed": true}}},
			want:     []Spec{{Event: "post_tool_call", Command: "x", Timeout: DefaultTimeout}},
			warnings: []string{"only pre_tool_call can fail closed"}},
		{name: "unknown key warned",
			section:  map[string]any{"pre_tool_call": []any{map[string]any{"command": "x", "type": "command"}}},
			want:     []Spec{{Event: "pre_tool_call", Command: "x", Timeout: DefaultTimeout}},
			warnings: []string{`hooks.pre_tool_call[0]: unknown key "type" ignored`}},
		{name: "invalid matcher names the entry",
			section: map[string]any{"pre_tool_call": []any{map[string]any{"command": "ok"}, map[string]any{"command": "x", "matcher": "(terminal"}}},
			want:    []Spec{{Event: "pre_tool_call", Command: "ok", Timeout: DefaultTimeout}},
			errs:    []string{`config.yaml hooks.pre_tool_call[1].matcher: "(terminal" is not a valid regular expression (missing closing ): (terminal)`}},
		{name: "lookahead is not RE2",
			section: map[string]any{"pre_tool_call": []any{map[string]any{"command": "x", "matcher": "(?!read).*"}}},
			errs:    []string{"hooks.pre_tool_call[0].matcher", "no lookarounds"}},
		{name: "missing command",
			section: map[string]any{"pre_tool_call": []any{map[string]any{"matcher": "terminal"}}},
			errs:    []string{"config.yaml hooks.pre_tool_call[0]: needs a non-empty command"}},
		{name: "unclosed quote",
			section: map[string]any{"pre_tool_call": []any{map[string]any{"command": "guard.sh 'oops"}}},
			errs:    []string{"hooks.pre_tool_call[0].command: the command has an unclosed single quote"}},
		{name: "entry not a mapping",
			section: map[string]any{"pre_tool_call": []any{"guard.sh"}},
			errs:    []string{"hooks.pre_tool_call[0]: must be a mapping with a command key, not a string"}},
		{name: "event not a list",
			section: map[string]any{"pre_tool_call": map[string]any{"command": "x"}},
			errs:    []string{"hooks.pre_tool_call: must be a list of hooks"}},
		{name: "section not a mapping",
			section: []any{"x"},
			errs:    []string{"config.yaml hooks: must be a mapping"}},
		{name: "typo gets a suggestion",
			section: map[string]any{"pre_tool_cal": []any{map[string]any{"command": "x"}}},
			errs:    []string{`config.yaml hooks.pre_tool_cal: unknown hook event "pre_tool_cal"; did you mean pre_tool_call?`}},
		{name: "python-only hook refused",
			section: map[string]any{"transform_api_error_classification": []any{map[string]any{"command": "x"}}},
			errs:    []string{"for Python plugins only"}},
		{name: "bad timeout and fail_closed types",
			section: map[string]any{"pre_tool_call": []any{
				map[string]any{"command": "x", "timeout": "ten"},
				map[string]any{"command": "x", "timeout": 0},
				map[string]any{"command": "x", "fail_closed": "yes"}}},
			errs: []string{"[0].timeout: must be a number of seconds, not a string", "[1].timeout: 0 is too short",
				"[2].fail_closed: must be true or false, not a string"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			specs, warnings, err := Parse(tt.section)
			var got []Spec
			for _, s := range specs {
				got = append(got, Spec{Event: s.Event, Index: s.Index, Command: s.Command, Matcher: s.Matcher,
					Timeout: s.Timeout, FailClosed: s.FailClosed})
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("specs = %+v, want %+v", got, tt.want)
			}
			if len(warnings) != len(tt.warnings) {
				t.Errorf("warnings = %q, want %d like %q", warnings, len(tt.warnings), tt.warnings)
			}
			for i, w := range tt.warnings {
				if i < len(warnings) && !strings.Contains(warnings[i], w) {
					t.Errorf("warning %d = %q, want it to contain %q", i, warnings[i], w)
				}
			}
			if len(tt.errs) == 0 && err != nil {
				t.Fatalf("err = %v", err)
			}
			for _, e := range tt.errs {
				if err == nil || !strings.Contains(err.Error(), e) {
					t.Errorf("err = %v, want it to contain %q", err, e)
				}
			}
		})
	}
}

func TestMatchesTool(t *testing.T) {
	specs, _, err := Parse(map[string]any{
		"pre_tool_call":  []any{map[string]any{"command": "x", "matcher": "terminal|patch"}, map[string]any{"command": "y"}},
		"post_tool_call": []any{map[string]any{"command": "z", "matcher": "mcp__.*"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		spec int
		tool string
		want bool
	}{
		{0, "terminal", true}, {0, "patch", true}, {0, "terminal_v2", false}, {0, "my_terminal", false}, {0, "", false},
		{1, "anything", true}, {1, "", true},
		{2, "mcp__fs__read", true}, {2, "read_file", false},
	}
	byCmd := map[string]Spec{}
	for _, s := range specs {
		byCmd[s.Command] = s
	}
	order := []Spec{byCmd["x"], byCmd["y"], byCmd["z"]}
	for _, tt := range tests {
		if got := order[tt.spec].MatchesTool(tt.tool); got != tt.want {
			t.Errorf("%s matcher %q on %q = %v, want %v", order[tt.spec].Command, order[tt.spec].Matcher, tt.tool, got, tt.want)
		}
	}
}

func TestSplitCommand(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		err  string
	}{
		{in: "guard.sh", want: []string{"guard.sh"}},
		{in: "  python3   /x/hook.py  --flag ", want: []string{"python3", "/x/hook.py", "--flag"}},
		{in: `bash -c 'echo "$HOME" | cat'`, want: []string{"bash", "-c", `echo "$HOME" | cat`}},
		{in: `say "a \"quoted\" \$word" b\ c`, want: []string{"say", `a "quoted" $word`, "b c"}},
		{in: `say "keep \n backslash"`, want: []string{"say", `keep \n backslash`}},
		{in: `a''b "" ''`, want: []string{"ab", "", ""}},
		{in: "echo $HOME; rm -rf / | x", want: []string{"echo", "$HOME;", "rm", "-rf", "/", "|", "x"}},
		{in: "a \\\nb", want: []string{"a", "b"}},
		{in: "", err: "empty"},
		{in: "   ", err: "empty"},
		{in: "x 'y", err: "unclosed single quote"},
		{in: `x "y`, err: "unclosed double quote"},
		{in: `x \`, err: "lone backslash"},
	}
	for _, tt := range tests {
		got, err := SplitCommand(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("SplitCommand(%q) err = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SplitCommand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestExpandHome(t *testing.T) {
	for in, want := range map[string]string{
		"~": "/home/u", "~/x.sh": "/home/u/x.sh", "~bob/x": "~bob/x", "/abs/~/x": "/abs/~/x", "": "",
	} {
		if got := expandHome(in, "/home/u/"); got != want && !(in == "~" && got == "/home/u/") {
			t.Errorf("expandHome(%q) = %q, want %q", in, got, want)
		}
	}
}
