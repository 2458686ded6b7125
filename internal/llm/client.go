package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Defaults for Config's zero values.
const (
	DefaultMaxRetries     = 3
	DefaultTimeout        = 10 * time.Minute
	DefaultIdleTimeout    = 2 * time.Minute
	DefaultRequestTimeout = 2 * time.Minute
	DefaultRetryBaseDelay = time.Second
	maxBackoff            = 30 * time.Second
	// A Retry-After longer than this is not waited out: the error is returned so the
	// user sees it instead of a silent hang.
	maxRetryAfter = 2 * time.Minute
	// maxResponseBody caps a non-streamed response (and one stream line).
	maxResponseBody = 64 << 20
)

type client struct {
	cfg      Config
	endpoint string
	http     *http.Client
	sleep    func(ctx context.Context, d time.Duration) error
	// timeoutKey names the setting that bounds a non-streamed attempt, for errors.
	timeoutKey string
}

// New returns a Client for the chat-completions endpoint at cfg.BaseURL.
func New(cfg Config) (Client, error) {
	base := strings.TrimSpace(cfg.BaseURL)
	if base == "" {
		return nil, errors.New("llm: no base URL: set model.base_url or model.provider in config.yaml")
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("llm: base URL %q is not an http(s) URL (e.g. https://openrouter.ai/api/v1)", base)
	}
	endpoint := strings.TrimRight(base, "/")
	if !strings.HasSuffix(endpoint, "/chat/completions") {
		endpoint += "/chat/completions"
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = DefaultMaxRetries
	}
	if cfg.MaxRetries < 0 {
		cfg.MaxRetries = 0
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	timeoutKey := "model.timeout"
	if cfg.RequestTimeout > 0 {
		cfg.Timeout, timeoutKey = cfg.RequestTimeout, "model.request_timeout"
	} else {
		// Unset, a stream may take as long to start as it may pause once started:
		// whoever raised the idle timeout for a slow server keeps that room.
		cfg.RequestTimeout = max(DefaultRequestTimeout, cfg.IdleTimeout)
	}
	if cfg.RetryBaseDelay <= 0 {
		cfg.RetryBaseDelay = DefaultRetryBaseDelay
	}
	c := &client{cfg: cfg, endpoint: endpoint, http: cfg.HTTPClient, sleep: cfg.Sleep, timeoutKey: timeoutKey}
	if c.http == nil {
		c.http = &http.Client{Transport: pooledTransport()}
	}
	if c.sleep == nil {
		c.sleep = sleepCtx
	}
	return c, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Chat implements Client.
func (c *client) Chat(ctx context.Context, req Request, onDelta func(Delta)) (*Response, error) {
	stream := onDelta != nil || req.Stream
	if onDelta == nil {
		onDelta = func(Delta) {}
	}
	if c.cfg.Profile != nil {
		var err error
		if req, err = c.applyProfile(ctx, req); err != nil {
			return nil, err
		}
	}
	body, err := c.body(req, stream)
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("chat completions request to %s: %w", c.endpoint, err)
		}
		if c.cfg.OnAttempt != nil {
			c.cfg.OnAttempt(ctx, attempt)
		}
		var (
			resp    *Response
			emitted bool
		)
		if stream {
			resp, emitted, err = c.streamOnce(ctx, body, onDelta)
		} else {
			resp, err = c.once(ctx, body)
		}
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("chat completions request to %s: %w", c.endpoint, ctx.Err())
		}
		var ae *APIError
		if !errors.As(err, &ae) {
			return nil, err
		}
		retry := ae.Retryable && !emitted && attempt < c.cfg.MaxRetries
		wait := c.backoff(attempt, ae.RetryAfter)
		if retry && ae.RetryAfter > maxRetryAfter {
			ae.Message += fmt.Sprintf(" (the server asks to retry after %s)", ae.RetryAfter.Round(time.Second))
			retry = false
		}
		if !retry {
			wait = 0
		}
		if c.cfg.OnAttemptError != nil {
			c.cfg.OnAttemptError(ctx, attempt, ae, retry, wait)
		}
		if !retry {
			return nil, err
		}
		if c.cfg.OnRetry != nil {
			c.cfg.OnRetry(attempt+1, ae, wait)
		}
		if err := c.sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("chat completions request to %s: %w", c.endpoint, err)
		}
	}
}

// backoff is RetryBaseDelay·2^attempt capped at 30s, jittered to [d/2, d), unless the
// server said how long to wait.
func (c *client) backoff(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return retryAfter
	}
	d := c.cfg.RetryBaseDelay << min(attempt, 16)
	if d > maxBackoff || d <= 0 {
		d = maxBackoff
	}
	half := d / 2
	return half + rand.N(half+1)
}

