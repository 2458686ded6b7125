package pluginplatform

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/internal/termsafe"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// Bounds on what a plugin may hand the gateway in one event.
const (
	maxText = 64 << 10 // a message's text, bytes
	maxID   = 256      // a chat, user, thread or message id, bytes
	maxName = 256      // a display name, bytes (clipped, not refused)
)

var chatTypes = map[string]bool{platform.ChatDM: true, platform.ChatGroup: true, platform.ChatChannel: true, platform.ChatThread: true}

// toEvent checks a plugin's MessageEvent and makes it a platform.Event of
// platform name: the platform is always the registered one (a plugin cannot
// speak for telegram and borrow its allowlist), ids are bounded and free of
// control characters, names are made safe to log and show, and adapter-time
// grants (a Discord role) are never taken from a plugin.
func toEvent(name string, p protocol.PlatformEventParams, now time.Time) (platform.Event, error) {
	var ev platform.Event
	if p.Platform != "" && p.Platform != name {
		return ev, fmt.Errorf("event for platform %q sent on platform %q", clip(p.Platform, 64), name)
	}
	if len(p.Text) > maxText {
		return ev, fmt.Errorf("text is %d bytes, over the %d-byte limit of one message", len(p.Text), maxText)
	}
	s := p.Source
	chatType := strings.ToLower(strings.TrimSpace(s.ChatType))
	if chatType == "" {
		chatType = platform.ChatDM
	}
	if !chatTypes[chatType] {
		return ev, fmt.Errorf("source.chat_type %q is not one of dm, group, channel, thread", clip(s.ChatType, 32))
	}
	ids := []struct {
		field, value string
		required     bool
	}{
		{"source.chat_id", s.ChatID, true}, {"source.user_id", s.UserID, false}, {"source.thread_id", s.ThreadID, false},
		{"source.user_id_alt", s.UserIDAlt, false}, {"source.scope_id", s.ScopeID, false},
		{"message_id", p.MessageID, false}, {"reply_to_message_id", p.ReplyToMessageID, false},
	}
	for _, id := range ids {
		if err := checkID(id.field, id.value, id.required); err != nil {
			return ev, err
		}
	}
	ev = platform.Event{
		Kind: platform.EventMessage,
		Source: platform.Source{
			Platform: name, ChatID: s.ChatID, ChatType: chatType, UserID: s.UserID, ThreadID: s.ThreadID,
			UserIDAlt: s.UserIDAlt, ScopeID: s.ScopeID, IsBot: s.IsBot,
			ChatName: termsafe.Line(clip(s.ChatName, maxName)), UserName: termsafe.Line(clip(s.UserName, maxName)),
		},
		Text:      strings.ToValidUTF8(p.Text, "\uFFFD"),
		MessageID: p.MessageID,
		ReplyTo:   p.ReplyToMessageID,
		// A plugin's adapter decides which group messages are for the bot
		// (upstream's adapters filter mentions themselves): what it hands over is.
		Mentioned: true,
		Time:      eventTime(p.Timestamp, now),
	}
	return ev, nil
}

func checkID(field, v string, required bool) error {
	if v == "" {
		if required {
			return fmt.Errorf("%s is empty: every message needs the chat it came from", field)
		}
		return nil
	}
	if len(v) > maxID {
		return fmt.Errorf("%s is %d bytes, over the %d-byte limit", field, len(v), maxID)
	}
	if !utf8.ValidString(v) || strings.IndexFunc(v, func(r rune) bool { return unicode.IsControl(r) || unicode.IsSpace(r) }) >= 0 {
		return fmt.Errorf("%s %q has control characters, spaces or invalid UTF-8", field, termsafe.Line(clip(v, 64)))
	}
	return nil
}

// eventTime is the plugin's timestamp when it is plausible, else now.
func eventTime(ts float64, now time.Time) time.Time {
	if ts <= 0 || math.IsNaN(ts) || math.IsInf(ts, 0) {
		return now
	}
	t := time.Unix(0, int64(ts*float64(time.Second)))
	if t.After(now.Add(time.Hour)) || t.Before(now.Add(-7*24*time.Hour)) {
		return now
	}
	return t
}

// clip cuts s to at most n bytes, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
