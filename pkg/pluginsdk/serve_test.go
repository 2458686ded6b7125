package pluginsdk

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"

	"github.com/hermes-go/hermes/pkg/protocol"
)

// The host shows plugin log records of level "warning" and above on the terminal,
// using Python logging's names; slog's own names ("WARN") would hide warnings.
func TestLevelNameMatchesPythonLogging(t *testing.T) {
	for _, c := range []struct {
		level slog.Level
		want  string
	}{
		{slog.LevelDebug, "debug"},
		{slog.LevelDebug + 2, "debug"},
		{slog.LevelInfo, "info"},
		{slog.LevelWarn, "warning"},
		{slog.LevelError, "error"},
		{slog.LevelError + 4, "error"},
	} {
		if got := levelName(c.level); got != c.want {
			t.Errorf("levelName(%v) = %q, want %q", c.level, got, c.want)
		}
	}
}

// A panicking handler is reported as exception type "panic" with the panic's value
// as the message; the host shows "<type>: <message>", so the message must not
// repeat the type.
func TestPanickingHandlerIsOneError(t *testing.T) {
	s := &server{handles: map[string]any{}, done: make(chan struct{})}
	tool := s.addHandle(ToolFunc(func(context.Context, ToolCall) (string, error) { panic("kaboom") }))
	hook := s.addHandle(HookFunc(func(context.Context, map[string]any) (any, error) { panic(errors.New("hook kaboom")) }))
	for _, c := range []struct {
		method, params, want string
	}{
		{protocol.MethodToolCall, `{"handle":"` + tool + `","args":{}}`, "kaboom"},
		{protocol.MethodHookCall, `{"handle":"` + hook + `","hook":"post_tool_call","kwargs":{}}`, "hook kaboom"},
	} {
		t.Run(c.method, func(t *testing.T) {
			_, err := s.handle(context.Background(), c.method, json.RawMessage(c.params))
			var perr *protocol.Error
			if !errors.As(err, &perr) {
				t.Fatalf("got %v (%T), want a *protocol.Error", err, err)
			}
			var data protocol.HandlerErrorData
			_ = json.Unmarshal(perr.Data, &data)
			if shown := data.Type + ": " + perr.Message; shown != "panic: "+c.want {
				t.Errorf("shown as %q, want %q", shown, "panic: "+c.want)
			}
		})
	}
}
