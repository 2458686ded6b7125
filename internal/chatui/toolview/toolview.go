package toolview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/hermes-go/hermes/internal/termsafe"
)

// Call is one tool call as the chat shows it: started (Done false) or ended.
type Call struct {
	ID, Name, Args string
	Done           bool
	Duration       time.Duration // the call's length once Done; the time so far before, if known
	Result, Err    string
	Blocked        bool // a guard, a hook or the approval refused it
}

// Header is the call's line: a spinner frame while it runs, then ✓, ✗ or ⊘
// (blocked); the tool's name; its arguments in brief (the command of a
// terminal call, the path of a file tool, key=value pairs otherwise), cut
// with … to fit width; how long it took.
func Header(c Call, width int, spinnerFrame string, color bool) string {
	st := newStyles(color)
	icon, iconStyle := termsafe.Line(spinnerFrame), st.spinner
	var o outcome
	if c.Done {
		o = readResult(c.Result)
	}
	switch {
	case !c.Done && icon == "":
		icon = "•"
	case !c.Done:
	case c.Blocked || o.blocked:
		icon, iconStyle = "⊘", st.blocked
	case c.Err != "" || o.err != "" || o.exit != 0:
		// A command that exited non-zero or a tool that answered with an
		// error failed, though the pipeline saw a result.
		icon, iconStyle = "✗", st.fail
	default:
		icon, iconStyle = "✓", st.ok
	}
	name := termsafe.Line(c.Name)
	dur := ""
	if c.Done || c.Duration > 0 {
		dur = " · " + FormatDuration(c.Duration)
	}
	args := compactArgs(c.Name, c.Args)
	room := width - ansi.StringWidth(icon) - 1 - ansi.StringWidth(name) - ansi.StringWidth(dur) - 1
	if width > 0 && room < 4 {
		args = "" // no room for arguments worth reading
	} else if width > 0 {
		args = fit(args, room)
	}
	if args != "" {
		args = " " + args
	}
	plain := icon + " " + name + args + dur
	if width > 0 && ansi.StringWidth(plain) > width {
		// Even the name does not fit: one cut line, the icon kept.
		rest := width - ansi.StringWidth(icon)
		if rest < 1 {
			return render(iconStyle, color, fit(icon, width))
		}
		return render(iconStyle, color, icon) + fit(plain[len(icon):], rest)
	}
	return render(iconStyle, color, icon) + " " + render(st.name, color, name) + args + render(st.dim, color, dur)
}

