// Package telegram is the gateway's Telegram adapter: long polling of the
// Bot API (getUpdates) into platform events, and replies through
// github.com/go-telegram/bot's typed methods.
//
// The poll loop is this package's, not the library's: the library decodes a
// whole getUpdates batch at once, so one malformed update would stall the
// offset forever, and it hides 409 Conflict and 429 behind a silent backoff.
// Here each update is decoded alone (a bad one is logged and skipped), a
// repeated update_id is ignored, 409 is reported as another poller and 429
// waits retry_after.
package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/hermes-go/hermes/internal/gateway/platform"
)

// Name is the platform's name in session keys, config and .env.
const Name = "telegram"

// ErrTokenRefused is Run's error when the Bot API refuses the token: a
// configuration to fix, not a failure to retry.
var ErrTokenRefused = errors.New("the Bot API refused the token: check TELEGRAM_BOT_TOKEN")

// DefaultBaseURL is the Bot API server.
const DefaultBaseURL = "https://api.telegram.org"

// Options configure an Adapter.
type Options struct {
	Token   string
	BaseURL string // platforms.telegram.extra.base_url; "" is DefaultBaseURL
	// DropPending drops the updates that waited while no gateway ran
	// (upstream's drop_pending_on_cold_boot, default true).
	DropPending bool
	// PollTimeout is getUpdates' long-poll timeout (default 30 s).
	PollTimeout time.Duration
	Logger      *slog.Logger
	HTTPClient  *http.Client
	// WebhookURL (TELEGRAM_WEBHOOK_URL), when set, receives updates by webhook
	// instead of polling; it needs WebhookSecret (TELEGRAM_WEBHOOK_SECRET).
	// WebhookListen is the local address (":" + TELEGRAM_WEBHOOK_PORT, 8443).
	WebhookURL    string
	WebhookSecret string
	WebhookListen string
}

// Adapter is one bot's connection.
type Adapter struct {
	o      Options
	bot    *bot.Bot
	client *http.Client
	// me is the bot's identity (getMe), for mentions in groups and replies
	// to the bot; nil until Run or Identify learned it.
	me        atomic.Pointer[identity]
	connected atomic.Bool
	seen      *dedup
	log       *slog.Logger
	// listenAddr is the webhook server's bound address (a string).
	listenAddr atomic.Value
	// accept, when set (SetAccept), takes webhook updates instead of the
	// handler: a cluster's queue.
	accept atomic.Pointer[AcceptFunc]
}

type identity struct {
	username string // the bot's @username
	id       int64
}

var (
	_ platform.Adapter       = (*Adapter)(nil)
	_ platform.ReactionAdder = (*Adapter)(nil)
	_ platform.ThreadRenamer = (*Adapter)(nil)
)

// New checks the options and builds the adapter; nothing is sent until Run.
func New(o Options) (*Adapter, error) {
	if strings.TrimSpace(o.Token) == "" {
		return nil, errors.New("telegram: no bot token: set TELEGRAM_BOT_TOKEN in $HERMES_HOME/.env (from @BotFather)")
	}
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
	}
	o.BaseURL = strings.TrimRight(o.BaseURL, "/")
	if !strings.HasPrefix(o.BaseURL, "http://") && !strings.HasPrefix(o.BaseURL, "https://") {
		return nil, fmt.Errorf("telegram: platforms.telegram.extra.base_url %q is not an http(s) URL", o.BaseURL)
	}
	if err := o.checkWebhook(); err != nil {
		return nil, err
	}
	if o.PollTimeout <= 0 {
		o.PollTimeout = 30 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	client := o.HTTPClient
	if client == nil {
		// More idle connections than the default two per host: every turn
		// running at once sends (typing, the answer) to the same Bot API host,
		// and without them all but two dialled it again, TLS and all.
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConns = 256
		t.MaxIdleConnsPerHost = 64
		client = &http.Client{Timeout: o.PollTimeout + 30*time.Second, Transport: t}
	}
	b, err := bot.New(o.Token, bot.WithServerURL(o.BaseURL), bot.WithSkipGetMe(), bot.WithHTTPClient(o.PollTimeout, client),
		bot.WithErrorsHandler(func(error) {}))
	if err != nil {
		return nil, fmt.Errorf("telegram: %w", err)
	}
	return &Adapter{o: o, bot: b, client: client, log: o.Logger.With("platform", Name), seen: newDedup(4096)}, nil
}

