package hostapi

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/plugins/registry"
	"github.com/hermes-go/hermes/pkg/protocol"
)

func TestRegisterPlatform(t *testing.T) {
	for _, tc := range []struct {
		name, params string
		code         int    // the error expected, 0 for none
		registered   bool   // an entry was recorded
		warn         string // a warning expected
		check        func(t *testing.T, e *registry.PlatformEntry)
	}{
		{name: "full entry", registered: true,
			params: `{"registrar":"register_platform","name":"webhook","handle":"h1","details":{"label":"Webhook","required_env":["WEBHOOK_SECRET"],
				"allowed_users_env":"WEBHOOK_ALLOWED_USERS","allow_all_env":"WEBHOOK_ALLOW_ALL_USERS","max_message_length":2000,"emoji":"🪝","check_handle":"h2"}}`,
			check: func(t *testing.T, e *registry.PlatformEntry) {
				d := e.Details
				if e.Label != "Webhook" || d.AllowedUsersEnv != "WEBHOOK_ALLOWED_USERS" || d.AllowAllEnv != "WEBHOOK_ALLOW_ALL_USERS" ||
					d.MaxMessageLength != 2000 || len(d.RequiredEnv) != 1 || d.RequiredEnv[0] != "WEBHOOK_SECRET" || e.Check == nil || e.Plugin != "a" {
					t.Errorf("entry %+v", e)
				}
			}},
		{name: "label defaults to the name", registered: true, params: `{"registrar":"register_platform","name":"irc","details":{}}`,
			check: func(t *testing.T, e *registry.PlatformEntry) {
				if e.Label != "irc" || e.Check != nil {
					t.Errorf("entry %+v", e)
				}
			}},
		{name: "upper-case name", params: `{"registrar":"register_platform","name":"Webhook"}`, code: protocol.CodeInvalidArgument},
		{name: "name with a path", params: `{"registrar":"register_platform","name":"../x"}`, code: protocol.CodeInvalidArgument},
		{name: "built-in name", params: `{"registrar":"register_platform","name":"telegram"}`, warn: "built into hermes"},
		{name: "bad env names fall back", registered: true, warn: "not an environment variable name",
			params: `{"registrar":"register_platform","name":"x","details":{"allowed_users_env":"A B","required_env":["OK_1","$(rm)"]}}`,
			check: func(t *testing.T, e *registry.PlatformEntry) {
				if e.Details.AllowedUsersEnv != "" || len(e.Details.RequiredEnv) != 1 {
					t.Errorf("details %+v", e.Details)
				}
			}},
		{name: "long label is clipped", registered: true,
			params: `{"registrar":"register_platform","name":"y","details":{"label":"` + strings.Repeat("é", 80) + `"}}`,
			check: func(t *testing.T, e *registry.PlatformEntry) {
				if len(e.Label) > maxPlatformLabel || !strings.HasPrefix(e.Label, "é") || strings.ContainsRune(e.Label, '\uFFFD') {
					t.Errorf("label %q (%d bytes)", e.Label, len(e.Label))
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, reg := registerOtherFromA(t, tc.params, tc.code)
			if reg == nil {
				return
			}
			got, _ := reg.Platforms()
			if (len(got) == 1) != tc.registered {
				t.Fatalf("%d entries, registered=%v", len(got), tc.registered)
			}
			warns := strings.Join(s.p.(*testCaller).warns, "\n")
			if (tc.warn == "") != (warns == "") || !strings.Contains(warns, tc.warn) {
				t.Errorf("warnings %q, want %q", warns, tc.warn)
			}
			if tc.check != nil && len(got) == 1 {
				tc.check(t, got[0])
			}
		})
	}
}

func TestPlatformEventRouting(t *testing.T) {
	s, reg, _ := newTestSession(t, "")
	ev := `{"platform":"webhook","text":"hi","source":{"chat_id":"1","user_id":"1"}}`
	if _, perr := call(t, s, protocol.MethodPlatformEvent, ev); perr == nil || perr.Code != protocol.CodeNotAvailable ||
		!strings.Contains(perr.Message, "platforms.webhook.enabled") {
		t.Fatalf("with no gateway: %v", perr)
	}
	var got []protocol.PlatformEventParams
	var status []protocol.PlatformStatusParams
	unbind := reg.BindPlatform("a", "webhook", registry.PlatformReceiver{
		Event: func(_ context.Context, ev protocol.PlatformEventParams) error {
			if ev.Text == "bad" {
				return errors.New("text refused")
			}
			got = append(got, ev)
			return nil
		},
		Status: func(st protocol.PlatformStatusParams) { status = append(status, st) },
	})
	if _, perr := call(t, s, protocol.MethodPlatformEvent, ev); perr != nil {
		t.Fatal(perr)
	}
	if len(got) != 1 || got[0].Source.ChatID != "1" {
		t.Fatalf("delivered %+v", got)
	}
	if _, perr := call(t, s, protocol.MethodPlatformEvent, `{"platform":"webhook","text":"bad"}`); perr == nil || perr.Code != protocol.CodeInvalidArgument {
		t.Fatalf("a refused event: %v", perr)
	}
	// Another plugin's events never reach this route.
	other := s.h.Session(&testCaller{id: "b"})
	if _, perr := call(t, other, protocol.MethodPlatformEvent, ev); perr == nil {
		t.Fatal("plugin b reached plugin a's platform")
	}
	call(t, s, protocol.MethodPlatformStatus, `{"platform":"webhook","connected":false,"error":"gone"}`)
	if len(status) != 1 || status[0].Error != "gone" {
		t.Fatalf("status %+v", status)
	}
	unbind()
	if _, perr := call(t, s, protocol.MethodPlatformEvent, ev); perr == nil {
		t.Fatal("delivered after unbind")
	}
}

// registerOtherFromA sends one ctx.register_other from plugin "a" and commits it.
// With code set it checks the call failed with that code and returns a nil
// registry.
func registerOtherFromA(t *testing.T, params string, code int) (*Session, *registry.Registry) {
	t.Helper()
	s, reg, _ := newTestSession(t, "")
	_, perr := call(t, s, protocol.MethodRegisterOther, params)
	if code != 0 {
		if perr == nil || perr.Code != code {
			t.Fatalf("error %v, want code %d", perr, code)
		}
		return s, nil
	}
	if perr != nil {
		t.Fatal(perr)
	}
	reg.Commit("a")
	return s, reg
}
