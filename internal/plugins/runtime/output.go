package runtime

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/hermes-go/hermes/pkg/protocol"
)

// A plugin's stdout and stderr: drained into tagged lines for the sink (or, while
// one of its CLI commands runs, passed through untagged), each line bounded,
// the last ones kept for the message when the plugin dies.

// SetPassthrough sends the plugin's stdout/stderr to w/errW untagged (nil restores
// tagged logging). Plugin CLI commands use it so their output is the command's output.
func (p *Process) SetPassthrough(w, errW io.Writer) {
	p.passMu.Lock()
	p.passthrough, p.passErr = w, errW
	p.passMu.Unlock()
}

// WaitOutput waits until both output streams reached EOF (the process and anything it
// spawned closed them) or ctx ends.
func (p *Process) WaitOutput(ctx context.Context) {
	select {
	case <-p.drained:
	case <-ctx.Done():
	}
}

func (p *Process) drain(r *os.File, stream string) {
	defer p.drains.Done()
	defer r.Close()
	br := bufio.NewReaderSize(r, 32<<10)
	lc := lineCollector{max: maxOutputLine}
	for {
		chunk, err := br.ReadSlice('\n')
		full := err == nil // chunk ends with its line break
		if w := p.passWriter(stream); w != nil && lc.empty() {
			// A CLI command's own output: passed on byte for byte (a long line, binary
			// data, \r\n, no final newline), so `hermes <command> > file` is exact.
			p.pass(w, stream, chunk, full)
		} else if line, ok := lc.add(chunk, full); ok {
			p.emit(stream, line)
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			if line, ok := lc.flush(); ok {
				p.emit(stream, line)
			}
			return
		}
	}
}

// lineCollector joins the chunks of one output line for emit. A line longer than
// max is cut and the rest discarded as it streams by, so a plugin flooding one
// giant line cannot exhaust memory.
type lineCollector struct {
	max  int
	line []byte
	cut  bool
}

func (c *lineCollector) empty() bool { return len(c.line) == 0 && !c.cut }

// add takes the next chunk; full says it ends the line, which is then returned.
func (c *lineCollector) add(chunk []byte, full bool) (string, bool) {
	if room := c.max - len(c.line); len(chunk) > room {
		c.line, c.cut = append(c.line, chunk[:max(room, 0)]...), true
	} else {
		c.line = append(c.line, chunk...)
	}
	if !full {
		return "", false
	}
	return c.flush()
}

// flush returns the line collected so far (without its line break, marked when
// cut), if there is one.
func (c *lineCollector) flush() (string, bool) {
	if c.empty() {
		return "", false
	}
	s := strings.TrimRight(string(c.line), "\r\n")
	if c.cut {
		s += " …[line cut]"
	}
	c.line, c.cut = c.line[:0], false
	return s, true
}

func (p *Process) passWriter(stream string) io.Writer {
	p.passMu.Lock()
	defer p.passMu.Unlock()
	if stream == "stderr" {
		return p.passErr
	}
	return p.passthrough
}

// pass writes a chunk of a CLI command's output as it is; a whole line ending in
// the prompt mark is the prompt of an input(), shown without its line break. Whole
// stderr lines also go to the tail kept for error messages.
func (p *Process) pass(w io.Writer, stream string, chunk []byte, full bool) {
	if full {
		text := strings.TrimRight(string(chunk), "\r\n")
		if prompt, ok := strings.CutSuffix(text, protocol.PromptMark); ok {
			io.WriteString(w, prompt)
			return
		}
		if stream == "stderr" {
			p.keepTail(text)
		}
	}
	_, _ = w.Write(chunk)
}

func (p *Process) keepTail(line string) {
	p.tailMu.Lock()
	p.tail = append(p.tail, line)
	if len(p.tail) > 20 {
		p.tail = p.tail[len(p.tail)-20:]
	}
	p.tailMu.Unlock()
}

func (p *Process) emit(stream, line string) {
	p.passMu.Lock()
	w := p.passthrough
	if stream == "stderr" {
		w = p.passErr
	}
	p.passMu.Unlock()
	if stream == "stderr" {
		p.keepTail(line)
	}
	prompt, isPrompt := strings.CutSuffix(line, protocol.PromptMark)
	if w != nil {
		if isPrompt {
			fmt.Fprint(w, prompt) // the answer follows on the same line
			return
		}
		fmt.Fprintln(w, line)
		return
	}
	if isPrompt {
		line = prompt
	}
	p.report(stream, line)
}

func (p *Process) report(stream, line string) {
	if p.opts.Sink != nil {
		p.opts.Sink(p.id, stream, line)
	}
}
