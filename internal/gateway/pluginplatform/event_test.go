package pluginplatform

import (
	"strings"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/pkg/protocol"
)

func TestToEvent(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	ok := protocol.PlatformSource{ChatID: "42", UserID: "7"}
	for _, tc := range []struct {
		name  string
		p     protocol.PlatformEventParams
		err   string // a refusal expected, "" for none
		check func(t *testing.T, ev platform.Event)
	}{
		{name: "plain DM", p: protocol.PlatformEventParams{Text: "hi", Source: ok, MessageID: "m1", Timestamp: 1_699_999_990},
			check: func(t *testing.T, ev platform.Event) {
				s := ev.Source
				if s.Platform != "webhook" || s.ChatType != platform.ChatDM || s.ChatID != "42" || s.UserID != "7" || ev.Text != "hi" ||
					ev.MessageID != "m1" || !ev.Mentioned || ev.Kind != platform.EventMessage || !ev.Time.Equal(time.Unix(1_699_999_990, 0)) {
					t.Errorf("event %+v", ev)
				}
			}},
		{name: "group keeps its type", p: protocol.PlatformEventParams{Text: "x", Source: protocol.PlatformSource{ChatID: "#c", ChatType: "Group", UserID: "u"}},
			check: func(t *testing.T, ev platform.Event) {
				if ev.Source.ChatType != platform.ChatGroup {
					t.Errorf("chat type %q", ev.Source.ChatType)
				}
			}},
		{name: "names are made safe", p: protocol.PlatformEventParams{Source: protocol.PlatformSource{ChatID: "1", UserName: "a\x1b]0;pwn\x07" + strings.Repeat("n", 400), ChatName: "\u202eevil"}},
			check: func(t *testing.T, ev platform.Event) {
				if strings.ContainsAny(ev.Source.UserName, "\x1b\x07") || strings.ContainsRune(ev.Source.ChatName, '\u202e') || len(ev.Source.UserName) > 2*maxName {
					t.Errorf("names %q %q", ev.Source.UserName, ev.Source.ChatName)
				}
			}},
		{name: "invalid UTF-8 text is repaired", p: protocol.PlatformEventParams{Text: "a\xffb", Source: ok},
			check: func(t *testing.T, ev platform.Event) {
				if ev.Text != "a\uFFFDb" {
					t.Errorf("text %q", ev.Text)
				}
			}},
		{name: "implausible time is now", p: protocol.PlatformEventParams{Source: ok, Timestamp: 1e12},
			check: func(t *testing.T, ev platform.Event) {
				if !ev.Time.Equal(now) {
					t.Errorf("time %v", ev.Time)
				}
			}},
		{name: "another platform's name", p: protocol.PlatformEventParams{Platform: "telegram", Source: ok}, err: `event for platform "telegram"`},
		{name: "no chat", p: protocol.PlatformEventParams{Text: "x", Source: protocol.PlatformSource{UserID: "1"}}, err: "source.chat_id is empty"},
		{name: "newline in a user id", p: protocol.PlatformEventParams{Source: protocol.PlatformSource{ChatID: "1", UserID: "1\n2"}}, err: "source.user_id"},
		{name: "space in a thread id", p: protocol.PlatformEventParams{Source: protocol.PlatformSource{ChatID: "1", ThreadID: "a b"}}, err: "source.thread_id"},
		{name: "huge id", p: protocol.PlatformEventParams{Source: protocol.PlatformSource{ChatID: strings.Repeat("1", 300)}}, err: "over the 256-byte limit"},
		{name: "huge text", p: protocol.PlatformEventParams{Text: strings.Repeat("x", maxText+1), Source: ok}, err: "over the 65536-byte limit"},
		{name: "unknown chat type", p: protocol.PlatformEventParams{Source: protocol.PlatformSource{ChatID: "1", ChatType: "room"}}, err: "chat_type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := toEvent("webhook", tc.p, now)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, ev)
		})
	}
}

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		text string
		max  int
		want []string
	}{
		{"short", 10, []string{"short"}},
		{"no limit at all", 0, []string{"no limit at all"}},
		{"0123456789abc", 5, []string{"01234", "56789", "abc"}},
		{"line one\nline two", 12, []string{"line one\n", "line two"}},
		{"ééééé", 2, []string{"éé", "éé", "é"}},
	} {
		got := split(tc.text, tc.max)
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("split(%q, %d) = %q, want %q", tc.text, tc.max, got, tc.want)
		}
	}
}