// FormatDuration is a call's length as the header shows it: 0.4s, 12.0s,
// 2m03s, 1h05m.
func FormatDuration(d time.Duration) string {
	switch {
	case d < 0:
		d = 0
	case d >= time.Hour:
		d = d.Round(time.Minute)
		return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	if r := d.Round(100 * time.Millisecond); r < time.Minute {
		return fmt.Sprintf("%.1fs", r.Seconds())
	}
	d = d.Round(time.Second)
	return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
}

// outcome is what a tool's result says, read from the shapes the built-in
// tools answer with (a terminal's output and exit code, a read's content, an
// error object), or the result as it is.
type outcome struct {
	text    string // what the tool produced
	err     string // the error it reported
	exit    int    // a terminal's exit code
	blocked bool
	json    bool // text is JSON no known shape matched
}

func readResult(result string) outcome {
	fs, ok := fields(result)
	if !ok {
		return outcome{text: result}
	}
	var o outcome
	known := false
	for _, f := range fs {
		switch f.key {
		case "output", "content":
			if s, ok := stringField(fs, f.key); ok {
				o.text, known = s, true
			}
		case "error":
			if s, ok := stringField(fs, "error"); ok {
				o.err, known = s, true
			}
		case "exit_code":
			var n json.Number
			if json.Unmarshal(f.val, &n) == nil {
				if i, err := n.Int64(); err == nil {
					o.exit = int(i)
				}
			}
		case "status":
			s, _ := stringField(fs, "status")
			o.blocked = s == "blocked"
		}
	}
	if !known {
		var b bytes.Buffer
		if json.Indent(&b, []byte(result), "", "  ") == nil {
			return outcome{text: b.String(), json: true}
		}
		return outcome{text: result}
	}
	return o
}

// Summary is one line about the call's result: the error (red), why it was
// blocked, or the first line of what it produced, with the count of lines
// and the size when there is more; "" while it runs.
func Summary(c Call, width int, color bool) string {
	if !c.Done {
		return ""
	}
	st := newStyles(color)
	o := readResult(c.Result)
	switch {
	case c.Blocked || o.blocked:
		why := oneLine(c.Err)
		if why == "" {
			why = oneLine(o.err)
		}
		return render(st.blocked, color, fit("blocked: "+why, width))
	case c.Err != "":
		return render(st.fail, color, fit(oneLine(c.Err), width))
	case o.err != "":
		return render(st.fail, color, fit(oneLine(o.err), width))
	}
	prefix := ""
	if o.exit != 0 {
		prefix = fmt.Sprintf("exit %d · ", o.exit)
	}
	text := strings.TrimRight(strings.ReplaceAll(o.text, "\r\n", "\n"), "\n")
	if o.json {
		fs, _ := fields(c.Result)
		text = pairs(fs)
	}
	if strings.TrimSpace(text) == "" {
		line := prefix + "no output"
		if o.exit != 0 {
			return render(st.fail, color, fit(line, width))
		}
		return render(st.dim, color, fit(line, width))
	}
	n := strings.Count(text, "\n") + 1
	var more []string
	if n > 1 {
		more = append(more, fmt.Sprintf("%d lines", n))
	}
	if len(text) >= 1024 {
		more = append(more, humanSize(len(text)))
	}
	suffix := ""
	if len(more) > 0 {
		suffix = " (" + strings.Join(more, ", ") + ")"
	}
	first := prefix + oneLine(text)
	room := width - ansi.StringWidth(suffix)
	if width > 0 && room < 8 {
		return fit(first+suffix, width)
	}
	line := fit(first, room)
	if o.exit != 0 {
		return render(st.fail, color, line) + render(st.dim, color, suffix)
	}
	return line + render(st.dim, color, suffix)
}

// Expanded is the whole result, wrapped at width: the error first (red),
// then what the tool produced (a terminal's output, a read's content,
// other JSON indented), then a non-zero exit code.
func Expanded(c Call, width int, color bool) string {
	st := newStyles(color)
	o := readResult(c.Result)
	var parts []string
	errText := c.Err
	if errText == "" {
		errText = o.err
	}
	if errText != "" {
		label := "error: "
		if c.Blocked || o.blocked {
			label = "blocked: "
		}
		parts = append(parts, styleLines(st.fail, color, wrapText(label+errText, width)))
		if c.Blocked || o.blocked {
			parts[0] = styleLines(st.blocked, color, wrapText(label+errText, width))
		}
	}
	if text := strings.TrimRight(o.text, "\r\n"); text != "" && !(text == errText && !o.json) {
		parts = append(parts, wrapText(text, width))
	}
	if o.exit != 0 && !c.Blocked && !o.blocked { // a refused command never ran
		parts = append(parts, render(st.dim, color, fit(fmt.Sprintf("exit code %d", o.exit), width)))
	}
	if len(parts) == 0 && c.Done {
		parts = append(parts, render(st.dim, color, fit("no output", width)))
	}
	return strings.Join(parts, "\n")
}

// wrapText sanitises s as a block of lines (tabs expanded, CRLF as LF) and
// wraps it at width columns, breaking words longer than a line.
func wrapText(s string, width int) string {
	s = termsafe.Text(expandTabs(strings.ReplaceAll(s, "\r\n", "\n")))
	if width < 1 {
		return s
	}
	// Hardwrap after: Wrap lets a word ending in a hyphen overhang by one.
	lines := strings.Split(ansi.Hardwrap(ansi.Wrap(s, width, ""), width, true), "\n")
	for i, l := range lines {
		if ansi.StringWidth(l) > width { // a wide character in a narrower line: nothing can wrap it
			lines[i] = ansi.Truncate(l, width, "…")
		}
	}
	return strings.Join(lines, "\n")
}

// styleLines styles each line on its own, so a style never spans a newline
// (a terminal's line editor or a resize would smear it).
func styleLines(st lipgloss.Style, color bool, s string) string {
	if !color {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = render(st, color, l)
	}
	return strings.Join(lines, "\n")
}

// oneLine is the first line of s, sanitised, tabs expanded.
func oneLine(s string) string { return termsafe.Line(expandTabs(firstLine(s))) }

func firstLine(s string) string {
	s = strings.TrimLeft(s, "\r\n")
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSuffix(s, "\r")
}

func humanSize(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
