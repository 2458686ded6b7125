// Package llmtest is a loopback fake of the OpenAI chat-completions API for tests.
//
// A test queues the replies the "model" gives, in order, and afterwards reads every
// request the server received (what the model saw: messages, tools). Each reply is
// rendered for the request that takes it: as one JSON document, or as SSE chunks when
// the request streams. Failure modes (rate limits, 5xx, malformed JSON, HTML, hangs,
// stalled streams) are replies too.
//
//	srv := llmtest.NewServer(t)
//	srv.Enqueue(llmtest.ToolCalls(llmtest.Call("read_file", map[string]any{"path": "a.txt"})),
//		llmtest.Text("done"))
//	client, _ := llm.New(llm.Config{BaseURL: srv.URL, Model: "fake"})
//	...
//	srv.Requests()[1].Messages // the tool result the model was sent
//
// The same server runs outside `go test` from a script file (ReadScript, the fakellm
// command in cmd/fakellm, and the testscript command in internal/cli).
package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/hermes-go/hermes/internal/clock"
	"github.com/hermes-go/hermes/internal/llm"
)

// Reply is one scripted answer. With none of the failure fields set it is a model
// answer: Content and/or ToolCalls.
type Reply struct {
	Content   string      `json:"content,omitempty"`
	ToolCalls []CallReply `json:"tool_calls,omitempty"`
	Reasoning string      `json:"reasoning,omitempty"`
	// ReasoningField is the field Reasoning is sent in: "reasoning_content"
	// (the default, DeepSeek's) or "reasoning" (OpenRouter's).
	ReasoningField string     `json:"reasoning_field,omitempty"`
	FinishReason   string     `json:"finish_reason,omitempty"` // default "stop", or "tool_calls"
	Usage          *llm.Usage `json:"usage,omitempty"`         // default: estimated from the sizes
	ChunkSize      int        `json:"chunk_size,omitempty"`    // characters per streamed piece (default 8)
	Model          string     `json:"model,omitempty"`         // default: the requested model

	// Failure modes.
	Status      int               `json:"status,omitempty"`       // an HTTP error status (429, 500, 401, ...)
	Error       string            `json:"error,omitempty"`        // its message, in {"error":{"message":...}}
	RetryAfter  string            `json:"retry_after,omitempty"`  // Retry-After header value
	Headers     map[string]string `json:"headers,omitempty"`      // extra response headers
	Raw         string            `json:"raw,omitempty"`          // a body sent verbatim (malformed JSON, HTML)
	ContentType string            `json:"content_type,omitempty"` // for Raw (default application/json)
	SSE         []string          `json:"sse,omitempty"`          // stream these data payloads verbatim (add "[DONE]" yourself)
	Hang        bool              `json:"hang,omitempty"`         // never answer; the client must give up
	StallAfter  int               `json:"stall_after,omitempty"`  // stream this many chunks, then go silent
	Delay       Duration          `json:"delay,omitempty"`        // wait before answering
	// Repeat serves this reply this many times in a row (0 and 1 mean once).
	Repeat int `json:"repeat,omitempty"`
}

// CallReply is one tool call in a Reply.
type CallReply struct {
	ID   string `json:"id,omitempty"` // default call_<n>
	Name string `json:"name"`
	// Arguments is marshalled to JSON, except a string, which is sent verbatim (so a
	// test can send malformed JSON).
	Arguments any `json:"arguments,omitempty"`
}

// Duration reads "250ms"/"2s" or a number of seconds.
type Duration time.Duration

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("bad duration %q (want e.g. 250ms): %w", s, err)
		}
		*d = Duration(v)
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("duration must be a string like \"250ms\" or seconds: %w", err)
	}
	*d = Duration(f * float64(time.Second))
	return nil
}

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// Text is a plain answer.
func Text(s string) Reply { return Reply{Content: s} }

// ToolCalls is an answer that calls tools (several make a parallel call).
func ToolCalls(calls ...CallReply) Reply { return Reply{ToolCalls: calls} }

// Call is one tool call with arguments marshalled to JSON (a string is sent as is).
func Call(name string, args any) CallReply { return CallReply{Name: name, Arguments: args} }

// Status is an HTTP error with a message.
func Status(code int, msg string) Reply { return Reply{Status: code, Error: msg} }

// RateLimited is a 429 with Retry-After.
func RateLimited(retryAfter string) Reply {
	return Reply{Status: http.StatusTooManyRequests, Error: "rate limited", RetryAfter: retryAfter}
}

// Malformed is a 200 whose body is not JSON.
func Malformed() Reply { return Reply{Raw: `{"id": "x", "choices": [`} }

// HTML is a 200 HTML page (a proxy's login page, a wrong base URL).
func HTML() Reply {
	return Reply{Raw: "<!DOCTYPE html><html><head><title>Sign in</title></head><body>login</body></html>", ContentType: "text/html"}
}

