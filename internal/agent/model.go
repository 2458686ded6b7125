package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/hermes-go/hermes/internal/memory/memctx"
	"maps"
	"strings"
	"time"

	"github.com/hermes-go/hermes/internal/hooks"
	"github.com/hermes-go/hermes/internal/llm"
)

// call makes one model request with its hooks: pre_api_request, the stream
// observers, post_api_request, or api_request_error when it fails.
func (a *Agent) call(ctx context.Context, s *Session, t *Turn, userText string, specs []llm.ToolSpec, iter int) (*llm.Response, error) {
	t.APICalls++
	reqID := newID()
	req := llm.Request{Model: a.o.Model, Messages: t.requestMessages(s.Messages), Tools: specs, MaxTokens: a.o.MaxTokens,
		Temperature: a.o.Temperature, Stream: a.o.Stream}
	started := a.o.Now()
	chars := 0
	for _, m := range req.Messages {
		chars += len(m.Content)
		for _, c := range m.ToolCalls {
			chars += len(c.Function.Arguments)
		}
	}
	base := map[string]any{
		"task_id": s.ID, "turn_id": t.ID, "api_request_id": reqID, "session_id": s.ID, "platform": a.o.Platform,
		"model": a.o.Model, "provider": a.o.Provider, "base_url": a.o.BaseURL, "api_mode": "chat_completions",
		"api_call_count": t.APICalls,
	}
	var pre map[string]any
	if a.has(hooks.HookPreAPIRequest) {
		p := maps.Clone(base)
		pre = p
		p["user_message"] = userText
		p["conversation_history"] = messagesAsMaps(s.Messages)
		p["retry_count"] = 0
		p["request_messages"] = messagesAsMaps(req.Messages)
		p["message_count"] = len(req.Messages)
		p["tool_count"] = len(specs)
		p["approx_input_tokens"] = chars / 4
		p["request_char_count"] = chars
		p["max_tokens"] = nilIfZero(a.o.MaxTokens)
		p["started_at"] = float64(started.UnixNano()) / 1e9
		p["middleware_trace"] = []any{}
		p["request"] = requestMap(req)
		a.fire(ctx, hooks.HookPreAPIRequest, p)
	}

	reqChain, execChain := a.chains()
	if reqChain {
		meta := maps.Clone(base)
		if body := a.o.Middleware.Request(ctx, requestMap(req), meta); body != nil {
			applyRequestMap(&req, body)
		}
	}

	wait := a.startWait()
	defer wait.end()
	st := &attemptState{ctx: ctx, base: base, pre: pre, request: req, started: started, wait: wait}
	a.cur.Store(st)
	stream := newStreamObserver(a, ctx, s, t, iter)
	stream.wait = wait
	var onDelta func(llm.Delta)
	if req.Stream {
		onDelta = stream.delta
	}
	var resp *llm.Response
	var err error
	if execChain {
		do := func(body map[string]any) (any, error) {
			applyRequestMap(&req, body)
			r, err := a.o.Client.Chat(ctx, req, onDelta)
			if err != nil {
				return nil, err
			}
			return wireResponse{r}, nil
		}
		var out any
		out, err = a.o.Middleware.Execute(ctx, requestMap(req), maps.Clone(base), do)
		if err == nil && out == nil {
			err = fmt.Errorf("llm_execution middleware returned no response")
		}
		if err == nil {
			resp, err = asResponse(out)
		}
	} else {
		// No chain sees the request: it goes to the client as it is, not
		// through a JSON map and back.
		resp, err = a.o.Client.Chat(ctx, req, onDelta)
	}
	ended := a.o.Now()
	wait.end()
	if onDelta == nil && resp != nil {
		a.reasoning(resp.Reasoning) // not streamed: the whole reasoning before the answer
	}
	stream.end(resp, err)
	t.Streamed = stream.started && !stream.buffer
	if err != nil {
		t.partial = stream.text.String()
	}

	a.cur.Store(nil)
	if err != nil {
		if a.has(hooks.HookAPIRequestError) && ctx.Err() == nil {
			// The final failure (retries, if any, were reported as they happened).
			var apiErr *llm.APIError
			retryable := errors.As(err, &apiErr) && apiErr.Retryable
			retries := 0
			if retryable {
				retries = int(a.maxRetries.Load()) // all used up
			}
			a.fireAPIError(st, err, retries, int(a.maxRetries.Load()), retryable)
		}
		return nil, err
	}
	if a.has(hooks.HookPostAPIRequest) {
		p := maps.Clone(base)
		p["api_duration"] = ended.Sub(started).Seconds()
		p["started_at"] = float64(started.UnixNano()) / 1e9
		p["ended_at"] = float64(ended.UnixNano()) / 1e9
		p["finish_reason"] = resp.FinishReason
		p["message_count"] = len(req.Messages)
		p["response_model"] = resp.Model
		p["response"] = responseMap(resp)
		p["usage"] = map[string]any{"prompt_tokens": resp.Usage.PromptTokens, "completion_tokens": resp.Usage.CompletionTokens,
			"total_tokens": resp.Usage.TotalTokens}
		p["assistant_message"] = messagesAsMaps([]llm.Message{resp.Message})[0]
		p["assistant_content_chars"] = len(resp.Message.Content)
		p["assistant_tool_call_count"] = len(resp.Message.ToolCalls)
		a.fire(ctx, hooks.HookPostAPIRequest, p)
	}
	return resp, nil
}

