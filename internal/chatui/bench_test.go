package chatui

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/hermes-go/hermes/internal/agent"
	"github.com/hermes-go/hermes/internal/chatui/editor"
	"github.com/hermes-go/hermes/internal/session"
)

// BenchmarkKeyPress is one key press on a chat with a 500-message transcript:
// Update then View, as the program repaints. It reports the p99.
//
//	go test ./internal/chatui -run '^$' -bench KeyPress -benchtime 5000x
func BenchmarkKeyPress(b *testing.B) {
	hist, err := editor.OpenHistory(filepath.Join(b.TempDir(), "history"), 1000)
	if err != nil {
		b.Fatal(err)
	}
	c := &stubChat{model: "fake-model", id: "s1", ctxLen: 128000}
	m := newModel(Options{Color: true}, hist)
	m.attach(context.Background(), c, nil)
	m.update(tea.WindowSizeMsg{Width: 100, Height: 40})
	// 250 exchanges: the user's message, a streamed markdown answer.
	for i := range 250 {
		m.update(editor.SubmitMsg{Text: fmt.Sprintf("question %d about `code`", i)})
		for _, d := range strings.SplitAfter(fmt.Sprintf("Answer %d with **bold** and a list:\n\n- one\n- two\n\nDone.", i), " ") {
			m.update(textMsg{d})
		}
		c.usage = append(c.usage, session.TurnUsage{PromptTokens: 1000 + i, CompletionTokens: 50})
		m.update(turnDoneMsg{turn: &agent.Turn{Streamed: true}, snap: takeSnapshot(context.Background(), c)})
		m.pending, m.printing = nil, false // the program printed them
	}
	// A turn streams while the user types the next message.
	m.update(editor.SubmitMsg{Text: "and now?"})
	m.update(textMsg{"A paragraph still streaming, with *emphasis* and more words "})
	m.queue = nil
	m.ed.SetValue("a follow-up question of a usual length, being typed")
	// Typing and erasing: the line stays the same length however long it runs.
	keys := []tea.KeyPressMsg{{Code: 'a', Text: "a"}, {Code: tea.KeyBackspace}}
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		_, _ = m.Update(keys[i%len(keys)])
		_ = m.View()
		times = append(times, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)*99/100].Microseconds()), "p99-µs")
}
