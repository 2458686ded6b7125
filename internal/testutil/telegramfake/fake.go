// Package telegramfake is a loopback Telegram Bot API server for tests: the
// real wire protocol (POST /bot<token>/<method>, form, multipart or JSON
// parameters, {"ok":…,"result"|"error_code","description","parameters"}
// answers), so the gateway's Telegram adapter and the library under it are
// exercised as against api.telegram.org.
//
// A test pushes updates (PushText, PushUpdate), reads what the bot called
// (Calls, WaitCalls) and injects failures (Fail: 429 with retry_after, 409
// from another poller, 400s).
package telegramfake

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf16"
)

// BotID and BotUsername are what getMe answers.
const (
	BotID       = 7000000001
	BotUsername = "hermes_fake_bot"
)

// Call is one Bot API call the bot made (getUpdates is not recorded).
type Call struct {
	Method string            `json:"method"`
	Params map[string]string `json:"params"`
	// Status is the HTTP status answered (200, or an injected failure's).
	Status int `json:"status"`
	// MessageID is the id of the message a successful sendMessage created.
	MessageID int       `json:"message_id,omitempty"`
	At        time.Time `json:"-"`
}

// Failure is an injected error answer.
type Failure struct {
	Code        int
	Description string
	RetryAfter  int // seconds, for 429
}

// Server is a running fake.
type Server struct {
	URL   string // the base URL: the bot calls URL/bot<Token>/<method>
	Token string

	srv *httptest.Server

	mu      sync.Mutex
	updates []json.RawMessage // queued, not yet confirmed by an offset
	ids     []int64           // their update_ids
	nextID  int64
	nextMsg int
	calls   []Call
	fails   map[string][]Failure
	wake    chan struct{} // closed and replaced when an update or call arrives
	polls   int
	// polling is how many getUpdates are waiting now, maxPolling the most
	// at once: Telegram itself answers a second poller 409 Conflict.
	polling, maxPolling int
	webhook             string
	secret              string
	hooked              chan json.RawMessage // updates to POST to the webhook, in order
	closed              bool
	posts               []int
	maxQueue            int
	// okCalls counts each method's successful calls, so WaitCalls need not
	// rescan every call at each wake-up (a benchmark makes thousands).
	okCalls map[string]int
	// delivered is when each update first went out in a getUpdates answer:
	// its arrival at the bot, for latency measurements.
	delivered map[int64]time.Time
}

// Start runs a fake for token on a loopback port.
func Start(token string) *Server {
	s := &Server{Token: token, nextID: 100, nextMsg: 1, fails: map[string][]Failure{}, wake: make(chan struct{}), maxQueue: 100_000,
		okCalls: map[string]int{}, delivered: map[int64]time.Time{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close stops the server, ending every long poll.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	s.signal()
	s.mu.Unlock()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// record appends a call; s.mu held.
func (s *Server) record(c Call) {
	s.calls = append(s.calls, c)
	if c.Status == http.StatusOK {
		s.okCalls[c.Method]++
	}
	s.signal()
}

// DeliveredAt is when update id first went out in a getUpdates answer
// (false while it has not).
func (s *Server) DeliveredAt(id int64) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.delivered[id]
	return t, ok
}

// signal wakes every waiter; s.mu held.
func (s *Server) signal() {
	close(s.wake)
	s.wake = make(chan struct{})
}

// PushUpdate queues a raw update; update_id is set when it has none. It
// returns the update_id.
func (s *Server) PushUpdate(u map[string]any) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := u["update_id"].(int64)
	if !ok {
		s.nextID++
		id = s.nextID
		u["update_id"] = id
	}
	b, _ := json.Marshal(u)
	if s.webhook != "" {
		s.hooked <- b
		return id
	}
	s.updates = append(s.updates, b)
	s.ids = append(s.ids, id)
	s.signal()
	return id
}

// WebhookPosts are the answers the webhook gave, by HTTP status, in order.
func (s *Server) WebhookPosts() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.posts...)
}