func (a *Adapter) Name() string { return Name }

func (a *Adapter) Connected() bool { return a.connected.Load() }

// Run checks the token (getMe), drops what waited when asked, then polls
// until ctx ends. A refused token ends it with an error; everything else is
// retried with a backoff.
func (a *Adapter) Run(ctx context.Context, h platform.Handler) error {
	if err := a.Identify(ctx); err != nil || ctx.Err() != nil {
		return err
	}
	me := a.me.Load()
	if a.o.WebhookURL != "" {
		return a.webhook(ctx, h)
	}
	// A webhook left by an earlier run would make every getUpdates a 409.
	if _, err := a.bot.DeleteWebhook(ctx, &bot.DeleteWebhookParams{DropPendingUpdates: a.o.DropPending}); err != nil && ctx.Err() == nil {
		a.log.Warn("telegram: deleteWebhook failed", "error", redactToken(err.Error(), a.o.Token))
	}
	a.connected.Store(true)
	defer a.connected.Store(false)
	a.log.Info("[telegram] Connected to Telegram (polling mode)", "bot", me.username)
	return a.poll(ctx, h)
}

// Identify learns the bot's identity (getMe), retrying until ctx ends; a
// refused token is ErrTokenRefused. Decode needs it (mentions in groups):
// a cluster's worker decodes queued updates on a process whose adapter may
// never run, because another process owns the long poll.
func (a *Adapter) Identify(ctx context.Context) error {
	for a.me.Load() == nil {
		me, err := a.bot.GetMe(ctx)
		switch {
		case err == nil:
			a.me.CompareAndSwap(nil, &identity{username: me.Username, id: me.ID})
		case errors.Is(err, bot.ErrorUnauthorized) || errors.Is(err, bot.ErrorNotFound):
			return fmt.Errorf("telegram: %w (%s)", ErrTokenRefused, redactToken(err.Error(), a.o.Token))
		case ctx.Err() != nil:
			return nil
		default:
			a.log.Warn("telegram: getMe failed; retrying", "error", redactToken(err.Error(), a.o.Token))
			if !sleep(ctx, 2*time.Second) {
				return nil
			}
		}
	}
	return nil
}

// Identified says whether Decode knows the bot's identity.
func (a *Adapter) Identified() bool { return a.me.Load() != nil }

// apiAnswer is the Bot API's envelope.
type apiAnswer struct {
	OK          bool              `json:"ok"`
	Result      []json.RawMessage `json:"result"`
	ErrorCode   int               `json:"error_code"`
	Description string            `json:"description"`
	Parameters  struct {
		RetryAfter int `json:"retry_after"`
	} `json:"parameters"`
}

func (a *Adapter) poll(ctx context.Context, h platform.Handler) error {
	var offset int64
	// wait is the pause before the next poll: the error backoff, or a 429's
	// retry_after (which does not grow the backoff).
	var wait, backoff time.Duration
	for ctx.Err() == nil {
		if wait > 0 && !sleep(ctx, wait) {
			break
		}
		wait = 0
		ans, err := a.getUpdates(ctx, offset)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			backoff = nextBackoff(backoff)
			wait = backoff
			a.log.Warn("telegram: getUpdates failed; retrying", "error", redactToken(err.Error(), a.o.Token), "in", backoff)
			continue
		case ans.ErrorCode == http.StatusUnauthorized:
			return fmt.Errorf("telegram: %w (401 Unauthorized)", ErrTokenRefused)
		case ans.ErrorCode == http.StatusConflict:
			backoff = nextBackoff(backoff)
			wait = backoff
			a.log.Warn("telegram: another process is polling this bot (409 Conflict); stop it or run `hermes gateway run --replace`",
				"retry_in", backoff)
			continue
		case ans.ErrorCode == http.StatusTooManyRequests:
			wait = time.Duration(max(ans.Parameters.RetryAfter, 1)) * time.Second
			a.log.Warn("telegram: rate limited (429)", "retry_after", wait)
			continue
		case !ans.OK:
			backoff = nextBackoff(backoff)
			wait = backoff
			a.log.Warn("telegram: getUpdates refused", "code", ans.ErrorCode, "description", ans.Description)
			continue
		}
		backoff = 0
		accept := a.accept.Load()
		for _, raw := range ans.Result {
			id, ev, ok := a.decode(ctx, raw)
			if ok && accept != nil {
				// A cluster's queue: the offset confirms only what it took.
				// A refusal (the database away) leaves this update and the
				// rest of the batch to the next poll, in order.
				if err := (*accept)(ctx, id, ev, raw); err != nil {
					backoff = nextBackoff(backoff)
					wait = backoff
					if ctx.Err() == nil {
						a.log.Warn("telegram: could not queue a polled update; polling it again", "update_id", id, "error", err, "in", backoff)
					}
					break
				}
				ok = false
			}
			if id >= offset {
				offset = id + 1
			}
			if ok && a.seen.add(id) {
				h(ctx, ev)
			}
		}
	}
	return nil
}

