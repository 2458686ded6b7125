package scan

import (
	"bufio"
	"bytes"
	"context"
	_ "embed" // the analysis script
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Scanner v2, part 1 and 2: what the plugin's Python does, not only how it is spelled.
//
// pyscan.py (embedded, stdlib only) runs once per scanned plugin with the configured
// interpreter's own ast module. It never imports the plugin: the sources travel on
// stdin (length-framed fields, no JSON), sent while the line scan still runs so the
// parse uses the second core. It folds constants (concatenation, join, %, format, f-strings,
// chr/ord maps, base64/32/16, hex, zlib with a ratio cap, rot13), resolves imports
// and aliases (getattr(__import__("o"+"s"), "sys"+"tem")), and follows taint from
// secret sources to sinks across the plugin's own modules. Its findings join the
// line scan's; the strings it decoded are scanned again here with the line rules
// (and command strings with the shell analyser).
//
// Sandbox: -I -S -B (no site, no user paths, no environment, no bytecode), an empty
// environment, an audit hook in the script that refuses any file, socket, process
// or import once it has started, RLIMIT_AS and RLIMIT_CPU set by the script, and a
// wall-clock cap here (the process is killed).

//go:embed pyscan.py
var pyScript string

const (
	pyMaxFile = 1 << 20 // a bigger .py file is left to the line rules (oversized_file says so)
	// pyMaxTotal bounds the Python sent to the analysis per plugin: parse and analysis
	// cost ~1.5 s per MB of dense code here (docs/PERFORMANCE.md), so 4 MB stays well
	// inside pyTimeout while covering any plugin under upstream's 10 MB bundle limit
	// that is not mostly data.
	pyMaxTotal = 4 << 20
	pyMemLimit = 768 << 20 // the analysis process's address space
)

// pyTimeout is the analysis's wall-clock cap (a variable for tests).
var pyTimeout = 20 * time.Second

// Rule ids of the Python analysis (documented in docs/DESIGN.md).
const (
	idPySourceToNetwork = "py_source_to_network"
	idPyUnavailable     = "py_analysis_unavailable"
	idPyFailed          = "py_analysis_failed"
)

type pyFinding struct {
	ID    string   `json:"id"`
	Sev   string   `json:"sev"`
	Cat   string   `json:"cat"`
	File  string   `json:"file"`
	Line  int      `json:"line"`
	Match string   `json:"match"`
	Desc  string   `json:"desc"`
	Chain []string `json:"chain"`
}

type pyString struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Text string `json:"text"`
	How  string `json:"how"`
	Kind string `json:"kind"` // decoded | exec | command
}

// pyData is a line whose string literals (byte columns [from, to) of Text, quotes
// included) only ever serve matching: a guard's deny-list (pyscan.py "deny-lists").
type pyData struct {
	File string   `json:"file"`
	Line int      `json:"line"`
	Text string   `json:"text"`
	Cols [][2]int `json:"cols"`
}

type pyOutput struct {
	Findings []pyFinding `json:"findings"`
	Strings  []pyString  `json:"strings"`
	Notes    []pyFinding `json:"notes"`
	Data     []pyData    `json:"data"`
}

// pyRun is one analysis process: started before the line scan, fed as files are read.
type pyRun struct {
	cmd    *exec.Cmd
	ctx    context.Context
	cancel context.CancelFunc
	stdin  io.WriteCloser
	w      *bufio.Writer
	out    bytes.Buffer
	errOut bytes.Buffer

	mu      sync.Mutex
	sent    int64
	skipped []string
	lossy   map[string]bool // files sent with invalid UTF-8 replaced (columns would not match)
	data    []pyData
	werr    error
	startE  error
	pyc     string // the cached bytecode this run executes ("" = compiled from source)
}

