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

// chatWith is a model after n messages (n/2 exchanges with streamed
// markdown answers), its printed lines handed to the terminal.
func chatWith(b *testing.B, n int) *Model {
	hist, err := editor.OpenHistory(filepath.Join(b.TempDir(), "history"), 1000)
	if err != nil {
		b.Fatal(err)
	}
	c := &stubChat{model: "fake-model", id: "s1", ctxLen: 128000}
	m := newModel(Options{Color: true}, hist)
	m.attach(context.Background(), c, nil)
	m.update(tea.WindowSizeMsg{Width: 100, Height: 40})
	for i := range n / 2 {
		m.update(editor.SubmitMsg{Text: fmt.Sprintf("question %d about `code`", i)})
		for _, d := range strings.SplitAfter(fmt.Sprintf("Answer %d with **bold** and a list:\n\n- one\n- two\n\nDone.", i), " ") {
			m.update(textMsg{d})
		}
		c.usage = append(c.usage, session.TurnUsage{PromptTokens: 1000 + i, CompletionTokens: 50})
		m.update(turnDoneMsg{turn: &agent.Turn{Streamed: true}, snap: takeSnapshot(context.Background(), c)})
		m.pending, m.printing = nil, false // the program printed them
	}
	return m
}

// benchAnswer is a ~20 KB markdown answer (prose, lists, code, a table).
func benchAnswer() string {
	var b strings.Builder
	prose := "The function reads the file, splits it into **records** and checks each one against the `schema`; " +
		"a record that fails is reported with its line number, so the caller can fix it and run again. "
	for sec := 0; b.Len() < 20_000; sec++ {
		fmt.Fprintf(&b, "## Step %d\n\n%s%s\n\n", sec+1, prose, prose)
		for i := range 5 {
			fmt.Fprintf(&b, "%d. item %d: *look* at `field_%d`\n", i+1, i, i)
		}
		b.WriteString("\n```go\n")
		for i := range 12 {
			fmt.Fprintf(&b, "if err := check(rec[%d]); err != nil {\n\treturn err\n}\n", i)
		}
		b.WriteString("```\n\n| field | type |\n|---|---|\n| id | int |\n\n")
	}
	return b.String()
}

// BenchmarkStreamDeltaChat streams a 20 KB answer in 2,000 deltas through
// the chat (Update with the delta, then View, as the program repaints) with
// an empty transcript and with 500 messages, and reports the p90 of each
// and their ratio. The transcript is in the terminal's scrollback, so the
// ratio stays near 1.
//
//	go test ./internal/chatui -run '^$' -bench StreamDeltaChat -benchtime 3x
func BenchmarkStreamDeltaChat(b *testing.B) {
	md := benchAnswer()
	pieces := make([]string, 0, 2000)
	for i := range 2000 {
		pieces = append(pieces, md[i*len(md)/2000:(i+1)*len(md)/2000])
	}
	models := map[int]*Model{0: chatWith(b, 0), 500: chatWith(b, 500)}
	times := map[int][]time.Duration{}
	run := func(n int) {
		m := models[n]
		m.update(editor.SubmitMsg{Text: "explain"})
		for _, p := range pieces {
			start := time.Now()
			_, _ = m.Update(textMsg{p})
			_ = m.View()
			times[n] = append(times[n], time.Since(start))
			m.pending, m.printing = nil, false
		}
		m.update(turnDoneMsg{turn: &agent.Turn{Streamed: true}, snap: m.snap})
		m.pending, m.printing = nil, false
	}
	run(0) // warm: the renderer built, the lexers compiled
	run(500)
	times = map[int][]time.Duration{}
	b.ResetTimer()
	for b.Loop() {
		run(0)
		run(500)
	}
	b.StopTimer()
	p90 := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)*90/100].Nanoseconds()) / 1e3
	}
	e, f := p90(times[0]), p90(times[500])
	b.ReportMetric(e, "p90-empty-µs")
	b.ReportMetric(f, "p90-500msgs-µs")
	b.ReportMetric(f/e, "p90-ratio")
}

// BenchmarkKeyPress is one key press on a chat with a 500-message transcript:
// Update then View, as the program repaints. It reports the p99.
//
//	go test ./internal/chatui -run '^$' -bench KeyPress -benchtime 5000x
func BenchmarkKeyPress(b *testing.B) {
	m := chatWith(b, 500)
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