func (a *Adapter) getUpdates(ctx context.Context, offset int64) (*apiAnswer, error) {
	body, _ := json.Marshal(map[string]any{"offset": offset, "timeout": int(a.o.PollTimeout.Seconds()), "allowed_updates": allowedUpdates})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.o.BaseURL+"/bot"+a.o.Token+"/getUpdates", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	// A batch is at most 100 updates; 64 MiB bounds a hostile server.
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	var ans apiAnswer
	if err := json.Unmarshal(b, &ans); err != nil {
		return nil, fmt.Errorf("getUpdates answered %s with something that is not the Bot API's JSON: %w", resp.Status, err)
	}
	return &ans, nil
}

// allowedUpdates are the update kinds the gateway acts on.
var allowedUpdates = []string{"message", "edited_message", "callback_query", "message_reaction"}

// maxText bounds an incoming message's text: Telegram's own limit is 4096
// units; a server sending more is not Telegram.
const maxText = 64 << 10

// decode turns one raw update into an event; ok is false for an update the
// gateway does not act on (logged when it is malformed).
func (a *Adapter) decode(ctx context.Context, raw json.RawMessage) (id int64, ev platform.Event, ok bool) {
	var u models.Update
	if err := json.Unmarshal(raw, &u); err != nil {
		var head struct {
			ID int64 `json:"update_id"`
		}
		_ = json.Unmarshal(raw, &head)
		a.log.Warn("telegram: skipping an update that does not decode", "update_id", head.ID, "error", err)
		return head.ID, ev, false
	}
	id = u.ID
	switch {
	case u.Message != nil:
		ev, ok = a.message(platform.EventMessage, u.Message)
	case u.EditedMessage != nil:
		ev, ok = a.message(platform.EventEdited, u.EditedMessage)
	case u.CallbackQuery != nil:
		ev, ok = a.callback(ctx, u.CallbackQuery)
	case u.MessageReaction != nil:
		ev, ok = a.reaction(u.MessageReaction)
	}
	return id, ev, ok
}

