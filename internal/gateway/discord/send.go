package discord

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/internal/termsafe"
)

const (
	maxMessage     = 2000 // Discord's limit on a message's content, in characters
	maxThreadName  = 100
	maxButtonData  = 100 // custom_id
	maxButtonLabel = 80
	maxButtons     = 25 // five rows of five
	// maxRateLimitWaits is how many 429s in a row one call sits out before
	// handing the wait back to the caller as a retryable failure.
	maxRateLimitWaits = 5
	maxRateLimitWait  = time.Minute
)

// errNotNumeric is what platform actions answer as invalid_argument.
var errNotNumeric = &platform.InvalidArgumentError{Reason: "discord ids must be numeric"}

// RateLimitedError is a call Discord kept refusing with 429: retry after
// RetryAfter.
type RateLimitedError struct {
	RetryAfter time.Duration
}

func (e *RateLimitedError) Error() string {
	return fmt.Sprintf("discord: rate limited; retry after %s", e.RetryAfter)
}

// withRetry runs call, sitting out Discord's 429s (retry_after) while ctx
// lasts: discordgo's own waits ignore contexts, so they are turned off.
func (a *Adapter) withRetry(ctx context.Context, call func(...discordgo.RequestOption) error) error {
	for attempt := 0; ; attempt++ {
		err := call(discordgo.WithContext(ctx), discordgo.WithRetryOnRatelimit(false))
		var rl *discordgo.RateLimitError
		if !errors.As(err, &rl) || rl.RateLimit == nil || rl.TooManyRequests == nil {
			return err
		}
		wait := rl.RetryAfter
		if wait <= 0 {
			wait = time.Second
		}
		if attempt >= maxRateLimitWaits || wait > maxRateLimitWait {
			return &RateLimitedError{RetryAfter: wait}
		}
		a.log.Info("discord: rate limited, waiting", "url", termsafe.Line(rl.URL), "retry_after", wait)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// remember notes which channel a message is in: edits and reactions need
// the thread's id, where callers may hold only the parent's.
func (a *Adapter) remember(messageID, channelID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.where.put(messageID, channelID)
}

func (a *Adapter) channelOf(messageID, fallback string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c, ok := a.where.get(messageID); ok {
		return c
	}
	return fallback
}

// Send implements platform.Adapter: the text in as many messages as
// Discord's 2000-character limit needs (split at line, then word, breaks),
// the reply reference as ReplyToMode says, the buttons on the last. Mentions in
// the text never ping anyone. The result names the last message.
func (a *Adapter) Send(ctx context.Context, msg platform.Outbound) (platform.SendResult, error) {
	target := msg.ThreadID
	if target == "" {
		target = msg.ChatID
	}
	if !numeric(target) {
		return platform.SendResult{}, fmt.Errorf("discord: send to \"%s\": %w", termsafe.Line(target), errNotNumeric)
	}
	if msg.ThreadID != "" {
		target = a.target(ctx, msg.ThreadID)
	}
	components, err := buttons(msg.Buttons)
	if err != nil {
		return platform.SendResult{}, err
	}
	chunks := Split(msg.Text, maxMessage)
	if len(chunks) == 0 {
		if components == nil {
			return platform.SendResult{}, errors.New("discord: nothing to send: the message has no text and no buttons")
		}
		chunks = []string{""}
	}
	var last *discordgo.Message
	for i, chunk := range chunks {
		data := &discordgo.MessageSend{Content: chunk, AllowedMentions: &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}}}
		// In the thread opened on the message, the thread's start shows it:
		// a reply would point into another channel.
		if a.replies(i) && msg.ReplyTo != "" && msg.ReplyTo != target && numeric(msg.ReplyTo) {
			no := false
			data.Reference = &discordgo.MessageReference{MessageID: msg.ReplyTo, ChannelID: target, FailIfNotExists: &no}
		}
		if i == len(chunks)-1 {
			data.Components = components
		}
		err := a.withRetry(ctx, func(o ...discordgo.RequestOption) (err error) {
			last, err = a.session.ChannelMessageSendComplex(target, data, o...)
			return err
		})
		if err != nil {
			var rl *RateLimitedError
			if errors.As(err, &rl) {
				return platform.SendResult{Retryable: true, RetryAfter: rl.RetryAfter}, err
			}
			return platform.SendResult{Retryable: retryable(err)}, fmt.Errorf("discord: send message %d of %d: %w", i+1, len(chunks), err)
		}
		a.remember(last.ID, target)
	}
	return platform.SendResult{MessageID: last.ID}, nil
}

