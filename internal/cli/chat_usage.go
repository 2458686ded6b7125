package cli

import (
	"fmt"
	"io"
	"strconv"

	"github.com/hermes-go/hermes/internal/session"
)

// writeUsage prints the token usage of a session's turns: the last turn, the
// session's totals, and (contextLen > 0) the last prompt against the window.
func writeUsage(w io.Writer, turns []session.TurnUsage, contextLen int) {
	if len(turns) == 0 {
		fmt.Fprintln(w, "No usage yet: the model has not answered in this session.")
		return
	}
	last := turns[len(turns)-1]
	calls := "1 model call"
	if last.APICalls != 1 {
		calls = fmt.Sprintf("%d model calls", last.APICalls)
	}
	sayf(w, "Last turn:   %s (%s) · %s\n", tokens(last.PromptTokens, last.CompletionTokens, last.TotalTokens), calls, costText(last.CostUSD, last.Model))
	var in, out, total int
	var cost float64
	unpriced := 0
	for _, u := range turns {
		in, out, total = in+u.PromptTokens, out+u.CompletionTokens, total+u.TotalTokens
		if u.CostUSD != nil {
			cost += *u.CostUSD
		} else {
			unpriced++
		}
	}
	sessionCost := fmt.Sprintf("$%.4f", cost)
	switch {
	case unpriced == len(turns):
		sessionCost = costText(nil, last.Model)
	case unpriced > 0:
		sessionCost += fmt.Sprintf(" (%s without a price)", turnsText(unpriced))
	}
	sayf(w, "Session:     %s (%s) · %s\n", tokens(in, out, total), turnsText(len(turns)), sessionCost)
	if contextLen > 0 {
		fmt.Fprintf(w, "Context:     %s of %s tokens (%.1f%%)\n", grouped(last.PromptTokens), grouped(contextLen), 100*float64(last.PromptTokens)/float64(contextLen))
	}
}

func turnsText(n int) string {
	if n == 1 {
		return "1 turn"
	}
	return fmt.Sprintf("%d turns", n)
}

func tokens(in, out, total int) string {
	return fmt.Sprintf("%s in · %s out · %s tokens", grouped(in), grouped(out), grouped(total))
}

func costText(cost *float64, model string) string {
	if cost == nil {
		return fmt.Sprintf("cost unknown (set model.pricing.%s in config.yaml)", model)
	}
	return fmt.Sprintf("$%.4f", *cost)
}

// grouped writes n with thousands separators: 128000 → 128,000.
func grouped(n int) string {
	s := strconv.Itoa(n)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}