// body builds the request JSON once; every attempt sends the same bytes.
func (c *client) body(req Request, stream bool) ([]byte, error) {
	model := req.Model
	if model == "" {
		model = c.cfg.Model
	}
	if model == "" {
		return nil, errors.New("llm: no model: set model.default in config.yaml (or pass --model)")
	}
	m := make(map[string]any, len(req.Extra)+8)
	for k, v := range req.Extra {
		m[k] = v
	}
	m["model"] = model
	msgs := req.Messages
	if msgs == nil {
		msgs = []Message{}
	}
	m["messages"] = msgs
	// Tools encoded once (ToolSpec.Encoded, as the agent offers them) are
	// spliced in as they are: through encoding/json their kilobytes of
	// schema were scanned and compacted again for every request.
	spliced := allEncoded(req.Tools)
	if len(req.Tools) > 0 && !spliced {
		m["tools"] = req.Tools
	} else if spliced {
		delete(m, "tools") // an Extra of that name never overrides
	}
	if req.Temperature != nil {
		m["temperature"] = *req.Temperature
	}
	if req.MaxTokens > 0 {
		m["max_tokens"] = req.MaxTokens
	}
	if req.ResponseFormat != nil {
		m["response_format"] = req.ResponseFormat
	}
	if stream {
		m["stream"] = true
		m["stream_options"] = map[string]any{"include_usage": true}
	} else {
		delete(m, "stream")
		delete(m, "stream_options")
	}
	b, err := marshalNoEscape(m)
	if err != nil {
		return nil, fmt.Errorf("llm: encode request: %w", err)
	}
	if spliced { // b is an object with at least "model": add the field before its end
		n := len(b) + len(`,"tools":[]}`)
		for _, t := range req.Tools {
			n += len(t.encoded) + 1
		}
		out := make([]byte, 0, n)
		out = append(append(out, b[:len(b)-1]...), `,"tools":[`...)
		for i, t := range req.Tools {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, t.encoded...)
		}
		b = append(out, "]}"...)
	}
	return b, nil
}

// allEncoded reports whether there are tools and every one has its wire form
// made (ToolSpec.Encoded).
func allEncoded(tools []ToolSpec) bool {
	for _, t := range tools {
		if t.encoded == nil {
			return false
		}
	}
	return len(tools) > 0
}

func (c *client) newRequest(ctx context.Context, body []byte, stream bool) (*http.Request, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("llm: %w", err)
	}
	r.Header.Set("Content-Type", "application/json")
	if stream {
		r.Header.Set("Accept", "text/event-stream")
	} else {
		r.Header.Set("Accept", "application/json")
	}
	if c.cfg.APIKey != "" {
		r.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	for k, v := range c.cfg.Headers {
		if !strings.EqualFold(k, "Authorization") && !strings.EqualFold(k, "Content-Type") {
			r.Header.Set(k, v)
		}
	}
	ua := c.cfg.UserAgent
	if ua == "" {
		ua = "hermes-go"
	}
	r.Header.Set("User-Agent", ua)
	return r, nil
}

// transportError turns an error from Do or a body read into an APIError; the caller
// has already checked its own ctx.
func (c *client) transportError(err error, what string) *APIError {
	e := &APIError{Endpoint: c.endpoint, Reason: ReasonNetwork, Retryable: true, Err: err, Message: what + ": " + err.Error()}
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		e.Message = what + ": " + ue.Err.Error()
	}
	return e
}

// once makes one non-streaming attempt.
func (c *client) once(ctx context.Context, body []byte) (*Response, error) {
	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := c.newRequest(actx, body, false)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, c.attemptError(ctx, actx, err, "no response")
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	if err != nil {
		return nil, c.attemptError(ctx, actx, err, "reading the response")
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, errorFromHTTP(c.endpoint, resp, data)
	}
	return c.decodeResponse(resp, data)
}

func (c *client) attemptError(ctx, actx context.Context, err error, what string) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(actx.Err(), context.DeadlineExceeded) {
		return &APIError{Endpoint: c.endpoint, Reason: ReasonTimeout, Retryable: true, Err: err, After: c.cfg.Timeout,
			Message: fmt.Sprintf("no complete response within %s (%s)", c.cfg.Timeout, c.timeoutKey)}
	}
	return c.transportError(err, what)
}

