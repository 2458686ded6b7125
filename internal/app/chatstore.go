package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/hermes-go/hermes/internal/agent"
	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/session"
	"github.com/hermes-go/hermes/internal/tools"
)

// chatStore is the session store as a chat uses it.
type chatStore interface {
	agent.Recorder
	Create(ctx context.Context, model, source string) (string, error)
	// History resolves id (or a unique prefix) and returns the full id and messages.
	History(ctx context.Context, id string) (string, []llm.Message, error)
	End(ctx context.Context, id string) error
	Close() error
	// Sessions is the store itself, for what the chat's commands read and edit.
	Sessions() session.Backend
}

// sessionRecorder persists a chat in $HERMES_HOME/state.db.
type sessionRecorder struct{ s session.Backend }

func openChatStore(ctx context.Context, hermesHome string) (chatStore, error) {
	s, err := session.Open(ctx, session.Path(hermesHome))
	if err != nil {
		return nil, err
	}
	return sessionRecorder{s}, nil
}

func (r sessionRecorder) Create(ctx context.Context, model, source string) (string, error) {
	return r.s.NewSession(ctx, session.Session{Model: model, Source: source})
}

// ForkSession starts the session that continues parent after a compaction:
// same model and source, parent_session_id set; the parent is ended.
func (r sessionRecorder) ForkSession(ctx context.Context, parent string) (string, error) {
	p, err := r.s.Get(ctx, parent)
	if err != nil {
		return "", err
	}
	id, err := r.s.NewSession(ctx, session.Session{Model: p.Model, Source: p.Source, Title: p.Title, ParentID: parent})
	if err != nil {
		return "", err
	}
	_ = r.s.EndSession(ctx, parent)
	return id, nil
}

func (r sessionRecorder) History(ctx context.Context, id string) (string, []llm.Message, error) {
	full, err := r.s.Resolve(ctx, id)
	if err != nil {
		if errors.Is(err, session.ErrNotFound) {
			return "", nil, fmt.Errorf("no session %q to resume", id)
		}
		return "", nil, err
	}
	msgs, err := r.s.Messages(ctx, full)
	return full, msgs, err
}

func (r sessionRecorder) AppendMessage(ctx context.Context, id string, m llm.Message) error {
	_, err := r.s.AppendMessage(ctx, id, m)
	return err
}

func (r sessionRecorder) RecordToolCall(ctx context.Context, id string, rec agent.ToolRecord) error {
	return r.s.RecordToolCall(ctx, id, session.ToolCall{CallID: rec.CallID, Name: rec.Name, Args: rec.Args,
		Result: rec.Result, Status: string(rec.Status), Error: rec.Error, Duration: rec.Duration})
}

func (r sessionRecorder) End(ctx context.Context, id string) error { return r.s.EndSession(ctx, id) }

func (r sessionRecorder) Close() error { return r.s.Close() }

func (r sessionRecorder) Sessions() session.Backend { return r.s }

// ChatTranscript is what the turns of one `hermes chat -q` said, as --json
// prints it.
type ChatTranscript struct {
	SessionID string               `json:"session_id"`
	Model     string               `json:"model"`
	Final     string               `json:"final"`
	Messages  []llm.Message        `json:"messages"`
	ToolCalls []ChatTranscriptCall `json:"tool_calls"`
	// Error is the turn's error text, null when it ended well.
	Error any `json:"error"`
}

// ChatTranscriptCall is one tool call of a ChatTranscript.
type ChatTranscriptCall struct {
	ID         string       `json:"id"`
	Name       string       `json:"name"`
	Arguments  string       `json:"arguments"`
	Result     string       `json:"result"`
	Status     tools.Status `json:"status"`
	DurationMS int64        `json:"duration_ms"`
}

// Transcript gathers turns of this chat, and the error that ended them (nil
// for none), into one transcript; the final answer is the last turn's.
func (c *Chat) Transcript(turns []*Turn, runErr error) ChatTranscript {
	out := ChatTranscript{SessionID: c.sess.ID, Model: c.model, Messages: []llm.Message{}, ToolCalls: []ChatTranscriptCall{}}
	for _, t := range turns {
		out.Final = t.Final
		out.Messages = append(out.Messages, t.Added...)
		for _, r := range t.ToolCalls {
			out.ToolCalls = append(out.ToolCalls, ChatTranscriptCall{ID: r.CallID, Name: r.Name, Arguments: r.Args, Result: r.Result,
				Status: r.Status, DurationMS: r.Duration.Milliseconds()})
		}
	}
	if runErr != nil {
		out.Error = runErr.Error()
	}
	return out
}
