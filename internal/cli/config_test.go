package cli

import (
	"testing"

	"github.com/hermes-go/hermes/internal/app"
)

func TestNewCmdConfigGet(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantKey  string
		wantErr  string
		wantCode int
	}{
		{name: "key", args: []string{"plugins.enabled"}, wantKey: "plugins.enabled"},
		{name: "no key", wantErr: "accepts 1 arg(s), received 0", wantCode: app.ExitUsage},
		{name: "two keys", args: []string{"a", "b"}, wantErr: "accepts 1 arg(s), received 2", wantCode: app.ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *configGetOptions
			cmd := newCmdConfigGet(testFactory(), func(o *configGetOptions) error { got = o; return nil })
			code, err := parseVerb(t, cmd, tt.args)
			if !checkParseErr(t, err, code, tt.wantErr, tt.wantCode) {
				return
			}
			if got.IO == nil || got.Store == nil || got.WarnConfig == nil {
				t.Fatalf("IO, Store or WarnConfig not wired from the factory")
			}
			if got.Key != tt.wantKey {
				t.Errorf("key %q, want %q", got.Key, tt.wantKey)
			}
		})
	}
}

func TestNewCmdConfigSet(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		wantKey   string
		wantValue string
		wantErr   string
		wantCode  int
	}{
		{name: "key value", args: []string{"model.default", "gpt"}, wantKey: "model.default", wantValue: "gpt"},
		{name: "a negative value is not a flag", args: []string{"agent.max_turns", "-1"}, wantKey: "agent.max_turns", wantValue: "-1"},
		{name: "a dash dash before the value goes", args: []string{"agent.max_turns", "--", "-1"}, wantKey: "agent.max_turns", wantValue: "-1"},
		{name: "value as typed", args: []string{"k", " [a, b] "}, wantKey: "k", wantValue: " [a, b] "},
		{name: "no value", args: []string{"k"}, wantErr: "accepts 2 arg(s), received 1", wantCode: app.ExitUsage},
		{name: "too many", args: []string{"k", "v", "w"}, wantErr: "accepts 2 arg(s), received 3", wantCode: app.ExitUsage},
		// Not a usage error of cobra's kind: it says how to write the line instead.
		{name: "a flag after the value", args: []string{"k", "v", "--json"}, wantErr: `"--json" after VALUE is not read as a flag here`, wantCode: app.ExitFail},
		{name: "a flag before the key", args: []string{"--bogus", "k", "v"}, wantErr: "unknown flag: --bogus", wantCode: app.ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *configSetOptions
			cmd := newCmdConfigSet(testFactory(), func(o *configSetOptions) error { got = o; return nil })
			code, err := parseVerb(t, cmd, tt.args)
			if !checkParseErr(t, err, code, tt.wantErr, tt.wantCode) {
				return
			}
			if got.IO == nil || got.Store == nil {
				t.Fatalf("IO or Store not wired from the factory")
			}
			if got.Key != tt.wantKey || got.Value != tt.wantValue {
				t.Errorf("key %q value %q, want %q %q", got.Key, got.Value, tt.wantKey, tt.wantValue)
			}
		})
	}
}

func TestNewCmdConfigPath(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantErr  string
		wantCode int
	}{
		{name: "no arguments"},
		{name: "an argument", args: []string{"x"}, wantErr: `unknown command "x"`, wantCode: app.ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *configPathOptions
			cmd := newCmdConfigPath(testFactory(), func(o *configPathOptions) error { got = o; return nil })
			code, err := parseVerb(t, cmd, tt.args)
			if checkParseErr(t, err, code, tt.wantErr, tt.wantCode) && (got.IO == nil || got.Store == nil) {
				t.Fatalf("IO or Store not wired from the factory")
			}
		})
	}
}

func TestNewCmdConfigMerge(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantFrom string
		wantErr  string
		wantCode int
	}{
		{name: "from a file", args: []string{"--from", "settings.json"}, wantFrom: "settings.json"},
		{name: "from with equals", args: []string{"--from=/nix/store/x-settings.json"}, wantFrom: "/nix/store/x-settings.json"},
		{name: "no from", wantErr: "--from FILE is required", wantCode: app.ExitUsage},
		{name: "a positional file", args: []string{"settings.json"}, wantErr: `unknown command "settings.json"`, wantCode: app.ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *configMergeOptions
			cmd := newCmdConfigMerge(testFactory(), func(o *configMergeOptions) error { got = o; return nil })
			code, err := parseVerb(t, cmd, tt.args)
			if !checkParseErr(t, err, code, tt.wantErr, tt.wantCode) {
				return
			}
			if got.IO == nil || got.Store == nil {
				t.Fatalf("IO or Store not wired from the factory")
			}
			if got.From != tt.wantFrom {
				t.Errorf("from %q, want %q", got.From, tt.wantFrom)
			}
		})
	}
}
