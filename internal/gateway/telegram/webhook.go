package telegram

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/go-telegram/bot"

	"github.com/hermes-go/hermes/internal/gateway/platform"
)

// secretHeader is where Telegram echoes setWebhook's secret_token.
const secretHeader = "X-Telegram-Bot-Api-Secret-Token"

// maxUpdateBytes bounds one webhook request: an update is a few KB.
const maxUpdateBytes = 1 << 20

func (o *Options) checkWebhook() error {
	if o.WebhookURL == "" {
		return nil
	}
	if o.WebhookSecret == "" {
		return errors.New("telegram: TELEGRAM_WEBHOOK_URL is set but TELEGRAM_WEBHOOK_SECRET is not: set it to a long random string " +
			"(Telegram sends it with every update, so nobody else can post updates to the gateway)")
	}
	u, err := url.Parse(o.WebhookURL)
	if err != nil || u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
		return fmt.Errorf("telegram: TELEGRAM_WEBHOOK_URL %q is not an http(s) URL", o.WebhookURL)
	}
	if o.WebhookListen == "" {
		o.WebhookListen = ":8443"
	}
	return nil
}

// AcceptFunc takes one update the gateway acts on (ev decoded from raw) and
// returns once it is durably accepted: only then does the webhook answer 200
// or the long poll confirm it (its next offset); an error asks Telegram to
// retry, or leaves the update and the rest of its batch to the next poll.
type AcceptFunc func(ctx context.Context, updateID int64, ev platform.Event, raw []byte) error

// SetAccept routes updates, by webhook or long polling, to f instead of
// Run's handler (a cluster's shared queue: any process may run the turn).
// Call it before Run.
func (a *Adapter) SetAccept(f AcceptFunc) { a.accept.Store(&f) }

// Decode turns a raw update, as AcceptFunc got it, back into its event (a
// worker of the cluster's queue, maybe in another process); ok is false for
// an update the gateway does not act on.
func (a *Adapter) Decode(ctx context.Context, raw []byte) (platform.Event, bool) {
	_, ev, ok := a.decode(ctx, raw)
	return ev, ok
}

// WebhookAddr is the address the webhook server listens on ("" before Run
// has bound it, and in polling mode).
func (a *Adapter) WebhookAddr() string {
	if v, ok := a.listenAddr.Load().(string); ok {
		return v
	}
	return ""
}

// webhook serves updates Telegram posts to WebhookURL's path, each checked
// against the secret, until ctx ends.
func (a *Adapter) webhook(ctx context.Context, h platform.Handler) error {
	u, _ := url.Parse(a.o.WebhookURL)
	path := u.Path
	if path == "" {
		path = "/"
	}
	ln, err := net.Listen("tcp", a.o.WebhookListen)
	if err != nil {
		return fmt.Errorf("telegram: webhook: listening on %s (TELEGRAM_WEBHOOK_PORT): %w", a.o.WebhookListen, err)
	}
	a.listenAddr.Store(ln.Addr().String())
	mux := http.NewServeMux()
	mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		if subtle.ConstantTimeCompare([]byte(r.Header.Get(secretHeader)), []byte(a.o.WebhookSecret)) != 1 {
			a.log.Warn("telegram: webhook request without the right secret refused", "remote", r.RemoteAddr)
			http.Error(w, "wrong secret", http.StatusUnauthorized)
			return
		}
		raw, err := io.ReadAll(io.LimitReader(r.Body, maxUpdateBytes+1))
		if err != nil || len(raw) > maxUpdateBytes {
			http.Error(w, "update too large", http.StatusRequestEntityTooLarge)
			return
		}
		id, ev, ok := a.decode(ctx, raw)
		if accept := a.accept.Load(); accept != nil {
			if ok {
				if err := (*accept)(r.Context(), id, ev, raw); err != nil {
					// Not accepted: Telegram (or the balancer) retries, here or
					// on another process; the queue dedupes what did commit.
					a.log.Warn("telegram: webhook update not queued; asking for a retry", "update_id", id, "error", err)
					http.Error(w, "not queued, retry", http.StatusServiceUnavailable)
					return
				}
			}
			w.WriteHeader(http.StatusOK)
			return
		}
		if ok && a.seen.add(id) {
			h(ctx, ev)
		}
		w.WriteHeader(http.StatusOK) // a bad update is acknowledged too: Telegram would resend it forever
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if _, err := a.bot.SetWebhook(ctx, &bot.SetWebhookParams{URL: a.o.WebhookURL, SecretToken: a.o.WebhookSecret,
		DropPendingUpdates: a.o.DropPending, AllowedUpdates: allowedUpdates}); err != nil {
		_ = srv.Close()
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("telegram: setWebhook: %s", redactToken(err.Error(), a.o.Token))
	}
	a.connected.Store(true)
	defer a.connected.Store(false)
	a.log.Info("[telegram] Connected to Telegram (webhook mode)", "listen", ln.Addr().String())
	select {
	case <-ctx.Done():
	case err := <-served:
		return fmt.Errorf("telegram: webhook server: %w", err)
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	return nil
}