// deliver POSTs webhook updates one at a time, in order, with the secret,
// as Telegram does.
func (s *Server) deliver() {
	client := &http.Client{Timeout: 10 * time.Second}
	for u := range s.hooked {
		s.mu.Lock()
		target, secret := s.webhook, s.secret
		s.mu.Unlock()
		req, err := http.NewRequest(http.MethodPost, target, bytes.NewReader(u))
		if err != nil {
			continue
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
		status := 0
		if resp, err := client.Do(req); err == nil {
			status = resp.StatusCode
			resp.Body.Close()
		}
		s.mu.Lock()
		s.posts = append(s.posts, status)
		s.signal()
		s.mu.Unlock()
	}
}

// PushRaw queues an update exactly as given (malformed or huge updates); id
// is its update_id as the poller's offset sees it.
func (s *Server) PushRaw(id int64, raw string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.updates = append(s.updates, json.RawMessage(raw))
	s.ids = append(s.ids, id)
	s.nextID = max(s.nextID, id) // update ids only grow: later pushes follow this one
	s.signal()
}

// Message is an incoming text message as PushText builds it.
type Message struct {
	ChatID   int64
	ChatType string // "private" (default), "group", "supergroup", "channel"
	UserID   int64
	UserName string
	Text     string
	ThreadID int
}

// PushText queues a message update and returns its update_id.
func (s *Server) PushText(m Message) int64 {
	if m.ChatType == "" {
		m.ChatType = "private"
	}
	if m.UserName == "" {
		m.UserName = "user" + strconv.FormatInt(m.UserID, 10)
	}
	s.mu.Lock()
	s.nextMsg++
	mid := s.nextMsg
	s.mu.Unlock()
	msg := map[string]any{
		"message_id": mid, "date": time.Now().Unix(), "text": m.Text,
		"from": map[string]any{"id": m.UserID, "is_bot": false, "first_name": m.UserName, "username": m.UserName},
		"chat": map[string]any{"id": m.ChatID, "type": m.ChatType},
	}
	if m.ChatType == "private" {
		msg["chat"].(map[string]any)["first_name"] = m.UserName
	} else {
		msg["chat"].(map[string]any)["title"] = "group " + strconv.FormatInt(m.ChatID, 10)
	}
	if m.ThreadID != 0 {
		msg["message_thread_id"] = m.ThreadID
		msg["is_topic_message"] = true
	}
	return s.PushUpdate(map[string]any{"message": msg})
}

// PushCallback queues a callback_query (an inline button pressed) on message
// messageID of chatID and returns its update_id.
func (s *Server) PushCallback(chatID, userID int64, messageID int, data string) int64 {
	return s.PushUpdate(map[string]any{"callback_query": map[string]any{
		"id": "cb" + strconv.Itoa(messageID) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36), "data": data, "chat_instance": "1",
		"from":    map[string]any{"id": userID, "is_bot": false, "first_name": "u"},
		"message": map[string]any{"message_id": messageID, "date": time.Now().Unix(), "chat": map[string]any{"id": chatID, "type": "private"}},
	}})
}

// Fail makes the next n calls of method answer f.
func (s *Server) Fail(method string, n int, f Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.fails[method] = append(s.fails[method], f)
	}
}

// Calls returns the calls of method ("" for all) so far.
func (s *Server) Calls(method string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if method == "" || c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// Pollers is how many getUpdates calls are waiting now and the most that
// ever waited at once (one bot should never poll twice at a time).
func (s *Server) Pollers() (now, most int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.polling, s.maxPolling
}

// Polls is how many getUpdates calls were answered.
func (s *Server) Polls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.polls
}