// Hang never answers.
func Hang() Reply { return Reply{Hang: true} }

// Script is a scripted conversation read from a file.
type Script struct {
	Replies []Reply `json:"replies"`
}

// ReadScript reads a script file, JSON or YAML: {"replies": [...]} or a bare list.
func ReadScript(path string) ([]Reply, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("fake llm script: %w", err)
	}
	// Decoded, then encoded as JSON: the YAML library's own YAMLToJSON writes
	// control characters in strings as \x escapes, which JSON does not have.
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("fake llm script %s: %w", path, err)
	}
	js, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("fake llm script %s: %w", path, err)
	}
	js = bytes.TrimSpace(js)
	var replies []Reply
	if len(js) > 0 && js[0] == '[' {
		err = json.Unmarshal(js, &replies)
	} else {
		var s Script
		err = json.Unmarshal(js, &s)
		replies = s.Replies
	}
	if err != nil {
		return nil, fmt.Errorf("fake llm script %s: %w", path, err)
	}
	return replies, nil
}

// Request is one request the server received.
type Request struct {
	Path     string          `json:"path"`
	Header   http.Header     `json:"-"`
	Model    string          `json:"model"`
	Messages []llm.Message   `json:"messages"`
	Tools    []llm.ToolSpec  `json:"tools,omitempty"`
	Stream   bool            `json:"stream,omitempty"`
	Body     json.RawMessage `json:"body"` // the whole request body
	Fields   map[string]any  `json:"-"`    // the body decoded generically
	// Received is when the request arrived; Took how long the fake took to
	// answer it (zero while it has not): the model's own time, which a
	// benchmark subtracts from a turn's latency.
	Received time.Time     `json:"-"`
	Took     time.Duration `json:"-"`
}

// Server is the fake. Its URL is the base URL to configure (it ends in /v1).
type Server struct {
	URL string

	srv      *httptest.Server
	done     chan struct{}
	closeMu  sync.Once
	mu       sync.Mutex
	replies  []Reply
	requests []Request
	record   io.Writer
	lean     bool
}

// NewServer starts a fake on a loopback port, closed when t ends.
func NewServer(t testing.TB) *Server {
	s := Start()
	t.Cleanup(s.Close)
	return s
}

// Start starts a fake outside a test; Close it when done.
func Start() *Server {
	s := &Server{done: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.handle))
	s.URL = s.srv.URL + "/v1"
	return s
}

// RecordTo also writes every request body received to w, one JSON line each.
func (s *Server) RecordTo(w io.Writer) {
	s.mu.Lock()
	s.record = w
	s.mu.Unlock()
}

// Lean keeps of each request only its path, model and timing, not its
// headers, body, messages or generic decoding, and does not decode (or check)
// the messages and tools: a real model server does that on its own machine;
// this one shares the benchmark's cores with what is measured.
func (s *Server) Lean() {
	s.mu.Lock()
	s.lean = true
	s.mu.Unlock()
}

