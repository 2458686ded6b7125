package cli

import (
	"testing"

	"github.com/hermes-go/hermes/internal/app"
)

func TestNewCmdSessionsList(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		wantJSON  bool
		wantLimit int
		wantErr   string
		wantCode  int
	}{
		{name: "defaults", wantLimit: 50},
		{name: "json and limit", args: []string{"--json", "-n", "5"}, wantJSON: true, wantLimit: 5},
		{name: "no limit", args: []string{"--limit=0"}, wantLimit: 0},
		{name: "limit is a number", args: []string{"-n", "many"}, wantErr: "invalid argument", wantCode: app.ExitUsage},
		{name: "no arguments", args: []string{"x"}, wantErr: `unknown command "x"`, wantCode: app.ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *sessionsListOptions
			cmd := newCmdSessionsList(testFactory(), func(o *sessionsListOptions) error { got = o; return nil })
			code, err := parseVerb(t, cmd, tt.args)
			if !checkParseErr(t, err, code, tt.wantErr, tt.wantCode) {
				return
			}
			if got.IO == nil || got.Sessions == nil || got.Color == nil {
				t.Fatalf("IO, Sessions or Color not wired from the factory")
			}
			if got.JSON != tt.wantJSON || got.Limit != tt.wantLimit {
				t.Errorf("json %v limit %d, want %v %d", got.JSON, got.Limit, tt.wantJSON, tt.wantLimit)
			}
		})
	}
}

func TestNewCmdSessionsShow(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		want     sessionsShowOptions
		wantErr  string
		wantCode int
	}{
		{name: "id", args: []string{"2026"}, want: sessionsShowOptions{ID: "2026"}},
		{name: "json", args: []string{"--json", "2026"}, want: sessionsShowOptions{ID: "2026", JSON: true}},
		{name: "no id", wantErr: "accepts 1 arg(s), received 0", wantCode: app.ExitUsage},
		{name: "two ids", args: []string{"a", "b"}, wantErr: "accepts 1 arg(s), received 2", wantCode: app.ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *sessionsShowOptions
			cmd := newCmdSessionsShow(testFactory(), func(o *sessionsShowOptions) error { got = o; return nil })
			code, err := parseVerb(t, cmd, tt.args)
			if !checkParseErr(t, err, code, tt.wantErr, tt.wantCode) {
				return
			}
			if got.IO == nil || got.Sessions == nil {
				t.Fatalf("IO or Sessions not wired from the factory")
			}
			if got.ID != tt.want.ID || got.JSON != tt.want.JSON {
				t.Errorf("id %q json %v, want %q %v", got.ID, got.JSON, tt.want.ID, tt.want.JSON)
			}
		})
	}
}

func TestNewCmdSessionsSearch(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		wantTerm  string
		wantJSON  bool
		wantLimit int
		wantErr   string
		wantCode  int
	}{
		{name: "one word", args: []string{"hello"}, wantTerm: "hello", wantLimit: 50},
		{name: "words join", args: []string{"hello", "world", "-n", "3", "--json"}, wantTerm: "hello world", wantJSON: true, wantLimit: 3},
		{name: "no term", wantErr: "requires at least 1 arg(s)", wantCode: app.ExitUsage},
		{name: "blank term", args: []string{" ", ""}, wantErr: "search needs a word to look for", wantCode: app.ExitUsage},
		{name: "limit is a number", args: []string{"x", "--limit", "-"}, wantErr: "invalid argument", wantCode: app.ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *sessionsSearchOptions
			cmd := newCmdSessionsSearch(testFactory(), func(o *sessionsSearchOptions) error { got = o; return nil })
			code, err := parseVerb(t, cmd, tt.args)
			if !checkParseErr(t, err, code, tt.wantErr, tt.wantCode) {
				if got != nil {
					t.Errorf("the run was called despite the error")
				}
				return
			}
			if got.IO == nil || got.Sessions == nil || got.Color == nil {
				t.Fatalf("IO, Sessions or Color not wired from the factory")
			}
			if got.Term != tt.wantTerm || got.JSON != tt.wantJSON || got.Limit != tt.wantLimit {
				t.Errorf("term %q json %v limit %d, want %q %v %d", got.Term, got.JSON, got.Limit, tt.wantTerm, tt.wantJSON, tt.wantLimit)
			}
		})
	}
}

func TestNewCmdSessionsDelete(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantID   string
		wantJSON bool
		wantErr  string
		wantCode int
	}{
		{name: "id", args: []string{"20261130_010000_aaaaaa"}, wantID: "20261130_010000_aaaaaa"},
		{name: "json", args: []string{"x", "--json"}, wantID: "x", wantJSON: true},
		{name: "no id", wantErr: "accepts 1 arg(s), received 0", wantCode: app.ExitUsage},
		{name: "unknown flag", args: []string{"x", "--force"}, wantErr: "unknown flag: --force", wantCode: app.ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *sessionsDeleteOptions
			cmd := newCmdSessionsDelete(testFactory(), func(o *sessionsDeleteOptions) error { got = o; return nil })
			code, err := parseVerb(t, cmd, tt.args)
			if !checkParseErr(t, err, code, tt.wantErr, tt.wantCode) {
				return
			}
			if got.IO == nil || got.Sessions == nil {
				t.Fatalf("IO or Sessions not wired from the factory")
			}
			if got.ID != tt.wantID || got.JSON != tt.wantJSON {
				t.Errorf("id %q json %v, want %q %v", got.ID, got.JSON, tt.wantID, tt.wantJSON)
			}
		})
	}
}
