package app

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/agent"
	"github.com/hermes-go/hermes/internal/redact"
)

// lineOut is the line mode's kind of output: Text and Progress only.
type lineOut struct{ got []string }

func (o *lineOut) Text(s string)     { o.got = append(o.got, "text "+s) }
func (o *lineOut) Progress(s string) { o.got = append(o.got, "progress "+s) }

// richOut takes every event.
type richOut struct{ lineOut }

func (o *richOut) ToolStart(e agent.ToolStartEvent) {
	o.got = append(o.got, fmt.Sprintf("start %s %s %s", e.CallID, e.Name, e.Args))
}
func (o *richOut) ToolEnd(e agent.ToolEndEvent) {
	o.got = append(o.got, fmt.Sprintf("end %s %s %s %s %v %s", e.CallID, e.Name, e.Result, e.Err, e.Blocked, e.Duration))
}
func (o *richOut) Reasoning(s string) { o.got = append(o.got, "reasoning "+s) }
func (o *richOut) Waiting(s string) (func(string), func()) {
	o.got = append(o.got, "waiting "+s)
	return func(s string) { o.got = append(o.got, "update "+s) }, func() { o.got = append(o.got, "done") }
}

// thinkingOut shows reasoning but not tool calls.
type thinkingOut struct{ lineOut }

func (o *thinkingOut) Reasoning(s string) { o.got = append(o.got, "reasoning "+s) }

// drive sends out every event the agent sends, each carrying the secret.
func drive(out agent.Output, secret string) {
	if w, ok := out.(agent.WaitDisplay); ok {
		update, done := w.Waiting("waiting for " + secret)
		update("retry " + secret)
		done()
	}
	if r, ok := out.(agent.ReasoningOutput); ok {
		r.Reasoning("thinking about " + secret)
	}
	obs, ok := out.(agent.ToolObserver)
	if !ok {
		out.Progress("⚙ terminal")
		return
	}
	obs.ToolStart(agent.ToolStartEvent{CallID: "c1", Name: "terminal", Args: `{"command":"echo ` + secret + `"}`})
	obs.ToolEnd(agent.ToolEndEvent{CallID: "c1", Name: "terminal", Result: "out " + secret, Err: "err " + secret, Blocked: true, Duration: time.Second})
}

// The chat's output wrapper passes the agent's structured events through with
// secrets masked, and only to an output that takes them: a line-mode output
// keeps the ⚙ Progress line (and gets no spinner events it cannot show).
func TestChatOutputPassesEventsRedacted(t *testing.T) {
	secret := "sk" + "-" + strings.Repeat("Zq7", 10)
	masked := redact.New(nil).String(secret)
	if masked == secret {
		t.Fatal("the redactor does not mask the test secret")
	}
	tests := []struct {
		name   string
		out    interface{ lines() []string }
		events bool // the wrapper is a ToolObserver
		want   []string
	}{
		{"line mode", &lineOut{}, false, []string{"progress ⚙ terminal"}},
		{"rich", &richOut{}, true, []string{
			"waiting waiting for " + masked, "update retry " + masked, "done",
			"reasoning thinking about " + masked,
			`start c1 terminal {"command":"echo ` + masked + `"}`,
			"end c1 terminal out " + masked + " err " + masked + " true 1s",
		}},
		{"reasoning only", &thinkingOut{}, true, []string{
			"progress retry " + masked, "reasoning thinking about " + masked, "progress ⚙ terminal",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &Factory{IO: &IOStreams{Err: &bytes.Buffer{}}}
			f.Redactor().Set(redact.New(nil))
			wrapped := chatOutput(tt.out.(ChatOutput), f)
			if _, ok := wrapped.(agent.ToolObserver); ok != tt.events {
				t.Fatalf("wrapper is a ToolObserver: %v, want %v", ok, tt.events)
			}
			drive(wrapped, secret)
			got := tt.out.lines()
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("output got\n%q\nwant\n%q", got, tt.want)
			}
			for _, l := range got {
				if strings.Contains(l, secret) {
					t.Errorf("secret reached the output: %q", l)
				}
			}
		})
	}
}

// On a terminal a plain output gets the wait spinner; an output that draws
// its own screen does not (the spinner would write over it).
func TestChatOutputSpinnerOnlyForPlainOutputs(t *testing.T) {
	f := &Factory{IO: &IOStreams{Err: &bytes.Buffer{}, ErrTTY: true}}
	if _, ok := chatOutput(&lineOut{}, f).(*spinnerOutput); !ok {
		t.Error("a plain output on a terminal got no spinner")
	}
	if _, ok := chatOutput(&richOut{}, f).(*spinnerOutput); ok {
		t.Error("an output that draws its own events got the stderr spinner")
	}
}

func (o *lineOut) lines() []string { return o.got }
