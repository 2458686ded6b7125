package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/session"
)

func TestGrouped(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 128000: "128,000", 1234567: "1,234,567", -4500: "-4,500"} {
		if got := grouped(n); got != want {
			t.Errorf("grouped(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestWriteUsage(t *testing.T) {
	price := func(v float64) *float64 { return &v }
	tests := []struct {
		name  string
		turns []session.TurnUsage
		ctx   int
		want  []string
	}{
		{"none", nil, 0, []string{"No usage yet"}},
		{"unpriced", []session.TurnUsage{{Model: "m", APICalls: 2, PromptTokens: 1200, CompletionTokens: 30, TotalTokens: 1230}}, 0,
			[]string{"Last turn:   1,200 in · 30 out · 1,230 tokens (2 model calls) · cost unknown (set model.pricing.m in config.yaml)",
				"Session:     1,200 in · 30 out · 1,230 tokens (1 turn) · cost unknown"}},
		{"priced, with the window", []session.TurnUsage{
			{Model: "m", APICalls: 1, PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110},
			{Model: "m", APICalls: 1, PromptTokens: 200, CompletionTokens: 20, TotalTokens: 220, CostUSD: price(0.0125)}}, 1000,
			[]string{"Last turn:   200 in · 20 out · 220 tokens (1 model call) · $0.0125",
				"Session:     300 in · 30 out · 330 tokens (2 turns) · $0.0125 (1 turn without a price)",
				"Context:     200 of 1,000 tokens (20.0%)"}},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		writeUsage(&b, tt.turns, tt.ctx)
		for _, w := range tt.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: output lacks %q:\n%s", tt.name, w, b.String())
			}
		}
	}
}
