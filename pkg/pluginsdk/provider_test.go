package pluginsdk

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestServeModelProvider(t *testing.T) {
	full := &ProviderProfile{
		Name: "p",
		PrepareMessages: func(_ context.Context, msgs []map[string]any) ([]map[string]any, error) {
			return append(msgs, map[string]any{"role": "user", "content": "added"}), nil
		},
		BuildExtraBody: func(_ context.Context, sid, model string) (map[string]any, error) {
			return map[string]any{"sid": sid, "model": model}, nil
		},
		FetchModels: func(_ context.Context, key, base string, timeout time.Duration) ([]string, error) {
			return []string{key, base, timeout.String()}, nil
		},
	}
	bare := &ProviderProfile{Name: "bare"}
	tests := []struct {
		name    string
		p       *ProviderProfile
		method  string
		kwargs  map[string]any
		want    any
		wantErr string
	}{
		{"prepare_messages", full, "prepare_messages", map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}},
			map[string]any{"messages": []map[string]any{{"role": "user", "content": "hi"}, {"role": "user", "content": "added"}}}, ""},
		{"build_extra_body", full, "build_extra_body", map[string]any{"session_id": "s1", "model": "m"}, map[string]any{"sid": "s1", "model": "m"}, ""},
		{"fetch_models with the default timeout", full, "fetch_models", map[string]any{"api_key": "k", "base_url": "u"}, []string{"k", "u", "8s"}, ""},
		{"a hook not set", bare, "prepare_messages", nil, nil, "does not set prepare_messages"},
		{"not a hook", full, "get_hostname", nil, nil, "not one the host calls"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ServeModelProvider(context.Background(), tc.p, tc.method, tc.kwargs)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v, %v; want %#v", got, err, tc.want)
			}
		})
	}
	if h := full.Hooks(); !reflect.DeepEqual(h, []string{"prepare_messages", "build_extra_body", "fetch_models"}) {
		t.Errorf("Hooks() = %v", h)
	}
	if d := bare.Details(); len(d["hooks"].([]any)) != 0 {
		t.Errorf("a profile without hooks announces %v", d["hooks"])
	}
}

type echoEngine struct {
	ContextEngineBase
	got CompressOptions
}

func (e *echoEngine) Name() string { return "echo" }
func (e *echoEngine) ShouldCompress(_ context.Context, n int) (bool, error) {
	return n > 10, nil
}
func (e *echoEngine) Compress(_ context.Context, msgs []map[string]any, o CompressOptions) ([]map[string]any, error) {
	e.got = o
	if len(msgs) == 0 {
		return []map[string]any{{"content": "no role"}}, nil
	}
	return msgs[:1], nil
}

func TestServeContextEngine(t *testing.T) {
	e := &echoEngine{}
	ctx := context.Background()
	if due, err := ServeContextEngine(ctx, e, "should_compress", map[string]any{"prompt_tokens": 11.0}); err != nil || due != true {
		t.Errorf("should_compress(11) = %v, %v", due, err)
	}
	got, err := ServeContextEngine(ctx, e, "compress", map[string]any{"messages": []any{map[string]any{"role": "system", "content": "s"},
		map[string]any{"role": "user", "content": "u"}}, "focus_topic": "f", "force": true, "current_tokens": 42.0})
	if want := map[string]any{"messages": []map[string]any{{"role": "system", "content": "s"}}}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("compress = %#v, %v", got, err)
	}
	if e.got != (CompressOptions{CurrentTokens: 42, FocusTopic: "f", Force: true}) {
		t.Errorf("compress options %+v", e.got)
	}
	if _, err := ServeContextEngine(ctx, e, "compress", map[string]any{}); err == nil || !strings.Contains(err.Error(), "without a role") {
		t.Errorf("a message without a role: err = %v", err)
	}
	if st, err := ServeContextEngine(ctx, e, "get_status", nil); err != nil || !reflect.DeepEqual(st, map[string]any{}) {
		t.Errorf("get_status = %v, %v", st, err)
	}
	if _, err := ServeContextEngine(ctx, e, "select_context", nil); err == nil {
		t.Error("an unknown method was served")
	}
}