// WaitCalls waits until method was called (successfully) at least n times
// and returns those calls, or the context's error.
func (s *Server) WaitCalls(ctx context.Context, method string, n int) ([]Call, error) {
	for {
		s.mu.Lock()
		have, wake := s.okCalls[method], s.wake
		var got []Call
		if have >= n || ctx.Err() != nil {
			for _, c := range s.calls {
				if c.Method == method && c.Status == http.StatusOK {
					got = append(got, c)
				}
			}
		}
		s.mu.Unlock()
		if len(got) >= n {
			return got, nil
		}
		select {
		case <-ctx.Done():
			return got, fmt.Errorf("telegramfake: %d successful %s calls, want %d: %w", have, method, n, ctx.Err())
		case <-wake:
		}
	}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	token, method, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 {
		answer(w, http.StatusNotFound, map[string]any{"ok": false, "error_code": 404, "description": "Not Found"})
		return
	}
	if token != s.Token {
		answer(w, http.StatusUnauthorized, map[string]any{"ok": false, "error_code": 401, "description": "Unauthorized"})
		return
	}
	params, err := readParams(r)
	if err != nil {
		answer(w, http.StatusBadRequest, map[string]any{"ok": false, "error_code": 400, "description": "Bad Request: " + err.Error()})
		return
	}
	if method == "getUpdates" {
		s.getUpdates(r.Context(), w, params)
		return
	}
	s.mu.Lock()
	call := Call{Method: method, Params: params, Status: http.StatusOK, At: time.Now()}
	if f := s.fails[method]; len(f) > 0 {
		s.fails[method] = f[1:]
		call.Status = f[0].Code
		s.record(call)
		s.mu.Unlock()
		fail(w, f[0])
		return
	}
	status, body := s.method(method, params)
	call.Status = status
	if m, ok := body["result"].(map[string]any); ok && method == "sendMessage" {
		call.MessageID, _ = m["message_id"].(int)
	}
	s.record(call)
	s.mu.Unlock()
	answer(w, status, body)
}

func fail(w http.ResponseWriter, f Failure) {
	body := map[string]any{"ok": false, "error_code": f.Code, "description": f.Description}
	if f.RetryAfter > 0 {
		body["parameters"] = map[string]any{"retry_after": f.RetryAfter}
	}
	answer(w, f.Code, body)
}

func ok(result any) (int, map[string]any) {
	return http.StatusOK, map[string]any{"ok": true, "result": result}
}

func bad(desc string) (int, map[string]any) {
	return http.StatusBadRequest, map[string]any{"ok": false, "error_code": 400, "description": "Bad Request: " + desc}
}

// method answers every method but getUpdates; s.mu held.
func (s *Server) method(method string, p map[string]string) (int, map[string]any) {
	switch method {
	case "getMe":
		return ok(map[string]any{"id": BotID, "is_bot": true, "first_name": "Hermes", "username": BotUsername})
	case "deleteWebhook":
		s.webhook = ""
		if p["drop_pending_updates"] == "true" {
			s.updates, s.ids = nil, nil
		}
		return ok(true)
	case "setWebhook":
		s.webhook, s.secret = p["url"], p["secret_token"]
		if p["drop_pending_updates"] == "true" {
			s.updates, s.ids = nil, nil
		}
		if s.hooked == nil {
			s.hooked = make(chan json.RawMessage, 10000)
			go s.deliver()
		}
		for _, u := range s.updates { // what waited goes out now
			s.hooked <- u
		}
		s.updates, s.ids = nil, nil
		return ok(true)
	case "sendMessage":
		chat, err := strconv.ParseInt(p["chat_id"], 10, 64)
		if err != nil {
			return bad("chat not found")
		}
		text := p["text"]
		if strings.TrimSpace(text) == "" {
			return bad("message text is empty")
		}
		if n := len(utf16.Encode([]rune(text))); n > 4096 {
			return bad("message is too long")
		}
		if p["parse_mode"] == "MarkdownV2" {
			if err := checkMarkdownV2(text); err != nil {
				return bad("can't parse entities: " + err.Error())
			}
		}
		s.nextMsg++
		return ok(map[string]any{"message_id": s.nextMsg, "date": time.Now().Unix(), "text": text,
			"chat": map[string]any{"id": chat, "type": "private"}})
	case "editMessageText":
		if p["parse_mode"] == "MarkdownV2" {
			if err := checkMarkdownV2(p["text"]); err != nil {
				return bad("can't parse entities: " + err.Error())
			}
		}
		chat, _ := strconv.ParseInt(p["chat_id"], 10, 64)
		id, _ := strconv.Atoi(p["message_id"])
		return ok(map[string]any{"message_id": id, "date": time.Now().Unix(), "edit_date": time.Now().Unix(), "text": p["text"],
			"chat": map[string]any{"id": chat, "type": "private"}})
	case "sendChatAction", "setMessageReaction", "answerCallbackQuery", "editForumTopic", "setMyCommands", "editMessageReplyMarkup":
		return ok(true)
	}
	return http.StatusNotFound, map[string]any{"ok": false, "error_code": 404, "description": "Not Found: method not found"}
}

