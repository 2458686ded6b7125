package gateway

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/gateway/platform"
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

// gateway_platform_event payloads carry upstream's fields per event type.
func TestEventPayload(t *testing.T) {
	src := platform.Source{Platform: "discord", ChatID: "10", ThreadID: "20", UserID: "30"}
	tests := []struct {
		ev   platform.Event
		want string
	}{
		{platform.Event{Kind: platform.EventEdited, Source: src, MessageID: "5", Text: "new", Time: time.Unix(7, 0)},
			"map[chat_id:10 edited_at:7 message_id:5 text:new thread_id:20]"},
		{platform.Event{Kind: platform.EventDeleted, Source: platform.Source{ChatID: "10"}, MessageID: "5"},
			"map[author_id:<nil> chat_id:10 message_id:5 thread_id:<nil>]"},
		{platform.Event{Kind: platform.EventThreadCreated, Source: src, Text: "plans"},
			"map[name:plans owner_id:30 parent_chat_id:10 thread_id:20]"},
		{platform.Event{Kind: platform.EventThreadRenamed, Source: src, Text: "better", Payload: map[string]any{"old_name": "plans"}},
			"map[new_name:better old_name:plans parent_chat_id:10 thread_id:20]"},
		{platform.Event{Kind: platform.EventThreadRenamed, Source: src, Text: "better"},
			"map[new_name:better old_name:<nil> parent_chat_id:10 thread_id:20]"},
		{platform.Event{Kind: platform.EventReaction, Source: platform.Source{ChatID: "10"}, MessageID: "5"},
			"map[chat_id:10 custom_emoji_ids:[] emojis:[] message_id:5 thread_id:<nil>]"},
		{platform.Event{Kind: platform.EventReaction, Source: platform.Source{ChatID: "10"}, MessageID: "5", Payload: map[string]any{"emojis": []any{"👍"}}},
			"map[chat_id:10 custom_emoji_ids:[] emojis:[👍] message_id:5 thread_id:<nil>]"},
	}
	for _, tc := range tests {
		t.Run(string(tc.ev.Kind), func(t *testing.T) {
			if got := fmt.Sprint(eventPayload(tc.ev)); got != tc.want {
				t.Errorf("payload %s\nwant    %s", got, tc.want)
			}
		})
	}
}
