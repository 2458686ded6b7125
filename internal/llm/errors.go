package llm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hermes-go/hermes/internal/clock"
)

// Reasons an attempt failed (APIError.Reason): short, stable words for hook payloads
// (api_request_error's reason) and tests.
const (
	ReasonRateLimited   = "rate_limited"       // HTTP 429
	ReasonServerError   = "server_error"       // HTTP 5xx
	ReasonAuth          = "auth"               // HTTP 401/403
	ReasonNotFound      = "not_found"          // HTTP 404
	ReasonBadRequest    = "bad_request"        // other 4xx
	ReasonHTML          = "html_response"      // an HTML page where JSON was expected
	ReasonMalformed     = "malformed_response" // not the JSON shape of chat completions
	ReasonProviderError = "provider_error"     // a 2xx whose body is an error object
	ReasonTimeout       = "timeout"            // no answer within RequestTimeout, or no complete one within Timeout
	ReasonStalled       = "stream_stalled"     // a stream silent for longer than IdleTimeout
	ReasonIncomplete    = "stream_incomplete"  // a stream that ended before the model finished
	ReasonNetwork       = "network"            // connection refused, reset, DNS, ...
)

// maxErrorBody caps the body kept in an APIError.
const maxErrorBody = 4 << 10

// APIError is every failure of a chat request except cancellation by the caller's
// context (that error is the context's, wrapped).
type APIError struct {
	Status     int    // HTTP status; 0 when no response arrived
	Body       string // response body, cut at 4 KiB
	Retryable  bool   // the client retries these (429, 5xx, network, timeouts)
	Endpoint   string // the URL that was called
	Reason     string // one of the Reason* constants
	Message    string // what went wrong, from the provider when it said
	RetryAfter time.Duration
	After      time.Duration // for a timeout or a stall: how long hermes waited
	Err        error         // the underlying transport or decode error, if any
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "chat completions request to %s failed: ", e.Endpoint)
	if e.Status != 0 && (e.Status < 200 || e.Status > 299) {
		fmt.Fprintf(&b, "HTTP %d", e.Status)
		if e.Message != "" {
			b.WriteString(": ")
		}
	}
	b.WriteString(e.Message)
	if hint := e.hint(); hint != "" {
		b.WriteString(" (" + hint + ")")
	}
	return b.String()
}

func (e *APIError) Unwrap() error { return e.Err }

// Summary says in a few words what went wrong with an attempt, for a progress
// line ("model did not answer in 120 s, retry 2/3"): no endpoint, no body.
func (e *APIError) Summary() string {
	msg := e.Message
	if r := []rune(msg); len(r) > 160 {
		msg = string(r[:160]) + "…"
	}
	switch {
	case e.Reason == ReasonTimeout && e.After > 0:
		return "model did not answer in " + Seconds(e.After)
	case e.Reason == ReasonStalled && e.After > 0:
		return "model stream went silent for " + Seconds(e.After)
	case e.Reason == ReasonNetwork:
		return "model endpoint unreachable: " + msg
	case e.Status != 0 && (e.Status < 200 || e.Status > 299):
		return fmt.Sprintf("model endpoint answered HTTP %d: %s", e.Status, msg)
	}
	return "model request failed: " + msg
}