// replies reports whether piece i of an answer carries the reply reference.
func (a *Adapter) replies(i int) bool {
	switch a.opts.ReplyToMode {
	case ReplyOff:
		return false
	case ReplyAll:
		return true
	}
	return i == 0
}

// retryable: the request may succeed later (a network failure, a 5xx).
func retryable(err error) bool {
	var rest *discordgo.RESTError
	if errors.As(err, &rest) {
		return rest.Response != nil && rest.Response.StatusCode >= 500
	}
	return !errors.Is(err, context.Canceled)
}

// buttons lays out approval buttons in rows of five.
func buttons(bs []platform.Button) ([]discordgo.MessageComponent, error) {
	if len(bs) == 0 {
		return nil, nil
	}
	if len(bs) > maxButtons {
		return nil, fmt.Errorf("discord: %d buttons on one message; Discord allows at most %d", len(bs), maxButtons)
	}
	var rows []discordgo.MessageComponent
	var row discordgo.ActionsRow
	for i, b := range bs {
		if b.Data == "" || len(b.Data) > maxButtonData {
			return nil, fmt.Errorf("discord: button \"%s\": its data must be 1..%d bytes (got %d)", termsafe.Line(b.Label), maxButtonData, len(b.Data))
		}
		label := truncate(b.Label, maxButtonLabel)
		if label == "" {
			label = b.Data
		}
		row.Components = append(row.Components, discordgo.Button{Label: label, CustomID: b.Data, Style: buttonStyle(i)})
		if len(row.Components) == 5 {
			rows, row = append(rows, row), discordgo.ActionsRow{}
		}
	}
	if len(row.Components) > 0 {
		rows = append(rows, row)
	}
	return rows, nil
}

// buttonStyle makes the first choice (approve) stand out.
func buttonStyle(i int) discordgo.ButtonStyle {
	if i == 0 {
		return discordgo.SuccessButton
	}
	return discordgo.SecondaryButton
}

// Edit implements platform.Adapter: the message's new text (cut to the
// limit), its buttons removed (an answered approval keeps none).
func (a *Adapter) Edit(ctx context.Context, chatID, messageID, text string) error {
	if !numeric(messageID) {
		return fmt.Errorf("discord: edit message \"%s\": %w", termsafe.Line(messageID), errNotNumeric)
	}
	channel := a.channelOf(messageID, chatID)
	if !numeric(channel) {
		return fmt.Errorf("discord: edit in channel \"%s\": %w", termsafe.Line(channel), errNotNumeric)
	}
	content := truncate(text, maxMessage)
	none := []discordgo.MessageComponent{}
	edit := &discordgo.MessageEdit{ID: messageID, Channel: channel, Content: &content, Components: &none,
		AllowedMentions: &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}}}
	err := a.withRetry(ctx, func(o ...discordgo.RequestOption) error {
		_, err := a.session.ChannelMessageEditComplex(edit, o...)
		return err
	})
	if err != nil {
		return fmt.Errorf("discord: edit message: %w", err)
	}
	return nil
}

// Typing implements platform.Adapter (Discord shows it for ten seconds).
func (a *Adapter) Typing(ctx context.Context, chatID, threadID string) error {
	target := threadID
	if target == "" {
		target = chatID
	}
	if !numeric(target) {
		return fmt.Errorf("discord: typing in \"%s\": %w", termsafe.Line(target), errNotNumeric)
	}
	if threadID != "" {
		// Typing is the first sign a turn runs: an auto-thread opens now.
		target = a.target(ctx, threadID)
	}
	err := a.withRetry(ctx, func(o ...discordgo.RequestOption) error { return a.session.ChannelTyping(target, o...) })
	if err != nil {
		return fmt.Errorf("discord: typing: %w", err)
	}
	return nil
}