// Close releases hanging handlers and stops the server.
func (s *Server) Close() {
	s.closeMu.Do(func() {
		close(s.done)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

// Enqueue adds replies to the end of the queue.
func (s *Server) Enqueue(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range replies {
		n := max(r.Repeat, 1)
		r.Repeat = 0
		for range n {
			s.replies = append(s.replies, r)
		}
	}
}

// Pending is how many queued replies no request has taken yet.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.replies)
}

// Requests returns every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// LastRequest is the most recent request; it fails t when there is none.
func (s *Server) LastRequest(t testing.TB) Request {
	t.Helper()
	reqs := s.Requests()
	if len(reqs) == 0 {
		t.Fatal("llmtest: no request received")
	}
	return reqs[len(reqs)-1]
}

// Models are what GET /v1/models lists (an OpenAI-style {"data": [{"id"}]}).
var Models = []string{"fake-model", "fake-model-mini"}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models") {
		// Model listing is not a chat request: not recorded, no reply used.
		data := make([]map[string]string, len(Models))
		for i, m := range Models {
			data[i] = map[string]string{"id": m, "object": "model"}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
		return
	}
	received := clock.Now()
	s.mu.Lock()
	lean := s.lean
	s.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	rec := Request{Path: r.URL.Path, Received: received}
	if !lean {
		rec.Header, rec.Body = r.Header.Clone(), json.RawMessage(body)
	}
	var parsed struct {
		Model    string         `json:"model"`
		Messages []llm.Message  `json:"messages"`
		Tools    []llm.ToolSpec `json:"tools"`
		Stream   bool           `json:"stream"`
	}
	var parseErr error
	if lean { // neither kept nor checked: the messages and tools are not decoded
		var head struct {
			Model  string `json:"model"`
			Stream bool   `json:"stream"`
		}
		parseErr = json.Unmarshal(body, &head)
		parsed.Model, parsed.Stream = head.Model, head.Stream
	} else {
		parseErr = json.Unmarshal(body, &parsed)
	}
	if !lean {
		_ = json.Unmarshal(body, &rec.Fields)
	}
	rec.Model, rec.Stream = parsed.Model, parsed.Stream
	if !lean {
		rec.Messages, rec.Tools = parsed.Messages, parsed.Tools
	}

	s.mu.Lock()
	at := len(s.requests)
	s.requests = append(s.requests, rec)
	defer func() {
		s.mu.Lock()
		s.requests[at].Took = clock.Now().Sub(received)
		s.mu.Unlock()
	}()
	if s.record != nil {
		var line bytes.Buffer
		if json.Compact(&line, body) != nil {
			line.Reset()
			line.Write(body)
		}
		line.WriteByte('\n')
		_, _ = s.record.Write(line.Bytes())
	}
	var reply Reply
	invalid := ""
	if parseErr == nil {
		invalid = invalidHistory(parsed.Messages)
	}
	have := len(s.replies) > 0
	if have && invalid == "" {
		reply = s.replies[0]
		s.replies = s.replies[1:]
	}
	s.mu.Unlock()

	switch {
	case invalid != "":
		// As real endpoints do, before any model runs: the scripted reply stays queued.
		writeError(w, http.StatusBadRequest, "fake llm: invalid messages: "+invalid, nil)
		return
	case r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions"):
		writeError(w, http.StatusNotFound, fmt.Sprintf("fake llm: no route %s %s (want POST /v1/chat/completions)", r.Method, r.URL.Path), nil)
		return
	case parseErr != nil:
		writeError(w, http.StatusBadRequest, "fake llm: the request body is not JSON: "+parseErr.Error(), nil)
		return
	case !have:
		writeError(w, http.StatusInternalServerError, "fake llm: no scripted reply left for this request", nil)
		return
	}
	if reply.Delay > 0 && !s.wait(r, time.Duration(reply.Delay)) {
		return
	}
	for k, v := range reply.Headers {
		w.Header().Set(k, v)
	}
	switch {
	case reply.Hang:
		s.wait(r, -1)
	case reply.Status != 0 && (reply.Status < 200 || reply.Status > 299):
		h := map[string]string{}
		if reply.RetryAfter != "" {
			h["Retry-After"] = reply.RetryAfter
		}
		if reply.Raw != "" {
			writeRaw(w, reply.Status, reply.ContentType, reply.Raw, h)
			return
		}
		msg := reply.Error
		if msg == "" {
			msg = http.StatusText(reply.Status)
		}
		writeError(w, reply.Status, msg, h)
	case reply.Raw != "":
		writeRaw(w, http.StatusOK, reply.ContentType, reply.Raw, nil)
	case len(reply.SSE) > 0:
		s.streamRaw(w, r, reply)
	case parsed.Stream:
		s.stream(w, r, reply, rec)
	default:
		writeJSON(w, http.StatusOK, completion(reply, rec))
	}
}

// invalidHistory checks what OpenAI-compatible endpoints refuse with a 400: an
// assistant message's tool calls must each be answered by a tool message right
// after it, and a tool message must answer such a call. "" when valid.
func invalidHistory(msgs []llm.Message) string {
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		if m.Role == llm.RoleTool {
			return fmt.Sprintf("message %d has role tool (tool_call_id %q) but answers no tool call of the assistant message before it", i, m.ToolCallID)
		}
		if m.Role != llm.RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		open := map[string]bool{}
		for _, c := range m.ToolCalls {
			open[c.ID] = true
		}
		j := i + 1
		for ; j < len(msgs) && msgs[j].Role == llm.RoleTool; j++ {
			if !open[msgs[j].ToolCallID] {
				return fmt.Sprintf("message %d answers tool_call_id %q, which the assistant message %d did not ask for (or already got an answer)", j, msgs[j].ToolCallID, i)
			}
			delete(open, msgs[j].ToolCallID)
		}
		for _, c := range m.ToolCalls {
			if open[c.ID] {
				return fmt.Sprintf("the assistant message %d has tool_calls, and tool_call_id %q has no tool message answering it", i, c.ID)
			}
		}
		i = j - 1
	}
	return ""
}