// streamObserver fires on_stream_start/delta/end and echoes the text. Hook
// callbacks run off the token path: a slow observer never slows the stream; if
// it falls far behind, the oldest pieces are dropped, as upstream's bounded queues do.
type streamObserver struct {
	a       *Agent
	ctx     context.Context
	common  map[string]any
	started bool
	// buffer keeps the text off the screen: a transform_llm_output plugin (a
	// redactor) must see the answer before the user does, so it is shown whole,
	// transformed, when it is done, as without streaming.
	buffer bool
	wait   *modelWait // ended by the first piece shown
	text   strings.Builder
	queue  chan string
	done   chan struct{}
	// scrub drops <memory-context> spans a model echoes back from the screen.
	scrub *memctx.StreamScrubber
}

func newStreamObserver(a *Agent, ctx context.Context, s *Session, t *Turn, iter int) *streamObserver {
	o := &streamObserver{a: a, ctx: context.WithoutCancel(ctx), buffer: a.has(hooks.HookTransformLLMOutput), common: map[string]any{
		"turn_id": t.ID, "iteration": iter, "session_id": s.ID, "model": a.o.Model, "provider": a.o.Provider, "surface": a.o.Platform,
	}}
	if a.o.Memory != nil {
		o.scrub = &memctx.StreamScrubber{}
	}
	return o
}

func (o *streamObserver) delta(d llm.Delta) {
	if d.Reasoning != "" {
		// Reasoning is shown apart and never joins the answer's text. An
		// Output that does not show it keeps its wait spinner meanwhile.
		if _, ok := o.a.o.Output.(ReasoningOutput); ok {
			o.wait.end()
			o.a.reasoning(d.Reasoning)
		}
	}
	if d.Content == "" {
		return
	}
	if !o.started {
		o.started = true
		if o.a.has(hooks.HookOnStreamStart) {
			o.a.fire(o.ctx, hooks.HookOnStreamStart, maps.Clone(o.common))
		}
		if o.a.has(hooks.HookOnStreamDelta) {
			o.queue = make(chan string, 256)
			o.done = make(chan struct{})
			go o.deliver()
		}
	}
	o.text.WriteString(d.Content)
	if o.a.o.Output != nil && !o.buffer {
		o.wait.end()
		shown := d.Content
		if o.scrub != nil {
			shown = o.scrub.Write(shown)
		}
		if shown != "" {
			o.a.o.Output.Text(shown)
		}
	}
	if o.queue != nil {
		for {
			select {
			case o.queue <- d.Content:
				return
			default:
				select { // full: drop the oldest piece
				case <-o.queue:
				default:
				}
			}
		}
	}
}

