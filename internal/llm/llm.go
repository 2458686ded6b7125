// Package llm talks to an OpenAI-compatible chat-completions endpoint (OpenRouter,
// OpenAI, vLLM, llama.cpp server, Ollama, ...): one request type, one response type,
// tool calling, streaming with tool-call deltas assembled, and retries with backoff.
//
// It is hand-rolled over net/http rather than built on an SDK: chat completions is a
// single endpoint, and the SDKs either cost tens of seconds of compile time or lack a
// generic way to pass provider extras (docs/DESIGN.md). Everything the agent needs
// goes through the small Client interface so model-provider plugins can plug in later.
package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// ToolCall is one function call the model asked for.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// FunctionCall names the function and carries its arguments as the model wrote them:
// a JSON document in a string, possibly malformed (the caller validates it).
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Message is one chat message in the OpenAI wire shape.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	Name       string     `json:"name,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
}

// Roles.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       string          `json:"name,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	ToolCalls  []ToolCall      `json:"tool_calls,omitempty"`
}

var jsonNull = json.RawMessage("null")

// MarshalJSON writes content as null for an assistant message that only calls tools:
// several providers reject "" there, and null is what OpenAI itself sends back.
func (m Message) MarshalJSON() ([]byte, error) {
	w := wireMessage{Role: m.Role, Name: m.Name, ToolCallID: m.ToolCallID, ToolCalls: m.ToolCalls}
	if m.Content == "" && len(m.ToolCalls) > 0 {
		w.Content = jsonNull
	} else {
		b, err := marshalNoEscape(m.Content)
		if err != nil {
			return nil, err
		}
		w.Content = b
	}
	return marshalNoEscape(w)
}

// UnmarshalJSON accepts content as a string, null, or an array of content parts
// (the text parts are joined), which some providers send back.
func (m *Message) UnmarshalJSON(b []byte) error {
	var w wireMessage
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	text, err := contentText(w.Content)
	if err != nil {
		return err
	}
	*m = Message{Role: w.Role, Content: text, Name: w.Name, ToolCallID: w.ToolCallID, ToolCalls: w.ToolCalls}
	return nil
}

func contentText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, jsonNull) {
		return "", nil
	}
	switch raw[0] {
	case '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	case '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(raw, &parts); err != nil {
			return "", err
		}
		var sb strings.Builder
		for _, p := range parts {
			if p.Type == "text" || p.Type == "" {
				sb.WriteString(p.Text)
			}
		}
		return sb.String(), nil
	}
	// Anything else (a number, an object) is kept verbatim rather than lost.
	return string(raw), nil
}

// ToolSpec describes one tool to the model.
type ToolSpec struct {
	Name        string
	Description string
	Parameters  map[string]any // a JSON schema; nil means "no arguments"
	// encoded is the wire form when Encoded made it: a tool offered on every
	// request is then encoded once, not once per request.
	encoded []byte
}

// Encoded returns t with its wire form made now; MarshalJSON then returns
// it. t's fields (Parameters included) must not change afterwards.
func (t ToolSpec) Encoded() ToolSpec {
	t.encoded = nil
	if b, err := t.wire(); err == nil {
		t.encoded = b
	}
	return t
}

// MarshalJSON writes the OpenAI tool shape {"type":"function","function":{...}}.
func (t ToolSpec) MarshalJSON() ([]byte, error) {
	if t.encoded != nil {
		return t.encoded, nil
	}
	return t.wire()
}

