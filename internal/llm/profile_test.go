package llm_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/llm/llmtest"
)

// tagProfile prefixes the last message and adds a body field, or fails.
type tagProfile struct {
	prepErr, bodyErr error
	calls            int
}

func (p *tagProfile) PrepareMessages(_ context.Context, msgs []llm.Message) ([]llm.Message, error) {
	p.calls++
	if p.prepErr != nil {
		return nil, p.prepErr
	}
	out := append([]llm.Message(nil), msgs...)
	out[len(out)-1].Content = "[tag] " + out[len(out)-1].Content
	return out, nil
}

func (p *tagProfile) ExtraBody(_ context.Context, model string) (map[string]any, error) {
	if p.bodyErr != nil {
		return nil, p.bodyErr
	}
	return map[string]any{"tag_model": model, "shared": "profile"}, nil
}

func TestProfileAndHeaders(t *testing.T) {
	tests := []struct {
		name    string
		profile *tagProfile
		wantErr string
	}{
		{name: "hooks applied", profile: &tagProfile{}},
		{name: "prepare fails", profile: &tagProfile{prepErr: errors.New("RuntimeError: nope")}, wantErr: "provider plug: RuntimeError: nope"},
		{name: "extra body fails", profile: &tagProfile{bodyErr: errors.New("TypeError: bad")}, wantErr: "provider plug: TypeError: bad"},
		{name: "no profile"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Enqueue(llmtest.Text("ok"))
			cfg := llm.Config{BaseURL: srv.URL, Model: "m1", Provider: "plug", APIKey: "k", MaxRetries: -1,
				Headers: map[string]string{"X-Plug": "v1", "Authorization": "Bearer stolen"}}
			if tc.profile != nil {
				cfg.Profile = tc.profile
			}
			c, err := llm.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			orig := []llm.Message{{Role: "user", Content: "hi"}}
			_, err = c.Chat(context.Background(), llm.Request{Messages: orig, Extra: map[string]any{"shared": "request"}}, nil)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if n := len(srv.Requests()); n != 0 {
					t.Errorf("%d requests sent after a failing hook", n)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := srv.LastRequest(t)
			if got.Header.Get("X-Plug") != "v1" || got.Header.Get("Authorization") != "Bearer k" {
				t.Errorf("headers: X-Plug %q Authorization %q", got.Header.Get("X-Plug"), got.Header.Get("Authorization"))
			}
			if orig[0].Content != "hi" {
				t.Errorf("the caller's messages were changed: %q", orig[0].Content)
			}
			wantContent, wantTag := "hi", any(nil)
			if tc.profile != nil {
				wantContent, wantTag = "[tag] hi", "m1"
			}
			if got.Messages[0].Content != wantContent || got.Fields["tag_model"] != wantTag {
				t.Errorf("content %q tag_model %v", got.Messages[0].Content, got.Fields["tag_model"])
			}
			if got.Fields["shared"] != "request" {
				t.Errorf("shared = %v: the request's own Extra must win over the profile's", got.Fields["shared"])
			}
		})
	}
}

func TestFromConfigWithPluginProvider(t *testing.T) {
	extra := map[string]llm.Provider{"plug": {BaseURL: "https://plug.example/v1", KeyEnv: "PLUG_KEY", BaseURLEnv: "PLUG_BASE_URL",
		Headers: map[string]string{"X-Plug": "1"}}}
	extra["plug-alias"] = llm.Provider{Name: "plug", BaseURL: extra["plug"].BaseURL, KeyEnv: "PLUG_KEY", Headers: extra["plug"].Headers}
	tests := []struct {
		name     string
		env      map[string]string
		wantBase string
		wantErr  string
		alias    bool
	}{
		{name: "profile endpoint and key", env: map[string]string{"PLUG_KEY": "pk"}, wantBase: "https://plug.example/v1"},
		{name: "base url env wins", env: map[string]string{"PLUG_KEY": "pk", "PLUG_BASE_URL": "http://127.0.0.1:1/v1"}, wantBase: "http://127.0.0.1:1/v1"},
		{name: "missing key names the variable", wantErr: "set PLUG_KEY in the environment"},
		{name: "an alias selects the provider by its name", env: map[string]string{"PLUG_KEY": "pk"}, wantBase: "https://plug.example/v1", alias: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			provider := "plug"
			if tc.alias {
				provider = "Plug-Alias"
			}
			cfg, err := llm.FromConfig(context.Background(), map[string]any{"default": "m", "provider": provider},
				func(k string) string { return tc.env[k] }, nil, extra)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.BaseURL != tc.wantBase || cfg.APIKey != "pk" || cfg.Headers["X-Plug"] != "1" || cfg.Provider != "plug" {
				t.Errorf("cfg = %+v", cfg)
			}
		})
	}
}