func (o *streamObserver) deliver() {
	defer close(o.done)
	for piece := range o.queue {
		p := maps.Clone(o.common)
		p["delta"] = piece
		p["kind"] = "text"
		o.a.fire(o.ctx, hooks.HookOnStreamDelta, p)
	}
}

func (o *streamObserver) end(resp *llm.Response, err error) {
	if !o.started {
		return
	}
	if o.queue != nil {
		close(o.queue)
		<-o.done
	}
	if o.a.o.Output != nil && !o.buffer {
		if o.scrub != nil {
			if rest := o.scrub.Flush(); rest != "" {
				o.a.o.Output.Text(rest)
			}
		}
		o.a.o.Output.Text("\n")
	}
	if o.a.has(hooks.HookOnStreamEnd) {
		p := maps.Clone(o.common)
		p["final_text"] = o.text.String()
		p["finished"] = err == nil
		p["error"] = nil
		if err != nil {
			p["error"] = err.Error()
		}
		o.a.fire(o.ctx, hooks.HookOnStreamEnd, p)
	}
}

// chains reports which middleware chains have a member. Middleware that
// cannot tell is assumed to have both.
func (a *Agent) chains() (request, execution bool) {
	if a.o.Middleware == nil {
		return false, false
	}
	if p, ok := a.o.Middleware.(interface{ Active() (bool, bool) }); ok {
		return p.Active()
	}
	return true, true
}

// requestMap is the request as middleware and hooks see it: the wire body.
func requestMap(r llm.Request) map[string]any {
	var out map[string]any
	b, err := json.Marshal(wireRequest(r))
	if err == nil {
		_ = json.Unmarshal(b, &out)
	}
	return out
}

func wireRequest(r llm.Request) map[string]any {
	body := map[string]any{"model": r.Model, "messages": r.Messages}
	if len(r.Tools) > 0 {
		body["tools"] = r.Tools
	}
	if r.MaxTokens > 0 {
		body["max_tokens"] = r.MaxTokens
	}
	if r.Temperature != nil {
		body["temperature"] = *r.Temperature
	}
	if r.Stream {
		body["stream"] = true
	}
	return body
}

// applyRequestMap takes back what middleware may change: model, messages,
// tools, max_tokens, temperature.
func applyRequestMap(r *llm.Request, body map[string]any) {
	if body == nil {
		return
	}
	if v, ok := body["model"].(string); ok && v != "" {
		r.Model = v
	}
	if v, ok := body["messages"]; ok {
		var ms []llm.Message
		if b, err := json.Marshal(v); err == nil && json.Unmarshal(b, &ms) == nil {
			r.Messages = ms
		}
	}
	if v, ok := body["tools"]; ok {
		var specs []wireTool
		if b, err := json.Marshal(v); err == nil && json.Unmarshal(b, &specs) == nil {
			r.Tools = r.Tools[:0:0]
			for _, s := range specs {
				r.Tools = append(r.Tools, llm.ToolSpec{Name: s.Function.Name, Description: s.Function.Description, Parameters: s.Function.Parameters})
			}
		}
	}
	if v, ok := body["max_tokens"].(float64); ok {
		r.MaxTokens = int(v)
	}
	if v, ok := body["temperature"].(float64); ok {
		r.Temperature = &v
	}
}

type wireTool struct {
	Function struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		Parameters  map[string]any `json:"parameters"`
	} `json:"function"`
}

func responseMap(r *llm.Response) map[string]any {
	return map[string]any{"id": r.ID, "model": r.Model, "finish_reason": r.FinishReason,
		"message": messagesAsMaps([]llm.Message{r.Message})[0]}
}

