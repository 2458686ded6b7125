package editor

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// benchEditor is an editor with a 500-entry history holding a 2,000-character
// value of 25 lines.
func benchEditor(b *testing.B) Model {
	b.Helper()
	h, err := OpenHistory(filepath.Join(b.TempDir(), "chat_history"), 500)
	if err != nil {
		b.Fatal(err)
	}
	for i := range 500 {
		if err := h.Add(fmt.Sprintf("history entry %d: run the tests of package %d and report\nwhat failed", i, i)); err != nil {
			b.Fatal(err)
		}
	}
	m := New(Options{History: h, Complete: SlashCompleter(commands), Prompt: "> ", Width: 100, Color: true})
	var v strings.Builder
	for i := range 25 {
		if i > 0 {
			v.WriteByte('\n')
		}
		line := fmt.Sprintf("line %02d of a long pasted message, with words that wrap and a few more ", i)
		v.WriteString(line + strings.Repeat("x", 79-len(line)))
	}
	v.WriteByte('.')
	m.SetValue(v.String())
	if n := len(m.Value()); n != 2000 {
		b.Fatalf("value of %d characters, want 2000", n)
	}
	return m
}

// cpuTime is the CPU time the process has used: on a shared machine it is
// the cost of a key, where wall time is also the other processes' load.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loop runs step b.N times and reports the CPU time per step beside ns/op.
func loop(b *testing.B, step func(i int)) {
	b.Helper()
	start := cpuTime()
	i := 0
	for b.Loop() {
		step(i)
		i++
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkKeyToView is a key press through Update and the View that repaints it.
func BenchmarkKeyToView(b *testing.B) {
	cases := []struct {
		name string
		keys []tea.Msg // cycled; each cycle leaves the value as it was
	}{
		{name: "type and delete", keys: in("x", kBackspace)},
		{name: "cursor left and right", keys: in(kLeft, kRight)},
		{name: "up and down inside the text", keys: in(kUp, kDown)},
		{name: "word motions", keys: in(alt('b'), alt('f'))},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			m := benchEditor(b)
			loop(b, func(i int) {
				m, _ = m.Update(c.keys[i%len(c.keys)])
				_ = m.View()
			})
		})
	}
	b.Run("type and delete in a 120-character message", func(b *testing.B) {
		m := benchEditor(b)
		m.SetValue(strings.Repeat("a short message ", 8)[:120])
		keys := in("x", kBackspace)
		loop(b, func(i int) {
			m, _ = m.Update(keys[i%len(keys)])
			_ = m.View()
		})
	})
	b.Run("history up at the first line", func(b *testing.B) {
		m := benchEditor(b)
		m.SetValue("")
		loop(b, func(int) {
			if m.hist == 0 {
				m.Reset()
			}
			m, _ = m.Update(kUp)
			_ = m.View()
		})
	})
	b.Run("reverse search typing", func(b *testing.B) {
		m := benchEditor(b)
		m, _ = run(m, in(ctrl('r')))
		keys := in("report", kBackspace, kBackspace, kBackspace, kBackspace, kBackspace, kBackspace)
		loop(b, func(i int) {
			m, _ = m.Update(keys[i%len(keys)])
			_ = m.View()
		})
	})
}