func (a *Adapter) message(kind platform.EventKind, m *models.Message) (platform.Event, bool) {
	src := platform.Source{Platform: Name, ChatID: strconv.FormatInt(m.Chat.ID, 10), ChatName: m.Chat.Title}
	switch m.Chat.Type {
	case models.ChatTypePrivate:
		src.ChatType = platform.ChatDM
		src.ChatName = strings.TrimSpace(m.Chat.FirstName + " " + m.Chat.LastName)
	case models.ChatTypeGroup, models.ChatTypeSupergroup:
		src.ChatType = platform.ChatGroup
	case models.ChatTypeChannel:
		src.ChatType = platform.ChatChannel
	default:
		a.log.Warn("telegram: skipping a message from an unknown chat type", "chat_type", string(m.Chat.Type))
		return platform.Event{}, false
	}
	if m.MessageThreadID != 0 && (m.IsTopicMessage || src.ChatType == platform.ChatDM) {
		src.ThreadID = strconv.Itoa(m.MessageThreadID)
	}
	if m.From != nil {
		src.UserID = strconv.FormatInt(m.From.ID, 10)
		src.UserName = m.From.Username
		if src.UserName == "" {
			src.UserName = strings.TrimSpace(m.From.FirstName + " " + m.From.LastName)
		}
		src.IsBot = m.From.IsBot
	}
	text := m.Text
	if text == "" {
		text = m.Caption
	}
	if len(text) > maxText {
		text = text[:maxText]
	}
	ev := platform.Event{Kind: kind, Source: src, Text: text, MessageID: strconv.Itoa(m.ID), Time: time.Unix(int64(m.Date), 0)}
	if m.ReplyToMessage != nil {
		ev.ReplyTo = strconv.Itoa(m.ReplyToMessage.ID)
		if me := a.me.Load(); me != nil && m.ReplyToMessage.From != nil && m.ReplyToMessage.From.ID == me.id {
			ev.Mentioned = true
		}
	}
	if me := a.me.Load(); me != nil && me.username != "" && strings.Contains(strings.ToLower(text), "@"+strings.ToLower(me.username)) {
		ev.Mentioned = true
	}
	if kind == platform.EventMessage && strings.TrimSpace(text) == "" {
		return ev, false // stickers, photos without captions: nothing to say to the agent yet
	}
	return ev, true
}

// reaction is a message_reaction update: the reactions a user now has on a
// message (an anonymous one, by a chat, has no user to authorise: skipped).
func (a *Adapter) reaction(r *models.MessageReactionUpdated) (platform.Event, bool) {
	if r.User == nil {
		return platform.Event{}, false
	}
	src := platform.Source{Platform: Name, ChatID: strconv.FormatInt(r.Chat.ID, 10), ChatName: r.Chat.Title, ChatType: platform.ChatGroup,
		UserID: strconv.FormatInt(r.User.ID, 10), UserName: r.User.Username, IsBot: r.User.IsBot}
	if r.Chat.Type == models.ChatTypePrivate {
		src.ChatType = platform.ChatDM
	}
	emojis, custom := []any{}, []any{}
	for _, rt := range r.NewReaction {
		switch {
		case rt.ReactionTypeEmoji != nil:
			emojis = append(emojis, rt.ReactionTypeEmoji.Emoji)
		case rt.ReactionTypeCustomEmoji != nil:
			custom = append(custom, rt.ReactionTypeCustomEmoji.CustomEmojiID)
		}
	}
	return platform.Event{Kind: platform.EventReaction, Source: src, MessageID: strconv.Itoa(r.MessageID), Time: time.Unix(int64(r.Date), 0),
		Payload: map[string]any{"emojis": emojis, "custom_emoji_ids": custom}}, true
}

func (a *Adapter) callback(ctx context.Context, q *models.CallbackQuery) (platform.Event, bool) {
	src := platform.Source{Platform: Name, ChatType: platform.ChatDM, UserID: strconv.FormatInt(q.From.ID, 10), UserName: q.From.Username}
	ev := platform.Event{Kind: platform.EventButton, Data: q.Data}
	if m := q.Message.Message; m != nil {
		src.ChatID = strconv.FormatInt(m.Chat.ID, 10)
		if m.Chat.Type != models.ChatTypePrivate {
			src.ChatType = platform.ChatGroup
		}
		if m.MessageThreadID != 0 && (m.IsTopicMessage || src.ChatType == platform.ChatDM) {
			src.ThreadID = strconv.Itoa(m.MessageThreadID) // the question's topic: its session
		}
		ev.MessageID = strconv.Itoa(m.ID)
	} else if m := q.Message.InaccessibleMessage; m != nil {
		src.ChatID = strconv.FormatInt(m.Chat.ID, 10)
		ev.MessageID = strconv.Itoa(m.MessageID)
	}
	ev.Source = src
	id := q.ID
	ev.Ack = func(text string) {
		if _, err := a.bot.AnswerCallbackQuery(context.WithoutCancel(ctx), &bot.AnswerCallbackQueryParams{CallbackQueryID: id, Text: text}); err != nil {
			a.log.Warn("telegram: answerCallbackQuery failed", "error", redactToken(err.Error(), a.o.Token))
		}
	}
	return ev, true
}