// asResponse accepts what an llm_execution middleware returned: the response
// from next_call, or a body a middleware built itself.
func asResponse(v any) (*llm.Response, error) {
	switch r := v.(type) {
	case wireResponse:
		return r.r, nil
	case *llm.Response:
		return r, nil
	case map[string]any:
		resp := &llm.Response{}
		resp.ID, _ = r["id"].(string)
		resp.Model, _ = r["model"].(string)
		resp.FinishReason, _ = r["finish_reason"].(string)
		if m, ok := r["message"]; ok {
			b, _ := json.Marshal(m)
			if err := json.Unmarshal(b, &resp.Message); err != nil {
				return nil, fmt.Errorf("llm_execution middleware returned a malformed message: %w", err)
			}
		}
		resp.Message.Role = "assistant"
		return resp, nil
	}
	return nil, fmt.Errorf("llm_execution middleware returned %T, not a model response", v)
}

// wireResponse is a model response as middleware sees it through next_call: the
// chat-completions shape, not Go field names.
type wireResponse struct{ r *llm.Response }

func (w wireResponse) MarshalJSON() ([]byte, error) { return json.Marshal(responseMap(w.r)) }

func nilIfZero(n int) any {
	if n == 0 {
		return nil
	}
	return n
}

// attemptState is the model call in flight, for the retry observers.
type attemptState struct {
	ctx     context.Context
	base    map[string]any
	pre     map[string]any // the first attempt's pre_api_request payload
	request llm.Request    // as api_request_error reports it (made a map only then)
	started time.Time
	wait    *modelWait
}

// ObserveAttempts makes the client's own retries visible to plugins: every
// failed attempt that will be retried fires api_request_error, and every retry
// fires pre_api_request again with its retry_count. Call it on the Config
// before llm.New.
func (a *Agent) ObserveAttempts(cfg *llm.Config) {
	maxRetries := cfg.MaxRetries
	switch {
	case maxRetries == 0:
		maxRetries = llm.DefaultMaxRetries
	case maxRetries < 0:
		maxRetries = 0
	}
	a.maxRetries.Store(int32(maxRetries))
	cfg.OnAttempt = func(ctx context.Context, attempt int) {
		st := a.cur.Load()
		// Without the first attempt's payload (nobody listened when the request
		// started) a retry has only the base fields, not what the catalog promises.
		if attempt == 0 || st == nil || st.pre == nil || !a.has(hooks.HookPreAPIRequest) {
			return
		}
		p := maps.Clone(st.pre)
		p["retry_count"] = attempt
		p["started_at"] = float64(a.o.Now().UnixNano()) / 1e9
		a.fire(st.ctx, hooks.HookPreAPIRequest, p)
	}
	cfg.OnRetry = func(attempt int, err error, wait time.Duration) {
		st := a.cur.Load()
		if st == nil {
			return // a plugin's ctx.llm call, not the chat's
		}
		st.wait.retry(retryLine(err, attempt, maxRetries, wait))
		if a.has(hooks.HookAPIRequestError) {
			a.fireAPIError(st, err, attempt, maxRetries, true)
		}
	}
}

func (a *Agent) fireAPIError(st *attemptState, err error, retry, maxRetries int, retryable bool) {
	ended := a.o.Now()
	p := maps.Clone(st.base)
	var apiErr *llm.APIError
	var status any
	reason := "unknown"
	if errors.As(err, &apiErr) {
		if apiErr.Status != 0 {
			status = apiErr.Status
		}
		reason = apiErr.Reason
	} else if errors.Is(err, context.DeadlineExceeded) {
		reason = "timeout"
	}
	p["api_duration"] = ended.Sub(st.started).Seconds()
	p["started_at"] = float64(st.started.UnixNano()) / 1e9
	p["ended_at"] = float64(ended.UnixNano()) / 1e9
	p["status_code"] = status
	p["retry_count"] = retry
	p["max_retries"] = maxRetries
	p["retryable"] = retryable
	p["reason"] = reason
	p["error"] = err.Error()
	p["request"] = requestMap(st.request)
	a.fire(context.WithoutCancel(st.ctx), hooks.HookAPIRequestError, p)
}
