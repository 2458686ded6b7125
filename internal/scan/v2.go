package scan

import (
	"bytes"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/hermes-go/hermes/internal/lazyre"
)

// Scanner v2 hooks (shell, binaries, docs). The line scan stays as it was; three
// calls join this file set to it:
//   - the automaton also finds the hint literals below, so a file is parsed as shell
//     (or searched for library loads and script references) only when it holds one;
//   - refine (end of scanData) adds the shell findings of one file and applies the
//     docs and deny-list judgements, while the file's bytes are at hand;
//   - mergeV2 (Scan, after every file) joins facts across files: which binaries the
//     plugin's code loads, which scripts it runs.
// Facts travel from refine to mergeV2 as findings of category factCategory, so the
// per-file plumbing stays unchanged; mergeV2 removes them before anyone sees them.

const factCategory = "\x00fact"

const (
	factBinary = "binary" // File is a binary whose strings were scanned
	factLoad   = "load"   // code at File:Line loads the native library named Match
	factRef    = "ref"    // File names the script or library Match
	factScript = "script" // File is a shell script
)

// Hint bits, found by the automaton (case-folded literals).
const (
	hintShell = iota
	hintNative
	hintRef
	numHints
)

var hintLits = [numHints][]string{
	hintShell: {"/dev/tcp", "/dev/udp", "mkfifo", "mknod", "socat", "socket", "fsockopen", "nc -", "ncat ", "netcat ",
		"-e /", "-e sh", "-e bash", "-c sh", "-c bash", "|sh", "| sh", "|bash", "| bash", "|python", "| python",
		"| perl", "|perl", "| ruby", "| node", "| php", "| sudo", "| zsh", "| dash", "| /", "|/", "| env ",
		"| source", "| .", "<(curl", "<(wget", "$(curl", "$(wget", "`curl", "`wget", "bash -i", "sh -i", "pty.spawn",
		"dup2", "eval "},
	hintNative: {"cdll", "ctypes", "dlopen", "loadlibrary", "pydll", "windll"},
	hintRef:    refHints(),
}

// refHints: a file name ending in a script or library extension, followed by the
// end of a literal or word. Bare ".so" or ".sh" would hit .sort( and .shape in most
// code and make every file pay for the reference pass.
func refHints() []string {
	var out []string
	for _, ext := range []string{".sh", ".bash", ".so", ".dylib", ".dll", ".bin", ".pyc"} {
		for _, end := range []string{`"`, `'`, "`", " ", "\n", ")", ",", ";"} {
			out = append(out, ext+end)
		}
	}
	return append(out, ".so.")
}

var (
	// callWithCommand: a line that hands text to a shell or a program (Python, JS, Ruby, Go).
	callWithCommand = lazyre.New(`\b(?:system|popen|Popen|run|call|check_output|check_call|getoutput|getstatusoutput|spawn\w*|exec\w*|Command|` +
		`execSync|execFile\w*|spawnSync)\s*\(`)
	nativeLoad = lazyre.New(`(?:\bCDLL|\bPyDLL|\bWinDLL|\bcdll\.LoadLibrary|\bcdll\.[A-Za-z_]\w*|\bdlopen|\bLoadLibrary\w*)\s*\(`)
	fileRef    = lazyre.New(`([A-Za-z0-9_.+-]+\.(?:sh|bash|so(?:\.\d+)*|dylib|dll|bin|pyc))\b`)
)

// maxHintLines bounds the lines per hint kind a file's extra passes look at.
const maxHintLines = 512

// smallScript: a script up to this size is parsed whole (statements over many
// lines, a mkfifo far from its nc); a bigger one only at its hinted lines, so a
// large generated script costs its lines of interest, not a full parse.
const smallScript = 16 << 10

func (st *fileState) onHint(kind int) {
	st.hints |= 1 << kind
	at := st.hintAt[kind]
	if n := len(at); (n == 0 || at[n-1] != st.lineNo) && n < maxHintLines {
		st.hintAt[kind] = append(at, st.lineNo)
	}
}

// refine is scanData's last step for one file.
func (fsc *fileScanner) refine(st *fileState, out []Finding) []Finding {
	v := &v2File{st: st, rel: st.rel, data: st.data, base: path.Base(st.rel)}
	if fsc.binary {
		out = append(out, Finding{Category: factCategory, PatternID: factBinary, File: st.rel})
		for i := range out {
			if out[i].Category != factCategory {
				out[i].Line = 0
				out[i].Description += " (in the printable strings of a binary file)"
			}
		}
	}
	shellFile := isShellScript(st.ext, st.data)
	if shellFile {
		out = append(out, Finding{Category: factCategory, PatternID: factScript, File: st.rel})
	}
	if st.hints&(1<<hintShell) != 0 {
		switch {
		case shellFile || fsc.binary:
			out = append(out, v.shellScript(fsc.binary)...)
		case st.pc.code:
			out = append(out, v.commandStrings()...)
		}
	}
	if st.pc.code || st.ext == ".yaml" || st.ext == ".yml" || st.ext == ".json" || st.ext == ".toml" || shellFile {
		if st.hints&(1<<hintNative) != 0 && st.pc.code {
			out = append(out, v.nativeLoads()...)
		}
		if st.hints&(1<<hintRef) != 0 {
			out = append(out, v.refs()...)
		}
	}
	out = v.judge(out)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out
}