type wireResponse struct {
	ID      string          `json:"id"`
	Model   string          `json:"model"`
	Choices []wireChoiceRaw `json:"choices"`
	Usage   *Usage          `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

type wireChoiceRaw struct {
	Message struct {
		Message
		Reasoning        string `json:"reasoning"`
		ReasoningContent string `json:"reasoning_content"`
	} `json:"message"`
	FinishReason string `json:"finish_reason"`
}

// UnmarshalJSON is needed because Message has its own UnmarshalJSON, which would
// otherwise swallow the embedding struct's reasoning fields.
func (w *wireChoiceRaw) UnmarshalJSON(b []byte) error {
	var outer struct {
		Message      json.RawMessage `json:"message"`
		FinishReason string          `json:"finish_reason"`
	}
	if err := json.Unmarshal(b, &outer); err != nil {
		return err
	}
	w.FinishReason = outer.FinishReason
	if len(outer.Message) == 0 || string(outer.Message) == "null" {
		return nil
	}
	if err := json.Unmarshal(outer.Message, &w.Message.Message); err != nil {
		return err
	}
	var r struct {
		Reasoning        string `json:"reasoning"`
		ReasoningContent string `json:"reasoning_content"`
	}
	_ = json.Unmarshal(outer.Message, &r)
	w.Message.Reasoning, w.Message.ReasoningContent = r.Reasoning, r.ReasoningContent
	return nil
}

func (c *client) malformed(data []byte, format string, args ...any) *APIError {
	return &APIError{Status: http.StatusOK, Endpoint: c.endpoint, Reason: ReasonMalformed, Retryable: true,
		Body: capBody(data), Message: fmt.Sprintf(format, args...)}
}

func (c *client) decodeResponse(resp *http.Response, data []byte) (*Response, error) {
	if looksHTML(resp.Header.Get("Content-Type"), data) {
		msg := "the server answered with an HTML page instead of JSON"
		if t := htmlTitle(data); t != "" {
			msg += fmt.Sprintf(" (%q)", t)
		}
		return nil, &APIError{Status: resp.StatusCode, Endpoint: c.endpoint, Reason: ReasonHTML, Body: capBody(data), Message: msg}
	}
	var w wireResponse
	if err := json.Unmarshal(data, &w); err != nil {
		e := c.malformed(data, "the response is not valid JSON: %v", err)
		e.Err = err
		return nil, e
	}
	if len(w.Error) > 0 && string(w.Error) != "null" {
		return nil, providerError(c.endpoint, w.Error, data)
	}
	if len(w.Choices) == 0 {
		return nil, c.malformed(data, "the response has no choices")
	}
	ch := w.Choices[0]
	out := &Response{ID: w.ID, Model: w.Model, Message: ch.Message.Message, FinishReason: ch.FinishReason}
	out.Message.Role = RoleAssistant
	out.Reasoning = ch.Message.ReasoningContent
	if out.Reasoning == "" {
		out.Reasoning = ch.Message.Reasoning
	}
	normalizeToolCalls(out.Message.ToolCalls)
	if out.FinishReason == "" {
		out.FinishReason = defaultFinish(out.Message)
	}
	if w.Usage != nil {
		out.Usage = *w.Usage
	}
	return out, nil
}

// normalizeToolCalls fills what some servers leave out: the type, and an id (a tool
// result must name the call it answers).
func normalizeToolCalls(calls []ToolCall) {
	for i := range calls {
		if calls[i].Type == "" {
			calls[i].Type = "function"
		}
		if calls[i].ID == "" {
			calls[i].ID = fmt.Sprintf("call_%d", i)
		}
	}
}

func defaultFinish(m Message) string {
	if len(m.ToolCalls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

// pooledTransport is the default transport keeping more idle connections per
// host: the default's two meant that of a gateway's concurrent turns (32),
// all but two dialled the model again, TLS handshake included, per request.
func pooledTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 256
	t.MaxIdleConnsPerHost = 64
	return t
}

// applyProfile runs the provider's hooks on a copy of req: prepare_messages
// replaces the messages, build_extra_body's keys join req.Extra (the
// request's own keys win).
func (c *client) applyProfile(ctx context.Context, req Request) (Request, error) {
	msgs, err := c.cfg.Profile.PrepareMessages(ctx, req.Messages)
	if err != nil {
		return req, fmt.Errorf("provider %s: %w", c.cfg.Provider, err)
	}
	req.Messages = msgs
	model := req.Model
	if model == "" {
		model = c.cfg.Model
	}
	extra, err := c.cfg.Profile.ExtraBody(ctx, model)
	if err != nil {
		return req, fmt.Errorf("provider %s: %w", c.cfg.Provider, err)
	}
	if len(extra) > 0 {
		merged := make(map[string]any, len(extra)+len(req.Extra))
		for k, v := range extra {
			merged[k] = v
		}
		for k, v := range req.Extra {
			merged[k] = v
		}
		req.Extra = merged
	}
	return req, nil
}
