package hostapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/home"
	"github.com/hermes-go/hermes/internal/plugins/manifest"
	"github.com/hermes-go/hermes/internal/plugins/registry"
	"github.com/hermes-go/hermes/internal/plugins/runtime"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// testCaller is the plugin side of a session: no process, so calls back into
// it fail, as they do for a plugin that is not running.
type testCaller struct {
	id    string
	warns []string
}

func (c *testCaller) ID() string                   { return c.id }
func (c *testCaller) Manifest() *manifest.Manifest { return &manifest.Manifest{Name: c.id} }
func (c *testCaller) Bundled() bool                { return false }
func (c *testCaller) Python() bool                 { return false }
func (c *testCaller) Call(context.Context, string, any) (json.RawMessage, error) {
	return nil, errors.New("not running")
}
func (c *testCaller) Process() *runtime.Process { return nil }
func (c *testCaller) Restart(string)            {}
func (c *testCaller) Warnf(format string, args ...any) {
	c.warns = append(c.warns, fmt.Sprintf(format, args...))
}
func (c *testCaller) WaitEarlierCommitted(context.Context) {}

type directory map[string]bool

func (d directory) HasPlugin(name string) bool { return d[name] }
func (d directory) Loading(string) bool        { return false }

func newTestSession(t *testing.T, config string) (*Session, *registry.Registry, home.Home) {
	t.Helper()
	h := home.Home{Dir: t.TempDir()}
	if config != "" {
		if err := os.WriteFile(h.ConfigPath(), []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	reg := registry.New(registry.Options{})
	host := New(Options{Registry: reg, Store: configStore(h), Home: h, Plugins: directory{"a": true, "other": true}})
	t.Cleanup(host.Close)
	return host.Session(&testCaller{id: "a"}), reg, h
}

func configStore(h home.Home) config.Store { return config.Store{Path: h.ConfigPath()} }

func call(t *testing.T, s *Session, method, params string) (any, *protocol.Error) {
	t.Helper()
	var raw json.RawMessage
	if params != "" {
		raw = json.RawMessage(params)
	}
	v, err := s.Handler()(context.Background(), method, raw)
	if err == nil {
		return v, nil
	}
	var perr *protocol.Error
	if !errors.As(err, &perr) {
		t.Fatalf("%s: error %v is not a protocol error", method, err)
	}
	return v, perr
}

func TestTableErrors(t *testing.T) {
	tests := []struct {
		method, params string
		code           int
		msg            string
	}{
		{"ctx.no_such_method", `{}`, protocol.CodeMethodNotFound, `hermes host has no method "ctx.no_such_method"`},
		{protocol.MethodRegisterTool, `{"name": 5}`, protocol.CodeInvalidParams, "invalid parameters: "},
		{protocol.MethodGetConfig, `[1,2]`, protocol.CodeInvalidParams, "invalid parameters: "},
		{protocol.MethodRegisterTool, `{"name": "  "}`, protocol.CodeInvalidArgument, "register_tool: name must be a non-empty string"},
		{protocol.MethodCLIStdin, ``, protocol.CodeNotAvailable, "only available to a plugin CLI command"},
		{protocol.MethodFacade, `{"name": "teleport"}`, protocol.CodeNotAvailable, "ctx.teleport is not available in this host yet"},
		{protocol.MethodFacade, `{"name": "llm.complete"}`, protocol.CodeNotAvailable, "no model is configured"},
		{protocol.MethodMiddlewareNext, `{"token": "next-99"}`, protocol.CodeRuntimeError, "next_call may be called only once"},
		{protocol.MethodStateGet, `{"key": "../x"}`, protocol.CodeInvalidArgument, "invalid state key"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.params, func(t *testing.T) {
			s, _, _ := newTestSession(t, "")
			_, perr := call(t, s, tt.method, tt.params)
			if perr == nil || perr.Code != tt.code || !strings.Contains(perr.Message, tt.msg) {
				t.Fatalf("got %+v, want code %d with %q", perr, tt.code, tt.msg)
			}
		})
	}
}

// A log notification with parameters it cannot read is dropped, not answered.
func TestLogIsLenient(t *testing.T) {
	s, _, _ := newTestSession(t, "")
	var got []string
	s.h.opts.Sink = func(id, stream, line string) { got = append(got, id+" "+stream+" "+line) }
	if _, perr := call(t, s, protocol.MethodLog, `"garbage"`); perr != nil {
		t.Fatalf("log answered an error: %v", perr)
	}
	if _, perr := call(t, s, protocol.MethodLog, `{"level": "WARN", "message": "hi"}`); perr != nil {
		t.Fatal(perr)
	}
	if len(got) != 1 || got[0] != "a log:warning hi" {
		t.Fatalf("sink got %q", got)
	}
}

// set_config keeps numbers as the plugin wrote them: 5 stays 5 in config.yaml.
func TestSetConfigKeepsIntegers(t *testing.T) {
	s, _, h := newTestSession(t, "plugins:\n  enabled: [a]\n")
	if _, perr := call(t, s, protocol.MethodSetConfig, `{"key": "limit", "value": 5}`); perr != nil {
		t.Fatal(perr)
	}
	b, err := os.ReadFile(h.ConfigPath())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"limit: 5\n"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("config.yaml lacks %q:\n%s", want, b)
		}
	}
	v, perr := call(t, s, protocol.MethodGetConfig, `{"key": "limit"}`)
	if perr != nil || fmt.Sprint(v) != "5" {
		t.Errorf("get_config = %v, %v", v, perr)
	}
}