// Seconds writes d for people: "120 s", "1.5 s", "250ms".
func Seconds(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d%time.Second == 0 || d >= 10*time.Second:
		return fmt.Sprintf("%d s", int(d.Round(time.Second)/time.Second))
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

func (e *APIError) hint() string {
	switch e.Reason {
	case ReasonAuth:
		return "check model.api_key in config.yaml or the provider's API key variable"
	case ReasonNotFound:
		return "check model.base_url and model.default"
	case ReasonHTML:
		return "is model.base_url right? OpenAI-compatible base URLs usually end in /v1"
	}
	return ""
}

// errorFromHTTP classifies a non-2xx response.
func errorFromHTTP(endpoint string, resp *http.Response, body []byte) *APIError {
	e := &APIError{Status: resp.StatusCode, Endpoint: endpoint, Body: capBody(body)}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		e.Reason, e.Retryable = ReasonRateLimited, true
	case resp.StatusCode >= 500:
		e.Reason, e.Retryable = ReasonServerError, true
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		e.Reason = ReasonAuth
	case resp.StatusCode == http.StatusNotFound:
		e.Reason = ReasonNotFound
	case resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode == http.StatusConflict:
		// OpenAI's own SDK retries these two: the request never reached a model.
		e.Reason, e.Retryable = ReasonServerError, true
	default:
		e.Reason = ReasonBadRequest
	}
	e.RetryAfter = retryAfter(resp.Header, clock.Now())
	switch {
	case looksHTML(resp.Header.Get("Content-Type"), body):
		e.Message = "the server answered with an HTML page"
		if t := htmlTitle(body); t != "" {
			e.Message += fmt.Sprintf(" (%q)", t)
		}
	default:
		if msg := errorMessage(body); msg != "" {
			e.Message = msg
		} else {
			e.Message = strings.TrimSpace(http.StatusText(resp.StatusCode))
		}
	}
	return e
}

// errorMessage pulls the message out of {"error":{"message":...}}, {"error":"..."} or
// {"message":"..."}; "" when the body is none of those.
func errorMessage(body []byte) string {
	var w struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  string          `json:"detail"`
	}
	if json.Unmarshal(body, &w) != nil {
		s := strings.TrimSpace(string(body))
		if len(s) > 300 {
			s = s[:300] + "…"
		}
		return s
	}
	if len(w.Error) > 0 {
		var obj struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(w.Error, &obj) == nil && obj.Message != "" {
			return obj.Message
		}
		var s string
		if json.Unmarshal(w.Error, &s) == nil && s != "" {
			return s
		}
	}
	if w.Message != "" {
		return w.Message
	}
	return w.Detail
}

// providerError reads the error object some providers (OpenRouter) put in a 2xx body
// or a stream chunk: {"error":{"code":502,"message":"..."}}.
func providerError(endpoint string, raw json.RawMessage, body []byte) *APIError {
	var obj struct {
		Code    json.RawMessage `json:"code"`
		Message string          `json:"message"`
	}
	e := &APIError{Endpoint: endpoint, Reason: ReasonProviderError, Body: capBody(body)}
	if json.Unmarshal(raw, &obj) != nil {
		var s string
		_ = json.Unmarshal(raw, &s)
		obj.Message = s
	}
	e.Message = "the provider returned an error"
	if obj.Message != "" {
		e.Message += ": " + obj.Message
	}
	if code, err := strconv.Atoi(strings.Trim(string(obj.Code), `"`)); err == nil {
		e.Status = code
		e.Retryable = code == http.StatusTooManyRequests || code >= 500
	}
	return e
}

func capBody(b []byte) string {
	if len(b) > maxErrorBody {
		return string(b[:maxErrorBody]) + "…"
	}
	return string(b)
}

// retryAfter reads retry-after-ms (OpenAI) or Retry-After (seconds or an HTTP date).
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s < 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

func looksHTML(contentType string, body []byte) bool {
	if strings.Contains(strings.ToLower(contentType), "html") {
		return true
	}
	s := strings.TrimSpace(string(body[:min(len(body), 512)]))
	s = strings.ToLower(s)
	return strings.HasPrefix(s, "<!doctype html") || strings.HasPrefix(s, "<html") || strings.HasPrefix(s, "<head") || strings.HasPrefix(s, "<body")
}

func htmlTitle(body []byte) string {
	s := string(body[:min(len(body), 8<<10)])
	lower := strings.ToLower(s)
	i := strings.Index(lower, "<title>")
	if i < 0 {
		return ""
	}
	j := strings.Index(lower[i:], "</title>")
	if j < 0 {
		return ""
	}
	t := strings.TrimSpace(s[i+len("<title>") : i+j])
	if len(t) > 120 {
		t = t[:120] + "…"
	}
	return t
}
