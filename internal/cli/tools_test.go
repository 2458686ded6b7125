package cli

import (
	"reflect"
	"testing"

	"github.com/hermes-go/hermes/internal/app"
)

func TestNewCmdToolsList(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantJSON bool
		wantErr  string
		wantCode int
	}{
		{name: "table"},
		{name: "json", args: []string{"--json"}, wantJSON: true},
		{name: "no arguments", args: []string{"read_file"}, wantErr: `unknown command "read_file"`, wantCode: app.ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *toolsListOptions
			cmd := newCmdToolsList(testFactory(), func(o *toolsListOptions) error { got = o; return nil })
			code, err := parseVerb(t, cmd, tt.args)
			if !checkParseErr(t, err, code, tt.wantErr, tt.wantCode) {
				return
			}
			if got.IO == nil || got.WithHost == nil || got.Color == nil {
				t.Fatalf("IO, WithHost or Color not wired from the factory")
			}
			if got.JSON != tt.wantJSON {
				t.Errorf("json %v, want %v", got.JSON, tt.wantJSON)
			}
		})
	}
}

func TestNewCmdToolsCall(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantName string
		wantArgs map[string]any
		wantErr  string
		wantCode int
	}{
		{name: "no arguments is an empty object", args: []string{"read_file"}, wantName: "read_file", wantArgs: map[string]any{}},
		{
			name:     "integers stay exact",
			args:     []string{"echo", "--args", `{"text": "hi", "n": 9007199254740993, "xs": [1, 2]}`},
			wantName: "echo",
			wantArgs: map[string]any{"text": "hi", "n": int64(9007199254740993), "xs": []any{int64(1), int64(2)}},
		},
		{name: "trailing spaces", args: []string{"echo", "--args={}\n "}, wantName: "echo", wantArgs: map[string]any{}},
		{name: "no name", wantErr: "accepts 1 arg(s), received 0", wantCode: app.ExitUsage},
		{name: "two names", args: []string{"a", "b"}, wantErr: "accepts 1 arg(s), received 2", wantCode: app.ExitUsage},
		{name: "not an object", args: []string{"echo", "--args", "[1]"}, wantErr: "--args must be a JSON object", wantCode: app.ExitUsage},
		{name: "bad JSON", args: []string{"echo", "--args", "{nope}"}, wantErr: "invalid JSON at offset 2", wantCode: app.ExitUsage},
		{name: "ends early", args: []string{"echo", "--args", `{"a":`}, wantErr: "the JSON ends early", wantCode: app.ExitUsage},
		{name: "two objects", args: []string{"echo", "--args", "{} {}"}, wantErr: "unexpected data after the JSON object at offset 3", wantCode: app.ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *toolsCallOptions
			cmd := newCmdToolsCall(testFactory(), func(o *toolsCallOptions) error { got = o; return nil })
			code, err := parseVerb(t, cmd, tt.args)
			if !checkParseErr(t, err, code, tt.wantErr, tt.wantCode) {
				if got != nil {
					t.Errorf("the run was called despite the error")
				}
				return
			}
			if got.IO == nil || got.WithHost == nil {
				t.Fatalf("IO or WithHost not wired from the factory")
			}
			if got.Name != tt.wantName || !reflect.DeepEqual(got.Args, tt.wantArgs) {
				t.Errorf("name %q args %#v, want %q %#v", got.Name, got.Args, tt.wantName, tt.wantArgs)
			}
		})
	}
}
