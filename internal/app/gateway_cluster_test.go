package app

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hermes-go/hermes/internal/cluster"
	"github.com/hermes-go/hermes/internal/gateway"
	"github.com/hermes-go/hermes/internal/gateway/auth"
	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/session"
)

type sentAdapter struct {
	mu   sync.Mutex
	sent []platform.Outbound
}

func (a *sentAdapter) Name() string                                       { return "telegram" }
func (a *sentAdapter) Run(ctx context.Context, _ platform.Handler) error  { <-ctx.Done(); return nil }
func (a *sentAdapter) Edit(context.Context, string, string, string) error { return nil }
func (a *sentAdapter) Typing(context.Context, string, string) error       { return nil }
func (a *sentAdapter) Connected() bool                                    { return true }
func (a *sentAdapter) Send(_ context.Context, m platform.Outbound) (platform.SendResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sent = append(a.sent, m)
	return platform.SendResult{}, nil
}

type allowAll struct{}

func (allowAll) Check(platform.Source) auth.Decision                           { return auth.Decision{Allowed: true} }
func (allowAll) CheckInjected(platform.Source) auth.Decision                   { return auth.Decision{Allowed: true} }
func (allowAll) PairingReply(context.Context, platform.Source) (string, error) { return "", nil }

// A redelivered item (Attempt > 1) whose turn had already stored its answer
// is not run again: the stored answer goes out once more, marked recovered.
// One whose stored conversation ends with an earlier message's answer runs.
func TestResumeItem(t *testing.T) {
	ctx := context.Background()
	st, err := session.Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	key := "agent:main:telegram:dm:5"
	id, err := st.NewSession(ctx, session.Session{Model: "m", Source: "telegram"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.BindKey(ctx, key, id, "{}"); err != nil {
		t.Fatal(err)
	}
	for _, m := range []llm.Message{{Role: "user", Content: "m1"}, {Role: "assistant", Content: "one"}, {Role: "user", Content: "m10"}, {Role: "assistant", Content: "ten"}} {
		if _, err := st.AppendMessage(ctx, id, m); err != nil {
			t.Fatal(err)
		}
	}
	a := &sentAdapter{}
	r, err := gateway.New(gateway.Options{Adapters: []platform.Adapter{a}, Engine: &gatewayEngine{}, Auth: allowAll{}})
	if err != nil {
		t.Fatal(err)
	}
	g := &Gateway{runner: r, engine: &gatewayEngine{store: st}, cluster: &gatewayCluster{log: slog.New(slog.DiscardHandler)}}
	src := platform.Source{Platform: "telegram", ChatID: "5", UserID: "5", ChatType: platform.ChatDM}
	tests := []struct {
		text string
		done bool
	}{
		{"m10", true},  // its answer is stored: resent, not rerun
		{"m1", false},  // the stored answer is m10's
		{"m11", false}, // never reached the store
	}
	for _, tc := range tests {
		a.sent = nil
		done, err := g.resumeItem(ctx, &cluster.Item{Platform: "telegram", SessionKey: key, Attempt: 2}, platform.Event{Kind: platform.EventMessage, Source: src, Text: tc.text})
		if err != nil || done != tc.done {
			t.Fatalf("%s: resumeItem = %v, %v; want %v", tc.text, done, err, tc.done)
		}
		if tc.done && (len(a.sent) != 1 || !strings.Contains(a.sent[0].Text, "Recovered reply") || !strings.HasSuffix(a.sent[0].Text, "ten")) {
			t.Fatalf("%s: sent %+v, want the stored answer marked recovered", tc.text, a.sent)
		}
		if !tc.done && len(a.sent) != 0 {
			t.Fatalf("%s: sent %+v", tc.text, a.sent)
		}
	}
}

func TestClusterConfig(t *testing.T) {
	cfg := map[string]any{"gateway": map[string]any{"cluster": map[string]any{"lease_ttl": 6, "poll": 2, "max_attempts": 3}}}
	c, err := clusterConfig(cfg, "postgres://hermes@db/hermes", "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	if c.URL != "postgres://hermes:s3cret@db/hermes" || c.LeaseTTL.Seconds() != 6 || c.Poll.Seconds() != 2 || c.MaxAttempts != 3 {
		t.Fatalf("config %+v", c)
	}
	// A password already in the URL stays.
	if c, _ := clusterConfig(nil, "postgres://hermes:inurl@db/hermes", "other"); c.URL != "postgres://hermes:inurl@db/hermes" {
		t.Errorf("URL %s", c.URL)
	}
	if _, err := clusterConfig(map[string]any{"gateway": map[string]any{"cluster": map[string]any{"lease_ttl": -1}}}, "postgres://db/h", ""); err == nil {
		t.Error("a negative lease_ttl was taken")
	}
}
