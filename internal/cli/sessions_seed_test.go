package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/session"
)

// sessions-seed FILE writes the sessions in FILE (JSON) into $HERMES_HOME/state.db
// through the store, with a fixed clock: each message one minute after the one
// before, starting at the session's created_at.
//
//	{"sessions": [{"id": "20261130_010000_aaaaaa", "title": "", "model": "m", "source": "cli",
//	  "created_at": "2026-11-30T01:00:00Z", "ended": true,
//	  "messages": [{"role": "user", "content": "hi"}, ...],
//	  "tool_calls": [{"call_id": "c1", "name": "read_file", "args": "{}", "result": "...", "status": "ok"}]}]}
func init() {
	scriptCmds["sessions-seed"] = cmdSessionsSeed
}

type seedSession struct {
	session.Session
	Ended     bool               `json:"ended"`
	Messages  []llm.Message      `json:"messages"`
	ToolCalls []session.ToolCall `json:"tool_calls"`
}

func cmdSessionsSeed(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: sessions-seed FILE")
	}
	data, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	var seed struct {
		Sessions []seedSession `json:"sessions"`
	}
	if err := json.Unmarshal(data, &seed); err != nil {
		ts.Fatalf("sessions-seed %s: %v", args[0], err)
	}
	ctx := context.Background()
	s, err := session.Open(ctx, filepath.Join(ts.Getenv("HERMES_HOME"), session.FileName))
	ts.Check(err)
	defer s.Close()
	for _, x := range seed.Sessions {
		clock := x.CreatedAt
		s.SetClock(func() time.Time { return clock })
		id, err := s.NewSession(ctx, x.Session)
		ts.Check(err)
		for _, m := range x.Messages {
			clock = clock.Add(time.Minute)
			_, err := s.AppendMessage(ctx, id, m)
			ts.Check(err)
		}
		for _, tc := range x.ToolCalls {
			ts.Check(s.RecordToolCall(ctx, id, tc))
		}
		if x.Ended {
			clock = clock.Add(time.Minute)
			ts.Check(s.EndSession(ctx, id))
		}
	}
}
