package hostapi

import (
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/plugins/registry"
	"github.com/hermes-go/hermes/pkg/protocol"
)

func TestRegisterModelProvider(t *testing.T) {
	for _, tc := range []struct {
		name, params string
		code         int // the error expected, 0 for none
		warn         string
	}{
		{name: "a profile", params: `{"registrar":"register_provider","name":"acme","details":{"base_url":"https://acme.example/v1","default_headers":{"X-Acme":"1"},"hooks":["prepare_messages"]}}`},
		{name: "no base url is fine", params: `{"registrar":"register_provider","name":"acme"}`},
		{name: "another api mode warns", params: `{"registrar":"register_provider","name":"acme","details":{"api_mode":"anthropic_messages"}}`, warn: "chat_completions only"},
		{name: "upper-case name", params: `{"registrar":"register_provider","name":"Acme"}`, code: protocol.CodeInvalidArgument},
		{name: "no name", params: `{"registrar":"register_provider","name":""}`, code: protocol.CodeInvalidArgument},
		{name: "base url not http", params: `{"registrar":"register_provider","name":"acme","details":{"base_url":"file:///etc"}}`, code: protocol.CodeInvalidArgument},
		{name: "header with a newline", params: `{"registrar":"register_provider","name":"acme","details":{"default_headers":{"X-A":"1\r\nX-B: 2"}}}`, code: protocol.CodeInvalidArgument},
		{name: "header name with a space", params: `{"registrar":"register_provider","name":"acme","details":{"default_headers":{"X A":"1"}}}`, code: protocol.CodeInvalidArgument},
		{name: "header value not a string", params: `{"registrar":"register_provider","name":"acme","details":{"default_headers":{"X-A":1}}}`, code: protocol.CodeInvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, reg := registerOtherFromA(t, tc.params, tc.code)
			if reg == nil {
				return
			}
			got := reg.Providers(registry.ModelProvider)
			if len(got) != 1 || got[0].Conn == nil || got[0].Plugin != "a" || got[0].Name != "acme" {
				t.Fatalf("providers %+v", got)
			}
			warns := strings.Join(s.p.(*testCaller).warns, "\n")
			if (tc.warn == "") != (warns == "") || !strings.Contains(warns, tc.warn) {
				t.Errorf("warnings %q, want %q", warns, tc.warn)
			}
		})
	}
}

// Unlike context engines, many model providers load at once, several per plugin.
func TestManyModelProviders(t *testing.T) {
	s, reg, _ := newTestSession(t, "")
	for _, n := range []string{"one", "two"} {
		if _, perr := call(t, s, protocol.MethodRegisterOther, `{"registrar":"register_provider","name":"`+n+`"}`); perr != nil {
			t.Fatal(perr)
		}
	}
	reg.Commit("a")
	other := s.h.Session(&testCaller{id: "other"})
	if _, perr := call(t, other, protocol.MethodRegisterOther, `{"registrar":"register_provider","name":"three"}`); perr != nil {
		t.Fatal(perr)
	}
	reg.Commit("other")
	var names []string
	for _, p := range reg.Providers(registry.ModelProvider) {
		names = append(names, p.Plugin+":"+p.Name)
	}
	if strings.Join(names, ",") != "a:one,a:two,other:three" {
		t.Fatalf("providers %v", names)
	}
}
