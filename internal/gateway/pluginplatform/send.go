package pluginplatform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/internal/termsafe"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// ErrNotConnected is a send while the plugin's adapter is down.
var ErrNotConnected = errors.New("the platform is not connected")

// Send calls the plugin adapter's send(), in chunks of MaxMessageLength.
func (a *Adapter) Send(ctx context.Context, msg platform.Outbound) (platform.SendResult, error) {
	var out platform.SendResult
	if !a.connected.Load() {
		return out, fmt.Errorf("%s: %w", a.o.Name, ErrNotConnected)
	}
	var meta map[string]any
	if msg.ThreadID != "" {
		meta = map[string]any{"thread_id": msg.ThreadID}
	}
	for i, chunk := range split(msg.Text, a.o.MaxMessageLength) {
		p := protocol.PlatformSendParams{Name: a.o.Name, ChatID: msg.ChatID, Content: chunk, Metadata: meta}
		if i == 0 {
			p.ReplyTo = msg.ReplyTo
		}
		res, err := a.call(ctx, protocol.MethodPlatformSend, p)
		if err != nil {
			return out, err
		}
		out = platform.SendResult{MessageID: res.MessageID, Retryable: res.Retryable, RetryAfter: time.Duration(res.RetryAfter * float64(time.Second))}
		if !res.Success {
			return out, fmt.Errorf("%s: send failed: %s", a.o.Name, failure(res))
		}
	}
	return out, nil
}

// Edit calls the plugin adapter's edit_message().
func (a *Adapter) Edit(ctx context.Context, chatID, messageID, text string) error {
	if !a.connected.Load() {
		return fmt.Errorf("%s: %w", a.o.Name, ErrNotConnected)
	}
	res, err := a.call(ctx, protocol.MethodPlatformEdit, protocol.PlatformEditParams{Name: a.o.Name, ChatID: chatID, MessageID: messageID, Content: text})
	if err != nil {
		return err
	}
	if !res.Success {
		return fmt.Errorf("%s: edit failed: %s", a.o.Name, failure(res))
	}
	return nil
}

// Typing calls the plugin adapter's send_typing().
func (a *Adapter) Typing(ctx context.Context, chatID, threadID string) error {
	if !a.connected.Load() {
		return nil
	}
	p := protocol.PlatformTypingParams{Name: a.o.Name, ChatID: chatID}
	if threadID != "" {
		p.Metadata = map[string]any{"thread_id": threadID}
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := a.o.Conn.Call(cctx, protocol.MethodPlatformTyping, p)
	return err
}

func (a *Adapter) call(ctx context.Context, method string, params any) (protocol.PlatformSendResult, error) {
	var res protocol.PlatformSendResult
	cctx, cancel := context.WithTimeout(ctx, a.o.CallTimeout)
	defer cancel()
	raw, err := a.o.Conn.Call(cctx, method, params)
	if err != nil {
		return res, fmt.Errorf("%s: %s: %s", a.o.Name, method, termsafe.Line(clip(err.Error(), 500)))
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return res, fmt.Errorf("%s: %s answered %s, not a SendResult", a.o.Name, method, termsafe.Line(clip(string(raw), 200)))
	}
	res.MessageID = clip(res.MessageID, maxID)
	return res, nil
}

func failure(res protocol.PlatformSendResult) string {
	if res.Error == "" {
		return "the plugin's adapter answered success=False"
	}
	return termsafe.Line(clip(res.Error, 500))
}

// split cuts text into pieces of at most max runes, at a line break in the
// second half of a piece when there is one (max 0: one piece).
func split(text string, max int) []string {
	if max <= 0 || utf8.RuneCountInString(text) <= max {
		return []string{text}
	}
	var out []string
	for utf8.RuneCountInString(text) > max {
		cut := byteOffset(text, max)
		if nl := strings.LastIndexByte(text[:cut], '\n'); nl > cut/2 {
			cut = nl + 1
		}
		out = append(out, text[:cut])
		text = text[cut:]
	}
	if text != "" {
		out = append(out, text)
	}
	return out
}

// byteOffset is the byte offset of rune n of s.
func byteOffset(s string, n int) int {
	i := 0
	for off := range s {
		if i == n {
			return off
		}
		i++
	}
	return len(s)
}