// wait blocks for d (forever when d < 0) unless the client goes away or the server
// closes; it reports whether d passed.
func (s *Server) wait(r *http.Request, d time.Duration) bool {
	var tc <-chan time.Time
	if d >= 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		tc = t.C
	}
	select {
	case <-tc:
		return true
	case <-r.Context().Done():
	case <-s.done:
	}
	return false
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string, headers map[string]string) {
	for k, v := range headers {
		w.Header().Set(k, v)
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": "fake_error", "code": status}})
}

func writeRaw(w http.ResponseWriter, status int, contentType, body string, headers map[string]string) {
	for k, v := range headers {
		w.Header().Set(k, v)
	}
	if contentType == "" {
		contentType = "application/json"
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func argsJSON(a any) string {
	switch v := a.(type) {
	case nil:
		return "{}"
	case string:
		return v
	case json.RawMessage:
		return string(v)
	}
	b, err := json.Marshal(a)
	if err != nil {
		return fmt.Sprintf("%q", fmt.Sprint(a))
	}
	return string(b)
}

func callID(c CallReply, i int) string {
	if c.ID != "" {
		return c.ID
	}
	return "call_" + strconv.Itoa(i)
}

func finishReason(r Reply) string {
	if r.FinishReason != "" {
		return r.FinishReason
	}
	if len(r.ToolCalls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

func usage(r Reply, rec Request) llm.Usage {
	if r.Usage != nil {
		return *r.Usage
	}
	p := len(rec.Body)/4 + 1
	c := len(r.Content) / 4
	for _, tc := range r.ToolCalls {
		c += (len(tc.Name) + len(argsJSON(tc.Arguments))) / 4
	}
	c++
	return llm.Usage{PromptTokens: p, CompletionTokens: c, TotalTokens: p + c}
}

func modelOf(r Reply, rec Request) string {
	if r.Model != "" {
		return r.Model
	}
	return rec.Model
}

func completion(r Reply, rec Request) map[string]any {
	msg := map[string]any{"role": "assistant", "content": r.Content}
	if len(r.ToolCalls) > 0 {
		calls := make([]map[string]any, len(r.ToolCalls))
		for i, c := range r.ToolCalls {
			calls[i] = map[string]any{"id": callID(c, i), "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": argsJSON(c.Arguments)}}
		}
		msg["tool_calls"] = calls
		if r.Content == "" {
			msg["content"] = nil
		}
	}
	if r.Reasoning != "" {
		msg[reasoningField(r)] = r.Reasoning
	}
	return map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": modelOf(r, rec),
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finishReason(r)}},
		"usage":   usage(r, rec),
	}
}

// chunks renders a reply as the data payloads of a stream, [DONE] included.
func chunks(r Reply, rec Request) []string {
	size := r.ChunkSize
	if size <= 0 {
		size = 8
	}
	model := modelOf(r, rec)
	var out []string
	add := func(delta map[string]any, finish any) {
		b, _ := json.Marshal(map[string]any{
			"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		})
		out = append(out, string(b))
	}
	add(map[string]any{"role": "assistant", "content": ""}, nil)
	for _, p := range pieces(r.Reasoning, size) {
		add(map[string]any{reasoningField(r): p}, nil)
	}
	for _, p := range pieces(r.Content, size) {
		add(map[string]any{"content": p}, nil)
	}
	for i, c := range r.ToolCalls {
		add(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": callID(c, i), "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil)
		for _, p := range pieces(argsJSON(c.Arguments), size) {
			add(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": p}}}}, nil)
		}
	}
	add(map[string]any{}, finishReason(r))
	// As OpenAI does: a stream carries usage only when the request asked for it.
	if opts, _ := rec.Fields["stream_options"].(map[string]any); opts["include_usage"] == true {
		u, _ := json.Marshal(map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0,
			"model": model, "choices": []any{}, "usage": usage(r, rec)})
		out = append(out, string(u))
	}
	return append(out, "[DONE]")
}

// pieces cuts s into pieces of n runes.
func pieces(s string, n int) []string {
	var out []string
	rs := []rune(s)
	for len(rs) > 0 {
		k := min(n, len(rs))
		out = append(out, string(rs[:k]))
		rs = rs[k:]
	}
	return out
}

func (s *Server) stream(w http.ResponseWriter, r *http.Request, reply Reply, rec Request) {
	s.writeSSE(w, r, chunks(reply, rec), reply.StallAfter)
}

func (s *Server) streamRaw(w http.ResponseWriter, r *http.Request, reply Reply) {
	s.writeSSE(w, r, reply.SSE, reply.StallAfter)
}

func (s *Server) writeSSE(w http.ResponseWriter, r *http.Request, payloads []string, stallAfter int) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	for i, p := range payloads {
		if stallAfter > 0 && i == stallAfter {
			if fl != nil {
				fl.Flush()
			}
			s.wait(r, -1)
			return
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", p); err != nil {
			return
		}
		if fl != nil {
			fl.Flush()
		}
	}
}

func reasoningField(r Reply) string {
	if r.ReasoningField != "" {
		return r.ReasoningField
	}
	return "reasoning_content"
}
