package approval

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/hermes-go/hermes/internal/hooks"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// Approval transports (HU §10.1, wave2 §1): a plugin's present(request) is
// asked instead of the built-in prompt when security.approval.transport
// names it. The host keeps everything that decides: hardline blocks come
// before (the guard), the allowlists and "session"/"always" memory after; the
// transport only returns a choice, and anything but a well-formed, current
// decision among the offered choices is a deny.

// TransportRequest is upstream's frozen ApprovalRequest, as sent to the plugin.
type TransportRequest = protocol.ApprovalRequest

// TransportDecision is what present returned (Invalid: not an ApprovalDecision).
type TransportDecision = protocol.ApprovalDecision

// PresentFunc calls a transport's present(request) and waits for its decision.
type PresentFunc func(ctx context.Context, req TransportRequest) (TransportDecision, error)

// TransportRoute is the selected transport: Name as security.approval.transport
// says ("" or "builtin": none), Fallback when transport_fallback is builtin.
type TransportRoute struct {
	Name     string
	Fallback bool
	// Lookup finds a registered transport (looked up at each request: plugins
	// load after the approver exists).
	Lookup func(name string) (PresentFunc, bool)
	// Redact masks secrets in the command and description the plugin sees.
	Redact func(string) string
	Logger *slog.Logger
}

// Selected reports whether a transport replaces the built-in prompt.
func (r *TransportRoute) Selected() bool { return r != nil && r.Name != "" && r.Name != "builtin" }

// Transport failures (upstream's codes); each is a deny.
const (
	FailBusy        = "busy"
	FailInterrupted = "interrupted"
	FailTimeout     = "timeout"
	FailError       = "error"
	FailInvalid     = "invalid"
	FailStale       = "stale"
	FailUnavailable = "unavailable"
)

// TransportFailure is the error a transport's deny comes with: the model is
// told the user has not consented, in upstream's words.
type TransportFailure struct {
	Name    string
	Failure string
}

// BlockMessage is what the model is told (tools.BlockMessage).
func (e *TransportFailure) BlockMessage() string { return e.Error() }

func (e *TransportFailure) Error() string {
	return "BLOCKED: Selected approval transport failed (" + e.Failure + "); the user has NOT consented to this action. " +
		"Do NOT retry this command or attempt the same outcome through another route."
}

// maxTransportWorkers bounds the present calls running at once (upstream's
// BoundedSemaphore(8)); a request finding no slot is denied as busy.
const maxTransportWorkers = 8

var transportSlots = make(chan struct{}, maxTransportWorkers)

