package agent_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hermes-go/hermes/internal/agent"
	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/llm/llmtest"
)

// A steering message reaches the model at the next tool boundary of the
// running turn, after the tool's result, and is stored where it was said;
// one offered when no boundary is left stays with the caller.
func TestSteeringJoinsTheRunningTurn(t *testing.T) {
	tests := []struct {
		name      string
		replies   []llmtest.Reply
		offered   [][]string // what take returns at each call
		wantUsers [][]string // user messages of each request
		wantTaken int
	}{
		{"one tool boundary", []llmtest.Reply{llmtest.ToolCalls(llmtest.Call("echo", map[string]any{"text": "x"})), llmtest.Text("done")},
			[][]string{{"use y", "and z"}}, [][]string{{"go"}, {"go", "use y\n\nand z"}}, 1},
		{"nothing arrived", []llmtest.Reply{llmtest.ToolCalls(llmtest.Call("echo", map[string]any{"text": "x"})), llmtest.Text("done")},
			nil, [][]string{{"go"}, {"go"}}, 1},
		{"no boundary", []llmtest.Reply{llmtest.Text("done")}, [][]string{{"late"}}, [][]string{{"go"}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Enqueue(tt.replies...)
			rec := &memRecorder{}
			ag := hookAgent(t, srv, rec, nil, llm.Config{}, nil)
			s := ag.NewSession(context.Background(), "s")
			taken := 0
			take := func() []string {
				defer func() { taken++ }()
				if taken < len(tt.offered) {
					return tt.offered[taken]
				}
				return nil
			}
			turn, err := ag.Run(agent.WithSteering(context.Background(), take), s, "go")
			if err != nil {
				t.Fatal(err)
			}
			if turn.Final != "done" {
				t.Errorf("final %q", turn.Final)
			}
			if taken != tt.wantTaken {
				t.Errorf("take called %d times, want %d", taken, tt.wantTaken)
			}
			reqs := srv.Requests()
			if len(reqs) != len(tt.wantUsers) {
				t.Fatalf("%d requests, want %d", len(reqs), len(tt.wantUsers))
			}
			for i, w := range tt.wantUsers {
				var got []string
				for _, m := range reqs[i].Messages {
					if m.Role == "user" {
						got = append(got, m.Content)
					}
				}
				if fmt.Sprint(got) != fmt.Sprint(w) {
					t.Errorf("request %d: user messages %q, want %q", i, got, w)
				}
			}
			var roles []string
			for _, m := range rec.msgs {
				roles = append(roles, m.Role)
			}
			if len(tt.offered) > 0 && tt.wantTaken > 0 && fmt.Sprint(roles) != "[system user assistant tool user assistant]" {
				t.Errorf("stored roles %v", roles)
			}
		})
	}
}