// v2File is one file under refinement, its lines indexed on first use.
type v2File struct {
	st     *fileState
	rel    string
	base   string
	data   []byte
	starts []int
}

func (v *v2File) line(n int) []byte {
	if v.starts == nil {
		v.starts = append(v.starts, 0)
		for i, c := range v.data {
			if c == '\n' {
				v.starts = append(v.starts, i+1)
			}
		}
	}
	if n < 1 || n > len(v.starts) {
		return nil
	}
	s := v.starts[n-1]
	e := bytes.IndexByte(v.data[s:], '\n')
	if e < 0 {
		return v.data[s:]
	}
	return v.data[s : s+e]
}

func (v *v2File) numLines() int {
	v.line(1)
	return len(v.starts)
}

func isShellScript(ext string, data []byte) bool {
	switch ext {
	case ".sh", ".bash", ".zsh", ".ksh":
		return true
	}
	if !bytes.HasPrefix(data, []byte("#!")) {
		return false
	}
	first := data
	if i := bytes.IndexByte(first, '\n'); i >= 0 {
		first = first[:i]
	}
	f := strings.Fields(string(first[2:]))
	if len(f) == 0 {
		return false
	}
	name := path.Base(f[0])
	if name == "env" && len(f) > 1 {
		name = path.Base(f[len(f)-1])
	}
	return shellNames[name]
}

func (v *v2File) toFindings(sf []shellFinding, binary bool) []Finding {
	out := make([]Finding, 0, len(sf))
	for _, f := range sf {
		fd := Finding{PatternID: f.id, Severity: f.sev, Category: f.cat, File: v.rel, Line: f.line,
			Match: cutMatch([]byte(f.text)), Description: f.desc}
		if binary {
			fd.Line = 0
			fd.Description += " (in the printable strings of a binary file)"
		} else if l := v.line(f.line); l != nil {
			fd.Match = cutMatch(l)
			if isCommentLine(l, []string{"#", "//"}) {
				continue
			}
		}
		out = append(out, fd)
	}
	return out
}

// shellScript parses the whole file as bash (a binary's strings: each string alone).
func (v *v2File) shellScript(binary bool) []Finding {
	if binary {
		var out []shellFinding
		for _, l := range strings.Split(string(v.data), "\n") {
			if shellSuspect(l) {
				sf, _ := analyzeShell(l, 0)
				for k := range sf {
					sf[k].text = l // the whole string says more than the one word judged
				}
				out = append(out, sf...)
			}
		}
		return v.toFindings(out, true)
	}
	if len(v.data) > smallScript {
		a := newShellAnalysis()
		for _, n := range v.st.hintAt[hintShell] {
			_ = a.add(string(v.line(n)), 0, n-1)
		}
		return v.toFindings(a.finish(), false)
	}
	sf, err := analyzeShell(string(v.data), 0)
	out := v.toFindings(sf, false)
	if err != nil {
		out = append(out, Finding{PatternID: idShellUnparsed, Severity: sevMedium, Category: "structural", File: v.rel,
			Match:       cutMatch([]byte(err.Error())),
			Description: "script does not parse as bash (" + err.Error() + "); it was judged by the line rules and line by line"})
	}
	return out
}

// shellSuspect: text holds one of the shell hint literals (for text not seen by the
// automaton as a unit: one string of a binary, one literal of code).
func shellSuspect(s string) bool {
	l := strings.ToLower(s)
	for _, h := range hintLits[hintShell] {
		if strings.Contains(l, h) {
			return true
		}
	}
	return false
}