// newTransportRequest builds the request with upstream's digest: sha256 of the
// canonical JSON of its fields plus the session key (which is not sent).
func newTransportRequest(in approvalInput, surface, sessionKey string, timeout time.Duration, redact func(string) string) TransportRequest {
	var id [16]byte
	_, _ = rand.Read(id[:])
	choices := []string{string(ChoiceOnce), string(ChoiceSession)}
	if !in.origin.ByPlugin() {
		choices = append(choices, string(ChoiceAlways))
	}
	choices = append(choices, string(ChoiceDeny))
	if redact == nil {
		redact = func(s string) string { return s }
	}
	secs := int(timeout / time.Second)
	if timeout <= 0 {
		secs = 300
	}
	req := TransportRequest{SchemaVersion: 1, RequestID: hex.EncodeToString(id[:]), Command: redact(in.command),
		Description: redact(in.description), PatternKey: in.keys[0], PatternKeys: slices.Clone(in.keys), Surface: surface,
		TimeoutSeconds: secs, AllowedChoices: choices}
	canonical := map[string]any{"schema_version": req.SchemaVersion, "request_id": req.RequestID, "command": req.Command,
		"description": req.Description, "pattern_key": req.PatternKey, "pattern_keys": req.PatternKeys, "surface": req.Surface,
		"timeout_seconds": req.TimeoutSeconds, "allowed_choices": req.AllowedChoices, "session_key": sessionKey}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(canonical) // map keys come out sorted, without spaces
	sum := sha256.Sum256(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	req.Digest = hex.EncodeToString(sum[:])
	return req
}

// present runs the transport for req and returns its choice, or the failure
// that denies it. The call is cancelled at the deadline (a late decision never
// authorises anything) and when ctx ends.
func (r *TransportRoute) present(ctx context.Context, req TransportRequest, timeout time.Duration) (Choice, string) {
	log := r.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var fn PresentFunc
	if r.Lookup != nil {
		fn, _ = r.Lookup(r.Name)
	}
	if fn == nil {
		log.Warn("Selected approval transport is unavailable", "transport", r.Name)
		return ChoiceDeny, FailUnavailable
	}
	select {
	case transportSlots <- struct{}{}:
	default:
		log.Warn("Approval transport worker capacity exhausted", "transport", r.Name)
		return ChoiceDeny, FailBusy
	}
	if timeout <= 0 {
		timeout = 300 * time.Second
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type answer struct {
		d   TransportDecision
		err error
	}
	done := make(chan answer, 1)
	go func() {
		defer func() { <-transportSlots }() // the slot is free when the call has really ended
		d, err := fn(cctx, req)
		done <- answer{d, err}
	}()
	var a answer
	select {
	case a = <-done:
	case <-cctx.Done():
	}
	switch {
	case ctx.Err() != nil:
		log.Info("Approval transport interrupted", "request_id", req.RequestID)
		return ChoiceDeny, FailInterrupted
	case cctx.Err() != nil:
		log.Warn("Approval transport timed out for request "+req.RequestID, "transport", r.Name)
		return ChoiceDeny, FailTimeout
	case a.err != nil:
		// The plugin's error text is not logged: it may carry secrets.
		log.Warn("Approval transport failed for request "+req.RequestID, "transport", r.Name)
		return ChoiceDeny, FailError
	case a.d.Invalid != "":
		log.Warn("Approval transport returned an invalid decision type", "transport", r.Name, "type", a.d.Invalid)
		return ChoiceDeny, FailInvalid
	case a.d.RequestID != req.RequestID || a.d.RequestDigest != req.Digest:
		log.Warn("Approval transport returned a stale or mismatched decision", "transport", r.Name)
		return ChoiceDeny, FailStale
	case !slices.Contains(req.AllowedChoices, a.d.Choice):
		log.Warn("Approval transport returned a disallowed choice", "transport", r.Name)
		return ChoiceDeny, FailInvalid
	}
	return Choice(a.d.Choice), ""
}

// viaTransport asks the selected transport, firing the approval hooks with
// surface "transport:<name>". handled is false when the transport failed and
// transport_fallback is builtin: the built-in prompt is asked next.
func (a *Approver) viaTransport(ctx context.Context, in approvalInput, firer Firer) (choice Choice, handled bool, err error) {
	r := a.Transport
	surface := a.Surface
	if surface != "gateway" {
		surface = "cli"
	}
	req := newTransportRequest(in, surface, a.SessionKey, a.Timeout, r.Redact)
	payload := func() map[string]any {
		keys := make([]any, len(req.PatternKeys))
		for i, k := range req.PatternKeys {
			keys[i] = k
		}
		return map[string]any{"command": req.Command, "description": req.Description, "pattern_key": req.PatternKey,
			"pattern_keys": keys, "session_key": a.SessionKey, "surface": "transport:" + r.Name,
			"turn_id": in.turnID, "tool_call_id": in.toolCallID, "request_id": req.RequestID, "request_digest": req.Digest}
	}
	if firer != nil {
		firer.Fire(ctx, hooks.HookPreApprovalRequest, payload())
	}
	choice, failure := r.present(ctx, req, a.Timeout)
	if firer != nil {
		p := payload()
		p["choice"] = string(choice)
		if failure != "" {
			p["choice"] = "transport_" + failure
		}
		firer.Fire(context.WithoutCancel(ctx), hooks.HookPostApprovalResponse, p)
	}
	if failure == "" {
		return choice, true, nil
	}
	if r.Fallback {
		if r.Logger != nil {
			r.Logger.Warn(fmt.Sprintf("Approval transport %q failed (%s); using explicit builtin fallback", r.Name, failure))
		}
		return "", false, nil
	}
	return ChoiceDeny, true, &TransportFailure{Name: r.Name, Failure: failure}
}

// IsTransportFailure returns the transport failure behind err, if any.
func IsTransportFailure(err error) (*TransportFailure, bool) {
	var tf *TransportFailure
	ok := errors.As(err, &tf)
	return tf, ok
}