// startPython starts the analysis process for a plugin whose files include Python.
func startPython(ctx context.Context, python string, declared []string) *pyRun {
	r := &pyRun{}
	path, err := exec.LookPath(python)
	if err != nil {
		r.startE = fmt.Errorf("python interpreter %q not found: install Python 3 or set plugins.python in config.yaml", python)
		return r
	}
	cctx, cancel := context.WithTimeout(ctx, pyTimeout)
	r.ctx, r.cancel = cctx, cancel
	var args []string
	args, r.pyc = pyArgs(path)
	r.cmd = exec.CommandContext(cctx, path, args...)
	r.cmd.Env = []string{"LC_ALL=C.UTF-8", "PYTHONHASHSEED=0"}
	r.cmd.Dir = os.TempDir()
	r.cmd.Stdout, r.cmd.Stderr = &r.out, &limitedBuffer{b: &r.errOut, max: 4 << 10}
	r.cmd.WaitDelay = time.Second
	r.stdin, err = r.cmd.StdinPipe()
	if err == nil {
		err = r.cmd.Start()
	}
	if err != nil {
		cancel()
		r.startE = fmt.Errorf("start %s: %w", path, err)
		r.cmd = nil
		return r
	}
	r.w = bufio.NewWriterSize(r.stdin, 64<<10)
	r.send(strconv.Itoa(len(declared)))
	for _, name := range declared {
		r.send(perByteUTF8(name))
	}
	return r
}

// send writes one input field as pyscan.py's field() reads it: the byte length on a
// line, then the bytes (no JSON: see the script's head comment).
func (r *pyRun) send(s string) {
	if r.werr != nil {
		return
	}
	var n [24]byte
	_, err := r.w.Write(append(strconv.AppendInt(n[:0], int64(len(s)), 10), '\n'))
	if err == nil {
		_, err = r.w.WriteString(s)
	}
	r.werr = err
}

// perByteUTF8 replaces each byte of s that is not part of valid UTF-8 with U+FFFD, as
// encoding/json does: the names the script reports back then match what it was sent
// under JSON before, and Go's json decoding of its answer keeps them as they are.
func perByteUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for _, c := range s { // an invalid byte ranges as utf8.RuneError, one byte wide
		b.WriteRune(c)
	}
	return b.String()
}

// add sends one file's source (safe for the scan workers to call concurrently).
func (r *pyRun) add(rel string, src []byte) {
	if r == nil || r.cmd == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sent+int64(len(src)) > pyMaxTotal || len(src) > pyMaxFile {
		r.skipped = append(r.skipped, rel)
		return
	}
	r.sent += int64(len(src))
	if !utf8.Valid(src) {
		if r.lossy == nil {
			r.lossy = map[string]bool{}
		}
		r.lossy[rel] = true
	}
	r.send(perByteUTF8(rel))
	r.send(strings.ToValidUTF8(string(src), "\uFFFD"))
}

// finish closes the input, waits for the analysis and turns its answer into findings.
func (r *pyRun) finish(fsc *fileScanner) []Finding {
	if r == nil {
		return nil
	}
	if r.startE != nil {
		return []Finding{structFinding(idPyUnavailable, sevMedium, "structural", "(python)", "python analysis not run",
			"the Python analysis could not run ("+r.startE.Error()+"); the .py files were judged by the line rules only")}
	}
	defer r.cancel()
	if r.werr == nil {
		r.werr = r.w.Flush()
	}
	_ = r.stdin.Close()
	err := r.cmd.Wait()
	if err != nil && r.pyc != "" {
		// Whatever failed, the next scan compiles afresh: a bytecode file that passed
		// the check but does not run (another interpreter's, say) costs one scan.
		_ = os.Remove(r.pyc)
	}
	var out []Finding
	if n := len(r.skipped); n > 0 {
		more := ""
		if n > 3 {
			more = fmt.Sprintf(" and %d more", n-3)
		}
		out = append(out, structFinding("py_analysis_incomplete", sevMedium, "structural", r.skipped[0], fmt.Sprintf("%d files not analysed", n),
			fmt.Sprintf("%d .py files (%s%s) left out of the Python analysis (files over %d KB, or past %d MB of Python in one plugin); they were judged by the line rules only",
				n, strings.Join(r.skipped[:min(n, 3)], ", "), more, pyMaxFile>>10, pyMaxTotal>>20)))
	}
	if err != nil {
		why := strings.TrimSpace(r.errOut.String())
		if i := strings.LastIndexByte(why, '\n'); i >= 0 {
			why = why[i+1:]
		}
		desc := "the Python analysis failed (" + errText(err) + ": " + why + "); the .py files were judged by the line rules only"
		if errors.Is(r.ctx.Err(), context.DeadlineExceeded) || strings.Contains(why, "MemoryError") {
			desc = fmt.Sprintf("the Python analysis was stopped at its cap (%s wall clock or %d MB of memory); the .py files were judged by the line rules only (a plugin built to exhaust the analysis is suspect)", pyTimeout, pyMemLimit>>20)
		}
		return append(out, structFinding(idPyFailed, sevHigh, "structural", "(python)", "python analysis failed", strings.TrimSpace(desc)))
	}
	var po pyOutput
	if err := json.Unmarshal(r.out.Bytes(), &po); err != nil {
		return append(out, structFinding(idPyFailed, sevHigh, "structural", "(python)", "python analysis failed",
			"the Python analysis gave an unreadable answer ("+err.Error()+"); the .py files were judged by the line rules only"))
	}
	for _, n := range po.Notes {
		sev := sevMedium
		if n.ID == "py_analysis_incomplete" || n.ID == "py_expression_cap" {
			sev = sevHigh // a plugin shaped to escape the analysis
		}
		f := structFinding(n.ID, sev, "structural", n.File, strings.ReplaceAll(n.ID, "_", " "), n.Desc)
		f.Line = n.Line
		out = append(out, f)
	}
	if len(r.skipped) == 0 { // a file left out may be the one that runs the list
		for _, d := range po.Data {
			if !r.lossy[d.File] {
				r.data = append(r.data, d)
			}
		}
	}
	for _, f := range po.Findings {
		out = append(out, Finding{PatternID: f.ID, Severity: f.Sev, Category: f.Cat, File: f.File, Line: f.Line,
			Match: cutMatch([]byte(f.Match)), Description: f.Desc, Chain: f.Chain})
	}
	return append(out, rescanStrings(fsc, po.Strings)...)
}

