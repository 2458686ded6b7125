package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// errIdle is the cancel cause when a stream goes quiet for longer than IdleTimeout;
// errNoAnswer when it has not started within RequestTimeout.
var (
	errIdle     = errors.New("stream idle timeout")
	errNoAnswer = errors.New("no answer")
)

type chunkToolCall struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type chunk struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Delta struct {
			Content          json.RawMessage `json:"content"`
			Reasoning        string          `json:"reasoning"`
			ReasoningContent string          `json:"reasoning_content"`
			ToolCalls        []chunkToolCall `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *Usage          `json:"usage"`
	Error json.RawMessage `json:"error"`
}

type toolAcc struct {
	id, typ, name string
	args          strings.Builder
}

// assembler builds the final Response out of stream chunks.
type assembler struct {
	resp      Response
	content   strings.Builder
	reasoning strings.Builder
	calls     []*toolAcc
	byIndex   map[int]int // wire index → position in calls
	finished  bool
}

// slot finds the accumulator a tool-call fragment belongs to. The index is the rule;
// without one (some servers omit it) a new id starts a new call. A server that
// numbers every parallel call 0 but gives each its own id gets one slot per id.
func (a *assembler) slot(tc chunkToolCall) int {
	if a.byIndex == nil {
		a.byIndex = map[int]int{}
	}
	if tc.Index != nil {
		if pos, ok := a.byIndex[*tc.Index]; ok {
			cur := a.calls[pos]
			if tc.ID == "" || cur.id == "" || tc.ID == cur.id {
				return pos
			}
		}
		a.calls = append(a.calls, &toolAcc{})
		a.byIndex[*tc.Index] = len(a.calls) - 1
		return len(a.calls) - 1
	}
	if n := len(a.calls); n > 0 && (tc.ID == "" || tc.ID == a.calls[n-1].id) {
		return n - 1
	}
	a.calls = append(a.calls, &toolAcc{})
	return len(a.calls) - 1
}

// add applies one chunk, calling emit for every piece worth showing.
func (a *assembler) add(ch *chunk, emit func(Delta)) error {
	if ch.ID != "" {
		a.resp.ID = ch.ID
	}
	if ch.Model != "" {
		a.resp.Model = ch.Model
	}
	if ch.Usage != nil {
		a.resp.Usage = *ch.Usage
	}
	if len(ch.Choices) == 0 {
		return nil
	}
	c := ch.Choices[0]
	text, err := contentText(c.Delta.Content)
	if err != nil {
		return err
	}
	if text != "" {
		a.content.WriteString(text)
		emit(Delta{Content: text})
	}
	r := c.Delta.ReasoningContent
	if r == "" {
		// A server that sends both names sends the same text twice.
		r = c.Delta.Reasoning
	}
	if r != "" {
		a.reasoning.WriteString(r)
		emit(Delta{Reasoning: r})
	}
	for _, tc := range c.Delta.ToolCalls {
		pos := a.slot(tc)
		acc := a.calls[pos]
		if tc.ID != "" {
			acc.id = tc.ID
		}
		if tc.Type != "" {
			acc.typ = tc.Type
		}
		name := tc.Function.Name
		if name != "" {
			// Most servers send the name once; a few repeat it whole on every fragment.
			if acc.name != name {
				acc.name += name
			} else {
				name = ""
			}
		}
		acc.args.WriteString(tc.Function.Arguments)
		if name != "" || tc.Function.Arguments != "" {
			emit(Delta{ToolCallIndex: pos, ToolCallName: name, ToolCallArgs: tc.Function.Arguments})
		}
	}
	if c.FinishReason != nil && *c.FinishReason != "" {
		a.resp.FinishReason = *c.FinishReason
		a.finished = true
	}
	return nil
}

func (a *assembler) result() *Response {
	r := a.resp
	r.Message = Message{Role: RoleAssistant, Content: a.content.String()}
	for _, acc := range a.calls {
		r.Message.ToolCalls = append(r.Message.ToolCalls, ToolCall{ID: acc.id, Type: acc.typ,
			Function: FunctionCall{Name: acc.name, Arguments: acc.args.String()}})
	}
	normalizeToolCalls(r.Message.ToolCalls)
	r.Reasoning = a.reasoning.String()
	if r.FinishReason == "" {
		r.FinishReason = defaultFinish(r.Message)
	}
	return &r
}

// streamOnce makes one streaming attempt. emitted reports whether any delta reached
// the caller: after that a retry would show the user the same text twice, so the
// error is returned instead.
func (c *client) streamOnce(ctx context.Context, body []byte, onDelta func(Delta)) (resp *Response, emitted bool, err error) {
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	idle, first := c.cfg.IdleTimeout, c.cfg.RequestTimeout
	// Until the first line the model has RequestTimeout to answer; after it, each
	// line resets the idle timer.
	timer := time.AfterFunc(first, func() { cancel(errNoAnswer) })
	defer timer.Stop()
	answered := false
	alive := func() {
		if !answered {
			answered = true
			timer.Stop()
			timer = time.AfterFunc(idle, func() { cancel(errIdle) })
			return
		}
		timer.Reset(idle)
	}

	emit := func(d Delta) {
		emitted = true
		onDelta(d)
	}
	fail := func(err error, what string) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		switch context.Cause(actx) {
		case errIdle:
			return &APIError{Endpoint: c.endpoint, Reason: ReasonStalled, Retryable: !emitted, Err: err, After: idle,
				Message: fmt.Sprintf("the stream stalled: no data for %s (model.stream_idle_timeout)", idle)}
		case errNoAnswer:
			return &APIError{Endpoint: c.endpoint, Reason: ReasonTimeout, Retryable: true, Err: err, After: first,
				Message: fmt.Sprintf("the model did not answer within %s (model.request_timeout)", first)}
		}
		e := c.transportError(err, what)
		e.Retryable = !emitted
		return e
	}

	req, err := c.newRequest(actx, body, true)
	if err != nil {
		return nil, false, err
	}
	hr, err := c.http.Do(req)
	if err != nil {
		return nil, false, fail(err, "no response")
	}
	defer hr.Body.Close()

	if hr.StatusCode < 200 || hr.StatusCode > 299 {
		data, rerr := io.ReadAll(io.LimitReader(hr.Body, maxErrorBody*4))
		if rerr != nil && len(data) == 0 {
			return nil, false, fail(rerr, "reading the error response")
		}
		return nil, false, errorFromHTTP(c.endpoint, hr, data)
	}
	ct := strings.ToLower(hr.Header.Get("Content-Type"))
	if !strings.Contains(ct, "event-stream") {
		// A server that ignores "stream": true answers with one JSON document (or
		// something that is not chat completions at all).
		data, rerr := io.ReadAll(io.LimitReader(hr.Body, maxResponseBody))
		if rerr != nil {
			return nil, false, fail(rerr, "reading the response")
		}
		if looksHTML(ct, data) || (len(bytes.TrimSpace(data)) > 0 && bytes.TrimSpace(data)[0] == '{') {
			r, derr := c.decodeResponse(hr, data)
			if derr != nil {
				return nil, false, derr
			}
			replay(r, emit)
			return r, emitted, nil
		}
		// Not JSON: maybe SSE with a wrong content type; parse it as such.
		hr.Body = io.NopCloser(bytes.NewReader(data))
	}

	var asm assembler
	br := bufio.NewReaderSize(hr.Body, 64<<10)
	var data bytes.Buffer // the data: lines of the current event
	dispatch := func() (done bool, err error) {
		if data.Len() == 0 {
			return false, nil
		}
		payload := bytes.TrimSpace(data.Bytes())
		defer data.Reset()
		if string(payload) == "[DONE]" {
			return true, nil
		}
		var ch chunk
		if err := json.Unmarshal(payload, &ch); err != nil {
			e := c.malformed(payload, "a stream chunk is not valid JSON: %v", err)
			e.Retryable, e.Err = !emitted, err
			if looksHTML("", payload) {
				e.Reason, e.Retryable, e.Message = ReasonHTML, false, "the server streamed an HTML page instead of JSON"
			}
			return false, e
		}
		if len(ch.Error) > 0 && string(ch.Error) != "null" {
			e := providerError(c.endpoint, ch.Error, payload)
			e.Retryable = e.Retryable && !emitted
			return false, e
		}
		if err := asm.add(&ch, emit); err != nil {
			e := c.malformed(payload, "a stream chunk has an unreadable content: %v", err)
			e.Retryable = !emitted
			return false, e
		}
		return false, nil
	}
	for {
		line, rerr := readLine(br, maxResponseBody)
		if rerr == nil || (rerr == io.EOF && len(line) > 0) {
			alive()
			trimmed := bytes.TrimRight(line, "\r\n")
			switch {
			case len(trimmed) == 0:
				if done, err := dispatch(); err != nil || done {
					return finish(&asm, emitted, err)
				}
			case trimmed[0] == ':':
				// An SSE comment: keep-alive (OpenRouter sends ": OPENROUTER PROCESSING").
			case bytes.HasPrefix(trimmed, []byte("data:")):
				if data.Len() > 0 {
					data.WriteByte('\n')
				}
				data.Write(bytes.TrimPrefix(bytes.TrimPrefix(trimmed, []byte("data:")), []byte(" ")))
			case looksHTML("", trimmed):
				return nil, emitted, &APIError{Status: hr.StatusCode, Endpoint: c.endpoint, Reason: ReasonHTML,
					Message: "the server streamed an HTML page instead of JSON"}
			default:
				// event:, id:, retry: and unknown fields carry nothing for chat completions.
			}
		}
		if rerr == io.EOF {
			if done, err := dispatch(); err != nil || done {
				return finish(&asm, emitted, err)
			}
			if asm.finished {
				return asm.result(), emitted, nil
			}
			return nil, emitted, &APIError{Endpoint: c.endpoint, Reason: ReasonIncomplete, Retryable: !emitted,
				Message: "the stream ended before the model finished (no finish_reason and no [DONE])"}
		}
		if rerr != nil {
			if errors.Is(rerr, errLineTooLong) {
				return nil, emitted, c.malformed(nil, "a stream line is longer than %d bytes", maxResponseBody)
			}
			return nil, emitted, fail(rerr, "reading the stream")
		}
	}
}

func finish(asm *assembler, emitted bool, err error) (*Response, bool, error) {
	if err != nil {
		return nil, emitted, err
	}
	return asm.result(), emitted, nil
}

// replay shows a non-streamed answer to a stream consumer as if it had streamed.
func replay(r *Response, emit func(Delta)) {
	if r.Reasoning != "" {
		emit(Delta{Reasoning: r.Reasoning})
	}
	if r.Message.Content != "" {
		emit(Delta{Content: r.Message.Content})
	}
	for i, tc := range r.Message.ToolCalls {
		emit(Delta{ToolCallIndex: i, ToolCallName: tc.Function.Name, ToolCallArgs: tc.Function.Arguments})
	}
}

var errLineTooLong = errors.New("line too long")

// readLine reads one line including its newline, at most limit bytes.
func readLine(br *bufio.Reader, limit int) ([]byte, error) {
	var out []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(out)+len(frag) > limit {
			return nil, errLineTooLong
		}
		if err == bufio.ErrBufferFull {
			out = append(out, frag...)
			continue
		}
		if out == nil {
			return frag, err
		}
		return append(out, frag...), err
	}
}