// Send sends msg, split at 4096 UTF-16 units, each piece in MarkdownV2 or,
// when Telegram refuses that, as plain text. A 429 waits retry_after and
// tries again (three times); the result names the last piece sent.
func (a *Adapter) Send(ctx context.Context, msg platform.Outbound) (platform.SendResult, error) {
	chat, err := strconv.ParseInt(msg.ChatID, 10, 64)
	if err != nil {
		return platform.SendResult{}, fmt.Errorf("telegram: chat id %q is not a number", msg.ChatID)
	}
	thread, _ := strconv.Atoi(msg.ThreadID)
	var res platform.SendResult
	pieces := Split(msg.Text, MaxMessageUnits)
	for i, piece := range pieces {
		p := &bot.SendMessageParams{ChatID: chat, MessageThreadID: thread, Text: MarkdownV2(piece), ParseMode: models.ParseModeMarkdown}
		if utf16Len(p.Text) > MaxMessageUnits {
			p.Text, p.ParseMode = piece, ""
		}
		if i == 0 && msg.ReplyTo != "" {
			if id, err := strconv.Atoi(msg.ReplyTo); err == nil {
				p.ReplyParameters = &models.ReplyParameters{MessageID: id, AllowSendingWithoutReply: true}
			}
		}
		if i == len(pieces)-1 && len(msg.Buttons) > 0 {
			row := make([]inlineButton, 0, len(msg.Buttons))
			for _, b := range msg.Buttons {
				row = append(row, inlineButton{Text: b.Label, CallbackData: b.Data})
			}
			p.ReplyMarkup = inlineKeyboard{InlineKeyboard: [][]inlineButton{row}}
		}
		m, err := a.sendPiece(ctx, p, piece)
		if err != nil {
			return retryable(res, err), fmt.Errorf("telegram: sendMessage: %s", redactToken(err.Error(), a.o.Token))
		}
		res.MessageID = strconv.Itoa(m.ID)
	}
	return res, nil
}

// inlineKeyboard is the reply markup of buttons: the library's own type
// always sends an empty copy_text with each button (a struct field cannot be
// omitted), which is not what a callback button is.
type inlineKeyboard struct {
	InlineKeyboard [][]inlineButton `json:"inline_keyboard"`
}

type inlineButton struct {
	Text         string `json:"text"`
	CallbackData string `json:"callback_data"`
}

func (a *Adapter) sendPiece(ctx context.Context, p *bot.SendMessageParams, plain string) (*models.Message, error) {
	for attempt := 0; ; attempt++ {
		m := &models.Message{}
		err := a.call(ctx, "sendMessage", p, m)
		var tooMany *bot.TooManyRequestsError
		switch {
		case err == nil:
			return m, nil
		case errors.As(err, &tooMany) && attempt < 3:
			if !sleep(ctx, time.Duration(max(tooMany.RetryAfter, 1))*time.Second) {
				return nil, err
			}
		case errors.Is(err, bot.ErrorBadRequest) && p.ParseMode != "" && strings.Contains(err.Error(), "can't parse entities"):
			p.Text, p.ParseMode = plain, ""
		default:
			return nil, err
		}
	}
}

func retryable(res platform.SendResult, err error) platform.SendResult {
	var tooMany *bot.TooManyRequestsError
	if errors.As(err, &tooMany) {
		res.Retryable, res.RetryAfter = true, time.Duration(tooMany.RetryAfter)*time.Second
	}
	return res
}

// Edit replaces the text of a message the bot sent.
func (a *Adapter) Edit(ctx context.Context, chatID, messageID, text string) error {
	chat, err1 := strconv.ParseInt(chatID, 10, 64)
	id, err2 := strconv.Atoi(messageID)
	if err1 != nil || err2 != nil {
		return fmt.Errorf("telegram: chat %q / message %q: ids must be numbers", chatID, messageID)
	}
	p := &bot.EditMessageTextParams{ChatID: chat, MessageID: id, Text: MarkdownV2(text), ParseMode: models.ParseModeMarkdown}
	_, err := a.bot.EditMessageText(ctx, p)
	if err != nil && errors.Is(err, bot.ErrorBadRequest) && strings.Contains(err.Error(), "can't parse entities") {
		p.Text, p.ParseMode = text, ""
		_, err = a.bot.EditMessageText(ctx, p)
	}
	if err != nil {
		return fmt.Errorf("telegram: editMessageText: %s", redactToken(err.Error(), a.o.Token))
	}
	return nil
}