func (t ToolSpec) wire() ([]byte, error) {
	params := t.Parameters
	if params == nil {
		params = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return marshalNoEscape(map[string]any{
		"type": "function",
		"function": map[string]any{
			"name":        t.Name,
			"description": t.Description,
			"parameters":  params,
		},
	})
}

// UnmarshalJSON reads the OpenAI tool shape (used by the fake server to record what
// the model saw).
func (t *ToolSpec) UnmarshalJSON(b []byte) error {
	var w struct {
		Function struct {
			Name        string         `json:"name"`
			Description string         `json:"description"`
			Parameters  map[string]any `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*t = ToolSpec{Name: w.Function.Name, Description: w.Function.Description, Parameters: w.Function.Parameters}
	return nil
}

// Request is one chat-completions call.
type Request struct {
	Model       string // empty: the client's configured model
	Messages    []Message
	Tools       []ToolSpec
	Temperature *float64
	MaxTokens   int
	// ResponseFormat is passed through as response_format, e.g. for complete_structured:
	// {"type":"json_schema","json_schema":{"name":...,"schema":{...},"strict":true}}.
	ResponseFormat map[string]any
	// Stream asks for SSE even without a delta callback (Chat streams whenever onDelta
	// is non-nil).
	Stream bool
	// Extra fields merged into the request body (provider extras such as OpenRouter's
	// "provider" or "reasoning"); they never override the fields above.
	Extra map[string]any
}

// Usage is the token accounting the provider reports.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Response is the assistant's answer to one Request.
type Response struct {
	ID           string
	Model        string
	Message      Message // Role is always "assistant"
	FinishReason string  // "stop", "tool_calls", "length", ...
	Usage        Usage
	// Reasoning is reasoning text some providers return beside the answer
	// (reasoning_content / reasoning); empty otherwise.
	Reasoning string
}

// Delta is one streamed piece: text, or a fragment of tool call ToolCallIndex.
// The client assembles the full tool calls itself; deltas are for display and hooks.
type Delta struct {
	Content       string
	ToolCallIndex int
	ToolCallName  string // set on the first fragment of a tool call
	ToolCallArgs  string // a fragment of the arguments JSON
	Reasoning     string // a reasoning fragment (providers that stream reasoning)
}

// Client sends chat requests. A nil onDelta makes a plain request; a non-nil one
// streams (SSE) and calls onDelta for every piece as it arrives, on the caller's
// goroutine, before Chat returns the assembled Response.
type Client interface {
	Chat(ctx context.Context, req Request, onDelta func(Delta)) (*Response, error)
}

// Config configures New. Zero values take the defaults documented per field.
type Config struct {
	BaseURL  string // e.g. https://openrouter.ai/api/v1; "/chat/completions" is appended
	APIKey   string // sent as "Authorization: Bearer KEY" when set
	Model    string // default model for requests that name none
	Provider string // informational (hook payloads, errors)

	HTTPClient *http.Client // default: a client with no overall timeout (Timeout/IdleTimeout apply)
	// MaxRetries is how many times a failed attempt is retried (429, 5xx, network
	// errors, a stream that stalls before any output). 0 means the default, 3;
	// negative means never retry.
	MaxRetries int
	// RequestTimeout (model.request_timeout) bounds how long one attempt waits for
	// the model to answer at all: a stream's response headers and first line (a
	// keep-alive counts: the server is working on it), default 2 minutes or
	// IdleTimeout if longer; a whole non-streamed response, when set (else
	// Timeout). A hung endpoint then costs this per attempt, not more.
	RequestTimeout time.Duration
	// Timeout bounds one non-streaming attempt when RequestTimeout is not set
	// (default 10 minutes, model.timeout). Streams are bounded by IdleTimeout once
	// they answer, so a long answer that keeps flowing is fine.
	Timeout time.Duration
	// IdleTimeout is the longest a stream that has started answering may go
	// without a line (default 2 minutes).
	IdleTimeout time.Duration
	// RetryBaseDelay is the first backoff (default 1s); it doubles per attempt, capped
	// at 30s, with jitter. A Retry-After header from the server wins.
	RetryBaseDelay time.Duration

	// OnAttempt, if set, is called before every HTTP attempt (attempt 0 is the first
	// try), with the Chat call's ctx; the pre_api_request hook fires here.
	OnAttempt func(ctx context.Context, attempt int)
	// OnAttemptError, if set, is called after every failed attempt (not when ctx is
	// cancelled), with whether it will be retried and after how long; the
	// api_request_error hook fires here. The last failure is also Chat's error.
	OnAttemptError func(ctx context.Context, attempt int, err *APIError, willRetry bool, wait time.Duration)
	// OnRetry, if set, is called after a failed attempt that will be retried, with the
	// error (an *APIError) and the wait before the next attempt.
	OnRetry func(attempt int, err error, wait time.Duration)
	// Sleep waits between attempts; nil sleeps on a real timer and returns early with
	// ctx's error. Tests inject one to record waits without waiting.
	Sleep func(ctx context.Context, d time.Duration) error
	// UserAgent overrides the User-Agent header.
	UserAgent string
	// Headers are extra request headers (a provider profile's default_headers);
	// they never replace Authorization or Content-Type.
	Headers map[string]string
	// Profile, if set, rewrites each request before it is sent (a plugin
	// provider's prepare_messages / build_extra_body hooks). Its error fails
	// the request without a retry: a broken hook does not get better.
	Profile Profile
}

// Profile is a provider's say over the requests sent to it.
type Profile interface {
	PrepareMessages(ctx context.Context, msgs []Message) ([]Message, error)
	ExtraBody(ctx context.Context, model string) (map[string]any, error)
}

// marshalNoEscape encodes v without HTML escaping (prompts contain <, > and &
// often; escaping them is legal but makes recorded requests hard to read).
func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