// AddReaction implements platform.ReactionAdder: the bot reacts to
// messageID with emoji (a unicode emoji, or a custom one as name:id or
// <:name:id>).
func (a *Adapter) AddReaction(ctx context.Context, chatID, messageID, emoji string) error {
	if !numeric(messageID) || (chatID != "" && !numeric(chatID)) {
		return errNotNumeric
	}
	emoji = strings.TrimSpace(emoji)
	if custom, ok := strings.CutPrefix(emoji, "<"); ok {
		emoji = strings.TrimPrefix(strings.TrimSuffix(custom, ">"), "a:")
		emoji = strings.TrimPrefix(emoji, ":")
	}
	if emoji == "" {
		return &platform.InvalidArgumentError{Reason: "emoji must not be empty"}
	}
	channel := a.channelOf(messageID, chatID)
	if !numeric(channel) {
		return errNotNumeric
	}
	err := a.withRetry(ctx, func(o ...discordgo.RequestOption) error {
		return a.session.MessageReactionAdd(channel, messageID, emoji, o...)
	})
	if err != nil {
		return fmt.Errorf("discord add_reaction: %w", err)
	}
	return nil
}

// SetThreadTitle implements platform.ThreadRenamer: renames the thread
// (cut to Discord's 100 characters). The bot's own rename is not reported
// back as a thread_renamed event.
func (a *Adapter) SetThreadTitle(ctx context.Context, chatID, threadID, title string) error {
	if !numeric(threadID) || (chatID != "" && !numeric(chatID)) {
		return errNotNumeric
	}
	title = truncate(strings.Join(strings.Fields(title), " "), maxThreadName)
	if title == "" {
		return &platform.InvalidArgumentError{Reason: "title must not be empty"}
	}
	// THREAD_UPDATE may arrive before this call returns: note the name
	// first so the echo is recognised.
	a.mu.Lock()
	a.renaming[threadID] = title
	a.mu.Unlock()
	var ch *discordgo.Channel
	err := a.withRetry(ctx, func(o ...discordgo.RequestOption) (err error) {
		ch, err = a.session.ChannelEdit(threadID, &discordgo.ChannelEdit{Name: title}, o...)
		return err
	})
	if err != nil {
		a.mu.Lock()
		delete(a.renaming, threadID)
		a.mu.Unlock()
		return fmt.Errorf("discord set_thread_title: %w", err)
	}
	if ch != nil {
		a.learn(ch)
	}
	return nil
}

// Split cuts text into pieces of at most limit characters, at the last line
// break in reach, else the last space (the break itself dropped), else
// exactly at the limit. Nothing else is lost: indentation stays.
func Split(text string, limit int) []string {
	var out []string
	r := []rune(text)
	for len(r) > limit {
		window := r[:limit+1]
		cut := lastIndex(window, '\n')
		if cut <= 0 {
			cut = lastIndex(window, ' ')
		}
		if cut <= 0 {
			out, r = append(out, string(r[:limit])), r[limit:]
			continue
		}
		if piece := string(r[:cut]); strings.TrimSpace(piece) != "" {
			out = append(out, piece)
		}
		r = r[cut+1:]
	}
	if strings.TrimSpace(string(r)) != "" {
		out = append(out, string(r))
	}
	return out
}

func lastIndex(r []rune, c rune) int {
	for i := len(r) - 1; i >= 0; i-- {
		if r[i] == c {
			return i
		}
	}
	return -1
}

// truncate cuts s to limit characters, ending in "…" when cut.
func truncate(s string, limit int) string {
	r := []rune(s)
	if len(r) <= limit {
		return s
	}
	return string(r[:limit-1]) + "…"
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return termsafe.Line(err.Error())
}

func typeName(v any) string { return fmt.Sprintf("%T", v) }

func toString(v any) string { return fmt.Sprint(v) }