// rescanStrings scans the text the analysis decoded or assembled with the line rules
// (as a line of the file it came from, so that file's exemptions apply) and command
// strings with the shell analyser.
func rescanStrings(fsc *fileScanner, ss []pyString) []Finding {
	var out []Finding
	seen := map[string]bool{}
	for _, s := range ss {
		what := "text decoded by " + s.How
		switch {
		case s.Kind == "command":
			what = "a command assembled at run time"
		case s.How == "folded":
			what = "code assembled at run time"
		}
		suffix := fmt.Sprintf(" (in %s at %s:%d)", what, s.File, s.Line)
		add := func(f Finding) {
			key := f.PatternID + "\x00" + f.File + "\x00" + strconv.Itoa(s.Line)
			if f.Category == factCategory || f.Category == "structural" || seen[key] {
				return
			}
			seen[key] = true
			f.File, f.Line = s.File, s.Line
			f.Match = cutMatch([]byte(s.Text))
			f.Description += suffix
			out = append(out, f)
		}
		fsc.binary = false
		for _, f := range fsc.scanData(s.File, []byte(s.Text)) {
			add(f)
		}
		if s.Kind == "command" || shellSuspect(s.Text) {
			sf, _ := analyzeShell(s.Text, 0)
			for _, f := range sf {
				add(Finding{PatternID: f.id, Severity: f.sev, Category: f.cat, File: s.File, Description: f.desc})
			}
		}
	}
	return out
}

// limitedBuffer keeps the first max bytes written (a chatty failure cannot grow memory).
type limitedBuffer struct {
	b   *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.b.Len(); room > 0 {
		l.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// dropDataOnly removes the line rules' findings whose every match on the line lies
// inside string literals the Python analysis found to serve only matching (a
// guard's deny-list, issue 18 part 4). Only critical and high ones, which would
// block or ask: the medium and low notes stay as upstream reports them. Secrets
// written into the code are kept whatever the list is for.
func (s *scanner) dropDataOnly(data []pyData) {
	if len(data) == 0 {
		return
	}
	at := make(map[string]*pyData, len(data))
	for i := range data {
		at[data[i].File+"\x00"+strconv.Itoa(data[i].Line)] = &data[i]
	}
	rules := getRuleByID()
	for k, fs := range s.perFile {
		out := fs[:0]
		for _, f := range fs {
			d := at[f.File+"\x00"+strconv.Itoa(f.Line)]
			if r := rules[f.PatternID]; d != nil && r != nil && (f.Severity == sevCritical || f.Severity == sevHigh) && f.Category != "credential_exposure" && insideCols(r.locator().FindAllStringIndex(d.Text, -1), d.Cols) {
				continue
			}
			out = append(out, f)
		}
		s.perFile[k] = out
	}
}

// insideCols: there is a hit and every hit lies inside one of the spans.
func insideCols(hits [][]int, cols [][2]int) bool {
	if len(hits) == 0 {
		return false
	}
	for _, h := range hits {
		in := false
		for _, c := range cols {
			if h[0] >= c[0] && h[1] <= c[1] {
				in = true
				break
			}
		}
		if !in {
			return false
		}
	}
	return true
}
