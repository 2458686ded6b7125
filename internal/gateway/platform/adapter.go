// Package platform is what the gateway and its platform adapters share:
// where a message came from (Source), what a platform tells the gateway
// (Event), what it sends (Outbound) and the Adapter contract (wave2 §2.5).
// The adapters (telegram, discord, plugin platforms) depend on it alone; the
// runner (internal/gateway) drives them through it.
package platform

import (
	"context"
	"time"
)

// Chat types of a Source (upstream's chat_type values).
const (
	ChatDM      = "dm"
	ChatGroup   = "group"
	ChatChannel = "channel"
	ChatThread  = "thread"
)

// Source is where a message came from and where its answer goes: upstream's
// SessionSource, the fields hermes uses. Every string in it came from the
// platform: untrusted, sanitise before showing it.
type Source struct {
	Platform string `json:"platform"`
	ChatID   string `json:"chat_id"`
	ChatName string `json:"chat_name,omitempty"`
	ChatType string `json:"chat_type"` // ChatDM, ChatGroup, ChatChannel, ChatThread
	UserID   string `json:"user_id,omitempty"`
	UserName string `json:"user_name,omitempty"`
	ThreadID string `json:"thread_id,omitempty"`
	// UserIDAlt is a second id for the same person (a platform's stable id
	// beside a display id); group sessions per user prefer it.
	UserIDAlt string `json:"user_id_alt,omitempty"`
	ScopeID   string `json:"scope_id,omitempty"` // a Discord guild, a Slack team
	IsBot     bool   `json:"is_bot,omitempty"`
	// ProspectiveThreadID is the thread a channel message will be answered in
	// (Discord auto-thread): the session is keyed on it.
	ProspectiveThreadID string `json:"prospective_thread_id,omitempty"`
	// RoleAuthorized is an adapter-time grant (a Discord role): accepted for
	// messages, never for ctx.inject_message (wave2 §2.4).
	RoleAuthorized bool `json:"role_authorized,omitempty"`
}

// EventKind is what happened on the platform.
type EventKind string

const (
	EventMessage       EventKind = "message"        // a new message for the agent
	EventEdited        EventKind = "message_edited" // gateway_platform_event only
	EventDeleted       EventKind = "message_deleted"
	EventThreadCreated EventKind = "thread_created"
	EventThreadRenamed EventKind = "thread_renamed"
	EventReaction      EventKind = "reaction" // someone reacted to a message
	EventButton        EventKind = "button"   // an inline button pressed (approvals): Data says which
)

// Event is one thing a platform told the gateway: upstream's MessageEvent.
type Event struct {
	Kind      EventKind
	Source    Source
	Text      string
	MessageID string
	ReplyTo   string
	Mentioned bool   // the bot was mentioned (groups answer only then, as configured)
	Data      string // EventButton: the button's callback data
	// Payload holds a platform event's own fields for gateway_platform_event
	// (a reaction's emojis, a renamed thread's old name), as upstream names them.
	Payload map[string]any
	Time    time.Time
	// Ack, when set, is called once the event is handled (a Telegram
	// callback query answered, a webhook acknowledged).
	Ack func(text string)
	// Delivery names the delivery a shared work queue handed the event over
	// as (a cluster's webhook item: "telegram:<update_id>"); "" otherwise.
	// The turn's user message is stored with it.
	Delivery string
	// Stored: the event's user message is already stored with Delivery (a
	// redelivery whose first run stopped before answering); its turn
	// continues from the stored history rather than appending it again.
	Stored bool
}

// Outbound is one message the gateway sends.
type Outbound struct {
	ChatID   string
	ThreadID string
	Text     string // markdown as the model wrote it; the adapter renders or falls back to plain text
	ReplyTo  string
	// Buttons, when set, are offered under the message (approvals): each
	// press comes back as an EventButton with the button's Data.
	Buttons []Button
}

// Button is one inline button.
type Button struct {
	Label string
	Data  string
}

// SendResult is upstream's SendResult.
type SendResult struct {
	MessageID  string
	Retryable  bool
	RetryAfter time.Duration
}

// Handler receives a platform's events. It returns quickly: the runner queues
// the work (one turn per session at a time, sessions concurrently).
type Handler func(ctx context.Context, ev Event)

// Adapter is one platform's connection (upstream's BasePlatformAdapter).
// Run connects, delivers events to h until ctx ends or the platform fails
// for good, and disconnects; a transient failure is retried inside Run.
type Adapter interface {
	Name() string
	Run(ctx context.Context, h Handler) error
	Send(ctx context.Context, msg Outbound) (SendResult, error)
	// Edit replaces the text of a message the bot sent (progress, approvals).
	Edit(ctx context.Context, chatID, messageID, text string) error
	// Typing shows that the agent is working in chatID (a no-op where the
	// platform has no such signal).
	Typing(ctx context.Context, chatID, threadID string) error
	Connected() bool
}

// ReactionAdder and ThreadRenamer are the platform actions of
// ctx.platform_actions v1; an adapter without one answers
// unsupported_platform_action.
type ReactionAdder interface {
	AddReaction(ctx context.Context, chatID, messageID, emoji string) error
}

type ThreadRenamer interface {
	SetThreadTitle(ctx context.Context, chatID, threadID, title string) error
}
