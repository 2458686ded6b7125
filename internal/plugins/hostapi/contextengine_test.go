package hostapi

import (
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/plugins/registry"
	"github.com/hermes-go/hermes/pkg/protocol"
)

func TestRegisterContextEngine(t *testing.T) {
	for _, tc := range []struct {
		name, params string
		code         int // the error expected, 0 for none
		registered   bool
		warn         string
	}{
		{name: "an engine", params: `{"registrar":"register_context_engine","name":"lcm","details":{"threshold_percent":0.6}}`, registered: true},
		{name: "the built-in's name", params: `{"registrar":"register_context_engine","name":"compressor"}`, warn: "built-in compressor"},
		{name: "a name with a path", params: `{"registrar":"register_context_engine","name":"../x"}`, code: protocol.CodeInvalidArgument},
		{name: "no name", params: `{"registrar":"register_context_engine","name":""}`, code: protocol.CodeInvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, reg := registerOtherFromA(t, tc.params, tc.code)
			if reg == nil {
				return
			}
			got := reg.Providers(registry.ContextEngine)
			if (len(got) == 1) != tc.registered {
				t.Fatalf("%d engines, registered=%v", len(got), tc.registered)
			}
			if tc.registered && (got[0].Conn == nil || got[0].Plugin != "a" || got[0].Details["threshold_percent"] != 0.6) {
				t.Errorf("entry %+v", got[0])
			}
			warns := strings.Join(s.p.(*testCaller).warns, "\n")
			if (tc.warn == "") != (warns == "") || !strings.Contains(warns, tc.warn) {
				t.Errorf("warnings %q, want %q", warns, tc.warn)
			}
		})
	}
}

func TestOnlyOneContextEnginePlugin(t *testing.T) {
	s, reg, _ := newTestSession(t, "")
	params := `{"registrar":"register_context_engine","name":"lcm"}`
	if _, perr := call(t, s, protocol.MethodRegisterOther, params); perr != nil {
		t.Fatal(perr)
	}
	reg.Commit("a")
	// The same engine registered again (a restart) is kept once; another
	// engine of the same plugin is refused too.
	if _, perr := call(t, s, protocol.MethodRegisterOther, params); perr != nil {
		t.Fatal(perr)
	}
	if res, _ := call(t, s, protocol.MethodRegisterOther, `{"registrar":"register_context_engine","name":"lcm2"}`); res.(protocol.RegisterResult).Registered {
		t.Fatal("a second engine of the same plugin was taken")
	}
	other := s.h.Session(&testCaller{id: "other"})
	res, perr := call(t, other, protocol.MethodRegisterOther, `{"registrar":"register_context_engine","name":"jit"}`)
	if perr != nil {
		t.Fatal(perr)
	}
	if r, ok := res.(protocol.RegisterResult); !ok || r.Registered || r.Warning != "Only one context engine plugin is allowed." {
		t.Fatalf("second plugin's registration: %#v", res)
	}
	warns := strings.Join(other.p.(*testCaller).warns, "\n")
	if !strings.Contains(warns, "plugin other: Only one context engine plugin is allowed; plugin a registered one first, so 'jit' is ignored") {
		t.Errorf("warnings %q", warns)
	}
	reg.Commit("other")
	got := reg.Providers(registry.ContextEngine)
	if len(got) != 1 || got[0].Plugin != "a" {
		t.Fatalf("engines %+v", got)
	}
}