// getUpdates answers a long poll: the queued updates at or after offset, or
// after waiting up to timeout seconds for one.
func (s *Server) getUpdates(ctx context.Context, w http.ResponseWriter, p map[string]string) {
	offset, _ := strconv.ParseInt(p["offset"], 10, 64)
	timeout, _ := strconv.Atoi(p["timeout"])
	deadline := time.After(time.Duration(timeout) * time.Second)
	s.mu.Lock()
	s.polling++
	s.maxPolling = max(s.maxPolling, s.polling)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.polling--
		s.mu.Unlock()
	}()
	for {
		s.mu.Lock()
		if f := s.fails["getUpdates"]; len(f) > 0 {
			s.fails["getUpdates"] = f[1:]
			s.record(Call{Method: "getUpdates", Status: f[0].Code, At: time.Now()})
			s.mu.Unlock()
			fail(w, f[0])
			return
		}
		// An offset confirms every update before it: they are forgotten.
		if offset > 0 {
			i := 0
			for i < len(s.ids) && s.ids[i] < offset {
				i++
			}
			s.updates, s.ids = s.updates[i:], s.ids[i:]
		}
		out, outIDs := s.updates, s.ids
		if offset < 0 && len(out) > 0 {
			out, outIDs = out[len(out)-1:], outIDs[len(outIDs)-1:]
		}
		if len(out) > 100 {
			out, outIDs = out[:100], outIDs[:100]
		}
		wake, closed := s.wake, s.closed
		if len(out) > 0 || timeout <= 0 || closed {
			s.polls++
			now := time.Now()
			for _, id := range outIDs {
				if _, ok := s.delivered[id]; !ok {
					s.delivered[id] = now
				}
			}
			out = append([]json.RawMessage(nil), out...)
			s.mu.Unlock()
			answer(w, http.StatusOK, map[string]any{"ok": true, "result": out})
			return
		}
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-deadline:
			timeout = 0
		case <-wake:
		}
	}
}

func answer(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// readParams reads a Bot API request's parameters as the API accepts them: a
// query string, a urlencoded or multipart form, or a JSON object.
func readParams(r *http.Request) (map[string]string, error) {
	out := map[string]string{}
	for k, v := range r.URL.Query() {
		out[k] = v[0]
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		var m map[string]any
		b, err := io.ReadAll(io.LimitReader(r.Body, 10<<20))
		if err != nil {
			return nil, err
		}
		if len(b) > 0 {
			if err := json.Unmarshal(b, &m); err != nil {
				return nil, fmt.Errorf("can't parse JSON: %w", err)
			}
		}
		for k, v := range m {
			if s, ok := v.(string); ok {
				out[k] = s
				continue
			}
			b, _ := json.Marshal(v)
			out[k] = string(b)
		}
	case "multipart/form-data":
		if err := r.ParseMultipartForm(10 << 20); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil // a method without parameters: an empty form
			}
			return nil, err
		}
		for k, v := range r.MultipartForm.Value {
			out[k] = v[0]
		}
	case "application/x-www-form-urlencoded":
		b, err := io.ReadAll(io.LimitReader(r.Body, 10<<20))
		if err != nil {
			return nil, err
		}
		v, err := url.ParseQuery(string(b))
		if err != nil {
			return nil, err
		}
		for k, vv := range v {
			out[k] = vv[0]
		}
	}
	return out, nil
}

// checkMarkdownV2 is the part of Telegram's MarkdownV2 parser that matters
// to a sender: a reserved character outside an entity must be escaped, and an
// entity must end. Errors read as Telegram's.
func checkMarkdownV2(text string) error {
	open := map[string]int{} // entity marker → byte offset where it opened
	inCode := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c == '\\' {
			i++
			continue
		}
		if inCode {
			if c == '`' {
				inCode = false
				delete(open, "`")
			}
			continue
		}
		switch c {
		case '`':
			inCode = true
			open["`"] = i
		case '*', '_', '~':
			m := string(c)
			if _, ok := open[m]; ok {
				delete(open, m)
			} else {
				open[m] = i
			}
		case '.', '!', '-', '=', '+', '#', '>', '{', '}', '(', ')', '[', ']', '|':
			return fmt.Errorf("Character '%c' is reserved and must be escaped with the preceding '\\'", c)
		}
	}
	for _, at := range open {
		return fmt.Errorf("Can't find end of the entity starting at byte offset %d", at)
	}
	return nil
}