// Typing shows "typing…" in the chat for about five seconds.
func (a *Adapter) Typing(ctx context.Context, chatID, threadID string) error {
	chat, err := strconv.ParseInt(chatID, 10, 64)
	if err != nil {
		return fmt.Errorf("telegram: chat id %q is not a number", chatID)
	}
	thread, _ := strconv.Atoi(threadID)
	err = a.call(ctx, "sendChatAction", &bot.SendChatActionParams{ChatID: chat, MessageThreadID: thread, Action: models.ChatActionTyping}, nil)
	if err != nil {
		return fmt.Errorf("telegram: sendChatAction: %s", redactToken(err.Error(), a.o.Token))
	}
	return nil
}

// AddReaction sets the bot's reaction on a message (the Bot API replaces any
// earlier one); an empty emoji clears it.
func (a *Adapter) AddReaction(ctx context.Context, chatID, messageID, emoji string) error {
	chat, err1 := strconv.ParseInt(chatID, 10, 64)
	id, err2 := strconv.Atoi(messageID)
	if err1 != nil || err2 != nil {
		return fmt.Errorf("telegram: chat %q / message %q: ids must be numbers", chatID, messageID)
	}
	p := &bot.SetMessageReactionParams{ChatID: chat, MessageID: id, Reaction: []models.ReactionType{}}
	if emoji != "" {
		p.Reaction = []models.ReactionType{{Type: models.ReactionTypeTypeEmoji,
			ReactionTypeEmoji: &models.ReactionTypeEmoji{Type: models.ReactionTypeTypeEmoji, Emoji: emoji}}}
	}
	if _, err := a.bot.SetMessageReaction(ctx, p); err != nil {
		return errors.New("telegram set_message_reaction failed")
	}
	return nil
}

// SetThreadTitle renames a forum topic (a DM topic or a supergroup's).
func (a *Adapter) SetThreadTitle(ctx context.Context, chatID, threadID, title string) error {
	chat, err1 := strconv.ParseInt(chatID, 10, 64)
	thread, err2 := strconv.Atoi(threadID)
	if err1 != nil || err2 != nil {
		return fmt.Errorf("telegram: chat %q / thread %q: ids must be numbers", chatID, threadID)
	}
	if _, err := a.bot.EditForumTopic(ctx, &bot.EditForumTopicParams{ChatID: chat, MessageThreadID: thread, Name: title}); err != nil {
		return fmt.Errorf("telegram: editForumTopic: %s", redactToken(err.Error(), a.o.Token))
	}
	return nil
}

// redactToken keeps the bot token (which is in every Bot API URL) out of logs.
func redactToken(s, token string) string {
	if token == "" {
		return s
	}
	return strings.ReplaceAll(s, token, "***")
}

func nextBackoff(d time.Duration) time.Duration {
	if d == 0 {
		return 250 * time.Millisecond
	}
	return min(2*d, 30*time.Second)
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// dedup remembers the last n update ids: Telegram may send an update again
// (after a timeout, or a restart that had not confirmed it).
type dedup struct {
	mu   sync.Mutex
	set  map[int64]struct{}
	ring []int64
	next int
}

func newDedup(n int) *dedup {
	return &dedup{set: make(map[int64]struct{}, n), ring: make([]int64, 0, n)}
}

// add reports whether id is new, remembering it.
func (d *dedup) add(id int64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.set[id]; ok {
		return false
	}
	if len(d.ring) < cap(d.ring) {
		d.ring = append(d.ring, id)
	} else {
		delete(d.set, d.ring[d.next])
		d.ring[d.next] = id
		d.next = (d.next + 1) % len(d.ring)
	}
	d.set[id] = struct{}{}
	return true
}