func TestStateRoundTrip(t *testing.T) {
	s, _, h := newTestSession(t, "")
	if _, perr := call(t, s, protocol.MethodStateSet, `{"key": "count", "value": 3}`); perr != nil {
		t.Fatal(perr)
	}
	v, perr := call(t, s, protocol.MethodStateGet, `{"key": "count"}`)
	if perr != nil || fmt.Sprint(v) != "3" {
		t.Fatalf("state_get = %v, %v", v, perr)
	}
	if _, err := os.Stat(filepath.Join(h.PluginDataDir("a"), "state.json")); err != nil {
		t.Fatal(err)
	}
	v, _ = call(t, s, protocol.MethodStateGet, `{"key": "missing", "default": "d"}`)
	if v != "d" {
		t.Errorf("default = %v", v)
	}
}

// has_plugin never answers true for the asking plugin itself.
func TestHasPlugin(t *testing.T) {
	s, _, _ := newTestSession(t, "")
	for name, want := range map[string]bool{"a": false, "other": true, "nobody": false} {
		v, perr := call(t, s, protocol.MethodHasPlugin, `{"name": "`+name+`"}`)
		if perr != nil || v != want {
			t.Errorf("has_plugin(%s) = %v, %v; want %v", name, v, perr, want)
		}
	}
}

// Registering calls are recorded, so a restart can tell whether it registered
// the same; other calls are not.
func TestRegisteringCallsAreRecorded(t *testing.T) {
	s, reg, _ := newTestSession(t, "")
	register := func() {
		call(t, s, protocol.MethodRegisterHook, `{"hook": "post_tool_call", "callback": "cb", "handle": "h1"}`)
		call(t, s, protocol.MethodGetConfig, `{"key": "x"}`)
	}
	register()
	reg.Commit("a")
	reg.Begin("a")
	register()
	if !reg.SameAsCommitted("a") {
		t.Fatal("the same registering calls are not recognised as the same")
	}
	reg.Begin("a")
	call(t, s, protocol.MethodRegisterHook, `{"hook": "post_tool_call", "callback": "cb", "handle": "h2"}`)
	if reg.SameAsCommitted("a") {
		t.Fatal("a different handle passed for the same registration")
	}
}

// Every protocol method a plugin may call has a row; a row for a name the
// protocol does not define would never be reached.
func TestTableCoversProtocol(t *testing.T) {
	for _, m := range []string{
		protocol.MethodLog, protocol.MethodRegisterTool, protocol.MethodRegisterHook, protocol.MethodRegisterCommand,
		protocol.MethodRegisterCLICommand, protocol.MethodRegisterSkill, protocol.MethodRegisterMiddleware,
		protocol.MethodRegisterOther, protocol.MethodSubscribe, protocol.MethodDispose, protocol.MethodGetConfig,
		protocol.MethodSetConfig, protocol.MethodStateGet, protocol.MethodStateSet, protocol.MethodHasPlugin,
		protocol.MethodHasCapability, protocol.MethodDispatchTool, protocol.MethodCLIStdin, protocol.MethodEmit,
		protocol.MethodFacade, protocol.MethodMiddlewareNext, protocol.MethodPlatformEvent, protocol.MethodPlatformStatus,
	} {
		if _, ok := methods[m]; !ok {
			t.Errorf("no row for %s", m)
		}
	}
	if len(methods) != 23 {
		t.Errorf("%d rows, want 23: add the new method to the list above", len(methods))
	}
}
