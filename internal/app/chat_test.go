package app

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/agent"
	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/tools"
)

func TestParseToolsets(t *testing.T) {
	web := &tools.Tool{Name: "fetch", Toolset: "web"}
	files := &tools.Tool{Name: "read_file", Toolset: "files"}
	tests := []struct {
		name       string
		flag       string
		fromConfig any
		all        bool // every tool enabled (no filter)
		web, files bool
	}{
		{name: "nothing", all: true},
		{name: "config list", fromConfig: []any{"web"}, web: true},
		{name: "flag wins over config", flag: "files", fromConfig: []any{"web"}, files: true},
		{name: "flag list with spaces", flag: " web , files ", web: true, files: true},
		{name: "all in the flag", flag: "web,all", all: true},
		{name: "all in the config", fromConfig: []any{"all"}, all: true},
		// A flag with no names is still the flag: the config's list is not used.
		{name: "empty flag names", flag: " , ", fromConfig: []any{"web"}, all: true},
		{name: "config as one string", fromConfig: "web, files", web: true, files: true},
		{name: "config neither list nor string", fromConfig: 3, all: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := parseToolsets(tt.flag, tt.fromConfig)
			if (c.names == nil) != tt.all {
				t.Fatalf("every toolset = %v, want %v", c.names == nil, tt.all)
			}
			if c.allows(web) != (tt.web || tt.all) || c.allows(files) != (tt.files || tt.all) {
				t.Errorf("web %v files %v, want %v %v", c.allows(web), c.allows(files), tt.web, tt.files)
			}
		})
	}
	if got := parseToolsets("web,nosuch,files", nil).unknown([]string{"files", "web"}); len(got) != 1 || got[0] != "nosuch" {
		t.Errorf("unknown = %q, want [nosuch]", got)
	}
}

func TestIntSetting(t *testing.T) {
	cfg := map[string]any{"agent": map[string]any{"max_turns": uint64(7), "f": 2.0, "s": "9"}}
	for _, tt := range []struct {
		path []string
		want int
	}{
		{[]string{"agent", "max_turns"}, 7},
		{[]string{"agent", "f"}, 2},
		{[]string{"agent", "s"}, 90},
		{[]string{"agent", "missing"}, 90},
		{[]string{"agent", "max_turns", "deeper"}, 90},
	} {
		if got := intSetting(cfg, tt.path, 90); got != tt.want {
			t.Errorf("intSetting(%v) = %d, want %d", tt.path, got, tt.want)
		}
	}
}

func TestChatTranscript(t *testing.T) {
	c := &Chat{sess: &agent.Session{ID: "s1"}, model: "m"}
	empty, err := json.Marshal(c.Transcript(nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	// Empty lists, not null, and an error that is null: scripts read these fields.
	if want := `{"session_id":"s1","model":"m","final":"","messages":[],"tool_calls":[],"error":null}`; string(empty) != want {
		t.Errorf("empty transcript\n got %s\nwant %s", empty, want)
	}

	turns := []*Turn{
		{Final: "first", Added: []llm.Message{{Role: "user", Content: "a"}},
			ToolCalls: []agent.ToolRecord{{CallID: "c1", Name: "echo", Args: "{}", Result: "r", Status: tools.StatusOK, Duration: 1500 * time.Millisecond}}},
		{Final: "second", Added: []llm.Message{{Role: "assistant", Content: "b"}}},
	}
	tr := c.Transcript(turns, errors.New("boom"))
	if tr.Final != "second" || len(tr.Messages) != 2 || tr.Error != "boom" {
		t.Errorf("transcript %+v: want the last turn's answer, every message and the error", tr)
	}
	if len(tr.ToolCalls) != 1 || tr.ToolCalls[0] != (ChatTranscriptCall{ID: "c1", Name: "echo", Arguments: "{}", Result: "r", Status: tools.StatusOK, DurationMS: 1500}) {
		t.Errorf("tool calls %+v", tr.ToolCalls)
	}
}
