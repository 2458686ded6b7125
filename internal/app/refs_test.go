package app

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/plugins/registry"
)

func TestParseContextRefs(t *testing.T) {
	known := map[string]*registry.ContextRef{"ticket": {Prefix: "ticket"}, "doc": {Prefix: "doc"}, "diff": {Prefix: "diff"}, "staged": {Prefix: "staged"}}
	tests := []struct {
		msg  string
		want []contextRef
	}{
		{"see @ticket:42.", []contextRef{{"@ticket:42", "ticket", "42"}}},
		{"@doc:`a b c`, then @ticket:7!", []contextRef{{"@doc:`a b c`", "doc", "a b c"}, {"@ticket:7", "ticket", "7"}}},
		{`@ticket:"quoted one"`, []contextRef{{`@ticket:"quoted one"`, "ticket", "quoted one"}}},
		{"mail me@ticket:7 or a/@ticket:8", nil},
		{"@file:x.go @unknown:1 @ticket: @:x", nil},
		{"@TICKET:9", []contextRef{{"@TICKET:9", "ticket", "9"}}},
		{"", nil},
		{"review @diff, then @staged.", []contextRef{{"@diff", "diff", ""}, {"@staged", "staged", ""}}},
		{"@diffs a@diff @diff:x @staged_x", nil},
	}
	for _, tt := range tests {
		got := parseContextRefs(tt.msg, known)
		if len(got) != len(tt.want) {
			t.Errorf("parseContextRefs(%q) = %+v, want %+v", tt.msg, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("parseContextRefs(%q)[%d] = %+v, want %+v", tt.msg, i, got[i], tt.want[i])
			}
		}
	}
}

func TestExpandContextRefsCaps(t *testing.T) {
	provider := func(texts map[string]string) *registry.ContextRef {
		return &registry.ContextRef{Prefix: "t", Expand: func(_ context.Context, target string) (string, bool, error) {
			if target == "err" {
				return "", false, errors.New("down")
			}
			if target == "none" {
				return "", false, nil
			}
			return texts[target], true, nil
		}}
	}
	known := map[string]*registry.ContextRef{"t": provider(map[string]string{"a": "alpha", "big": strings.Repeat("x", 1000), "mid": strings.Repeat("y", 120)})}
	tests := []struct {
		name, msg string
		ctxLen    int
		want, not []string
		nWarnings int
	}{
		{"attached", "q @t:a", 1000, []string{"q @t:a\n\n--- Attached Context ---\n\n📌 @t:a (2 tokens)\nalpha"}, []string{"Warnings"}, 0},
		{"failure noted", "q @t:err @t:none", 1000, []string{"--- Context Warnings ---\n- @t:err: plugin expansion error: down"}, []string{"Attached"}, 1},
		{"over the per-reference cap", "q @t:big", 100, []string{"📎 @t:big (approximately 250 tokens) — too large"}, []string{"xxxx"}, 1}, // the stub itself is over a quarter
		{"over the soft limit", "q @t:mid", 120, []string{"exceeds the 25% soft limit", "yyyy"}, nil, 1},
		{"too many references", "q" + strings.Repeat(" @t:a", 40), 100000, []string{"8 reference(s) ignored (limit 32 per message)"}, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, warnings, _ := expandContextRefs(context.Background(), tt.msg, known, tt.ctxLen)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("result lacks %q:\n%s", w, got)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("result holds %q:\n%s", n, got)
				}
			}
			if len(warnings) != tt.nWarnings {
				t.Errorf("warnings = %q, want %d", warnings, tt.nWarnings)
			}
		})
	}
}
