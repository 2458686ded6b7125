package gateway

import (
	"strings"
	"testing"
)

func TestParseCommand(t *testing.T) {
	tests := []struct {
		in         string
		name, args string
		ok         bool
	}{
		{"/new", "new", "", true},
		{"  /Status  ", "status", "", true},
		{"/approve session", "approve", "session", true},
		{"/status@hermes_bot", "status", "", true},
		{"/shout hello  world", "shout", "hello  world", true},
		{"/shout\nsecond line", "shout", "second line", true},
		{"hello /new", "", "", false},
		{"/", "", "", false},
		{"/etc/passwd is a file", "", "", false},
		{"/usr/bin", "", "", false},
		{"/..", "", "", false},
	}
	for _, tc := range tests {
		name, args, ok := parseCommand(tc.in)
		if name != tc.name || args != tc.args || ok != tc.ok {
			t.Errorf("parseCommand(%q) = %q, %q, %v; want %q, %q, %v", tc.in, name, args, ok, tc.name, tc.args, tc.ok)
		}
	}
}

func TestGatewayDirective(t *testing.T) {
	rewrite := "new text"
	tests := []struct {
		name    string
		results []any
		skip    string
		text    *string
	}{
		{"none", nil, "", nil},
		{"allow", []any{map[string]any{"action": "allow"}}, "", nil},
		{"skip with reason", []any{map[string]any{"action": "skip", "reason": "spam"}}, "spam", nil},
		{"skip without reason", []any{map[string]any{"action": "SKIP"}}, "skipped by a plugin", nil},
		{"rewrite", []any{map[string]any{"action": "rewrite", "text": rewrite}}, "", &rewrite},
		{"first dict wins", []any{"ignored", map[string]any{"action": "allow"}, map[string]any{"action": "skip"}}, "", nil},
		{"unknown actions pass", []any{map[string]any{"action": "explode"}, map[string]any{"action": "skip", "reason": "r"}}, "r", nil},
		{"rewrite without text is passed over", []any{map[string]any{"action": "rewrite", "text": 3}, map[string]any{"action": "skip", "reason": "r"}}, "r", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			skip, text := gatewayDirective(tc.results)
			if skip != tc.skip || (text == nil) != (tc.text == nil) || (text != nil && *text != *tc.text) {
				t.Fatalf("gatewayDirective = %q, %v; want %q, %v", skip, text, tc.skip, tc.text)
			}
		})
	}
}

func TestApproveCommandArgs(t *testing.T) {
	r := &Runner{approvals: map[string][]*pendingApproval{}}
	if got := r.approveCommand("k", "approve", "forever"); !strings.Contains(got, "/approve session") {
		t.Errorf("a bad scope: %q", got)
	}
	if got := r.approveCommand("k", "deny", ""); got != "No command is waiting for approval." {
		t.Errorf("nothing pending: %q", got)
	}
	for _, tc := range []struct{ name, args, want string }{
		{"approve", "", ChoiceOnce}, {"approve", "Session", ChoiceSession}, {"approve", "always", ChoiceAlways}, {"deny", "", ChoiceDeny},
	} {
		p := &pendingApproval{id: "1", key: "k", answer: make(chan string, 1)}
		r.approvals["k"] = []*pendingApproval{p}
		if got := r.approveCommand("k", tc.name, tc.args); got != "" {
			t.Fatalf("/%s %s: %q", tc.name, tc.args, got)
		}
		if got := <-p.answer; got != tc.want {
			t.Errorf("/%s %s answered %q, want %q", tc.name, tc.args, got, tc.want)
		}
		if len(r.approvals["k"]) != 0 {
			t.Error("the answered question is still queued")
		}
	}
}

func TestNewChecksOptions(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Error("a runner without engine and authorizer")
	}
}