// commandStrings parses the string literals that code hands to a shell or a
// program: os.system("…"), subprocess.run(["bash", "-c", "…"]), exec('…').
func (v *v2File) commandStrings() []Finding {
	var out []shellFinding
	for _, i := range v.st.hintAt[hintShell] {
		line := v.line(i)
		if len(line) > maxLineScan || !callWithCommand.Match(line) {
			continue
		}
		lits := stringLiterals(line)
		if len(lits) == 0 {
			continue
		}
		suspect := false
		for _, l := range lits {
			suspect = suspect || shellSuspect(l)
		}
		if !suspect {
			continue
		}
		cmd := lits[0]
		if len(lits) > 1 {
			q := make([]string, len(lits))
			for k, l := range lits {
				q[k] = "'" + strings.ReplaceAll(l, "'", `'\''`) + "'"
			}
			cmd = strings.Join(q, " ")
			if !bytes.Contains(line, []byte("[")) && !bytes.Contains(line, []byte(",")) {
				cmd = strings.Join(lits, "") // "a" + "b": one string
			}
		}
		sf, _ := analyzeShell(cmd, 0)
		for k := range sf {
			sf[k].line = i
		}
		out = append(out, sf...)
	}
	return v.toFindings(out, false)
}

// stringLiterals are the quoted literals of a code line, unquoted.
func stringLiterals(line []byte) []string {
	var out []string
	for _, m := range literalSpan.FindAll(line, -1) {
		s := strings.TrimLeft(string(m), "rRbBuUfF")
		if len(s) < 2 {
			continue
		}
		q := s[0]
		body := s[1 : len(s)-1]
		switch q {
		case '"':
			if u, err := strconv.Unquote(s); err == nil {
				body = u
			}
		case '\'':
			if u, err := strconv.Unquote(`"` + strings.ReplaceAll(strings.ReplaceAll(body, `\'`, `'`), `"`, `\"`) + `"`); err == nil {
				body = u
			}
		}
		out = append(out, body)
	}
	return out
}

// nativeLoads records every library the code loads by a file name.
func (v *v2File) nativeLoads() []Finding {
	var out []Finding
	for _, i := range v.st.hintAt[hintNative] {
		line := v.line(i)
		if len(line) > maxLineScan || isCommentLine(line, v.st.pc.commentPrefixes) {
			continue
		}
		loc := nativeLoad.FindIndex(line)
		if loc == nil {
			continue
		}
		for _, l := range stringLiterals(line[loc[0]:]) {
			if b := path.Base(l); b != "" && b != "." {
				out = append(out, Finding{Category: factCategory, PatternID: factLoad, File: v.rel, Line: i,
					Match: b, Description: cutMatch(line)})
			}
		}
	}
	return out
}

// refs records the scripts and libraries a file names.
func (v *v2File) refs() []Finding {
	var out []Finding
	seen := map[string]bool{}
	for _, n := range v.st.hintAt[hintRef] {
		for _, m := range fileRef.FindAllSubmatch(v.line(n), 16) {
			b := string(m[1])
			if b != v.base && !seen[b] {
				seen[b] = true
				out = append(out, Finding{Category: factCategory, PatternID: factRef, File: v.rel, Match: b})
			}
		}
	}
	return out
}

// mergeV2 joins the facts of every file and removes them.
func mergeV2(in []Finding) []Finding {
	binaries, scripts := map[string]bool{}, map[string]bool{}
	refs := map[string]bool{}
	var loads []Finding
	out := in[:0:0]
	for _, f := range in {
		if f.Category != factCategory {
			out = append(out, f)
			continue
		}
		switch f.PatternID {
		case factBinary:
			binaries[f.File] = true
		case factScript:
			scripts[f.File] = true
		case factRef:
			refs[f.Match] = true
		case factLoad:
			loads = append(loads, f)
			refs[f.Match] = true
		}
	}
	loaded := map[string]bool{}
	for _, l := range loads {
		for b := range binaries {
			if path.Base(b) == l.Match || strings.TrimSuffix(path.Base(b), path.Ext(b)) == l.Match {
				loaded[b] = true
				out = append(out, Finding{PatternID: "native_library_load", Severity: sevHigh, Category: "execution",
					File: l.File, Line: l.Line, Match: l.Description,
					Description: "loads a native library shipped in the plugin (" + b + "); its code cannot be reviewed from source"})
			}
		}
	}
	for i := range out {
		f := &out[i]
		switch {
		case binaries[f.File] && f.Severity == sevCritical && !loaded[f.File] && path.Ext(f.File) != ".pyc":
			// A critical spelling in a binary nothing loads is evidence, not an act.
			f.Severity = sevHigh
			f.Description += "; nothing in the plugin loads this file"
		case binaries[f.File] && loaded[f.File] && f.Severity == sevCritical:
			f.Description += "; the plugin's code loads this library"
		case scripts[f.File] && f.PatternID == idShellPipeExec && f.Severity == sevCritical && !refs[path.Base(f.File)]:
			// Same as upstream's curl_pipe_shell remap unless the plugin runs the script.
			f.Severity = sevHigh
			f.Description += " (in a script nothing in the plugin runs)"
		case scripts[f.File] && f.PatternID == idShellPipeExec && f.Severity == sevCritical:
			f.Description += " (in a script the plugin runs)"
		}
	}
	return out
}
