package scan

import (
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/hermes-go/hermes/internal/lazyre"
)

// Scanner v2, part 3: shell. Scripts (and command strings found in code) are parsed
// with mvdan.cc/sh so that what a command does is judged, not how it is spelled:
// `bash`, `/bin/bash` and `"ba"sh` are the same program, a redirection is a
// redirection wherever it sits, and a pipeline's stages are known.

// Pattern ids of the shell analysis (ours; upstream has no parser).
const (
	idShellReverse   = "shell_reverse_shell"
	idShellPipeExec  = "shell_pipe_exec"
	idShellNetRedir  = "shell_dev_tcp"
	idShellUnparsed  = "shell_parse_error"
	maxShellDepth    = 4       // `bash -c "sh -c '…'"` nesting followed
	maxShellBytes    = 1 << 20 // a bigger script is left to the line rules
	maxShellFindings = 32      // per file: a generated script cannot flood the report
)

// shellFinding is one thing the parsed script does, before it becomes a Finding.
type shellFinding struct {
	id, sev, cat, desc string
	line               int
	text               string
}

type shellAnalysis struct {
	base    int // line offset of the parsed text in its file (command strings)
	out     []shellFinding
	fifo    bool // mkfifo seen
	netTool []int
	seen    map[string]bool
}

// analyzeShell parses src (a script or a command string) and reports what it runs.
// lineBase is added to the parser's line numbers. A parse failure is returned so the
// caller can report it; the text is still judged line by line.
func analyzeShell(src string, lineBase int) ([]shellFinding, error) {
	a := newShellAnalysis()
	a.base = lineBase
	err := a.add(src, 0, 0)
	return a.finish(), err
}

func newShellAnalysis() *shellAnalysis { return &shellAnalysis{seen: map[string]bool{}} }

// finish draws the conclusions that need the whole text and returns the findings.
func (a *shellAnalysis) finish() []shellFinding {
	if a.fifo && len(a.netTool) > 0 {
		a.emit(idShellReverse, sevCritical, "network",
			"named pipe (mkfifo) wired to a network tool: a shell served over the network", a.netTool[0], "mkfifo … | nc …")
	}
	return a.out
}

// add parses src; line is where src starts inside the outer text (0 for the top).
func (a *shellAnalysis) add(src string, depth, line int) error {
	if depth > maxShellDepth || len(src) > maxShellBytes {
		return nil
	}
	src = strings.ToValidUTF8(src, "\uFFFD")
	// Each parse gets its own parser: the package-level one is not safe for the
	// scanner's parallel workers.
	p := syntax.NewParser(syntax.Variant(syntax.LangBash))
	f, err := p.Parse(strings.NewReader(src), "")
	if err == nil {
		a.file(f, depth, line)
		return nil
	}
	// bash runs the lines before a syntax error; judge each line that parses alone.
	for i, l := range strings.Split(src, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if lf, lerr := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(l), ""); lerr == nil {
			a.file(lf, depth, line+i)
		}
	}
	return err
}

func (a *shellAnalysis) emit(id, sev, cat, desc string, line int, text string) {
	key := fmt.Sprintf("%s:%d", id, line)
	if a.seen[key] || len(a.out) >= maxShellFindings {
		return
	}
	a.seen[key] = true
	a.out = append(a.out, shellFinding{id: id, sev: sev, cat: cat, desc: desc, line: a.base + line, text: text})
}

func (a *shellAnalysis) file(f *syntax.File, depth, line int) {
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			a.stmt(n, line)
		case *syntax.BinaryCmd:
			if n.Op == syntax.Pipe || n.Op == syntax.PipeAll {
				a.pipeline(n, line)
			}
		case *syntax.CallExpr:
			a.call(n, depth, line)
		}
		return true
	})
}

func lineOf(n syntax.Node, base int) int {
	return base + int(n.Pos().Line())
}

// wordText is w's static text: quotes removed; a dynamic part keeps its spelling.
func wordText(w *syntax.Word) string {
	if w == nil {
		return ""
	}
	var b strings.Builder
	var parts func(ps []syntax.WordPart)
	parts = func(ps []syntax.WordPart) {
		for _, p := range ps {
			switch p := p.(type) {
			case *syntax.Lit:
				b.WriteString(p.Value)
			case *syntax.SglQuoted:
				b.WriteString(p.Value)
			case *syntax.DblQuoted:
				parts(p.Parts)
			case *syntax.ParamExp:
				if p.Param != nil {
					b.WriteString("$" + p.Param.Value)
				}
			case *syntax.CmdSubst:
				b.WriteString("$(…)")
			case *syntax.ProcSubst:
				b.WriteString("<(…)")
			default:
				b.WriteString("…")
			}
		}
	}
	parts(w.Parts)
	return b.String()
}

// argv is a call's words with wrappers (sudo, env, nohup, exec, …) peeled off; the
// program is reduced to its base name, lower case.
func argv(c *syntax.CallExpr) (string, []string, []*syntax.Word) {
	words := c.Args
	for len(words) > 0 {
		name := strings.ToLower(path.Base(wordText(words[0])))
		if !shellWrappers[name] {
			return name, texts(words[1:]), words[1:]
		}
		words = words[1:]
		// Options and operands of the wrapper itself (sudo -u x, env A=b, timeout 5).
		for len(words) > 0 {
			t := wordText(words[0])
			if strings.HasPrefix(t, "-") || strings.Contains(t, "=") || isNumber(t) {
				words = words[1:]
				continue
			}
			break
		}
	}
	return "", nil, nil
}

var shellWrappers = map[string]bool{"sudo": true, "doas": true, "env": true, "nohup": true, "exec": true,
	"command": true, "builtin": true, "setsid": true, "timeout": true, "nice": true, "stdbuf": true, "xargs": true}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && c != '.' && c != 's' && c != 'm' {
			return false
		}
	}
	return true
}

func texts(ws []*syntax.Word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = wordText(w)
	}
	return out
}

var (
	shellNames  = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "ash": true, "fish": true, "busybox": true}
	interpRe    = lazyre.New(`^(?:python[\d.]*|perl[\d.]*|ruby[\d.]*|node(?:js)?|php[\d.]*|lua[\d.]*|pwsh|tclsh)$`)
	netTools    = map[string]bool{"nc": true, "ncat": true, "netcat": true, "nc.traditional": true, "nc.openbsd": true, "telnet": true, "socat": true, "openssl": true}
	downloaders = map[string]bool{"curl": true, "wget": true, "fetch": true, "aria2c": true, "http": true, "httpie": true, "lwp-download": true}
	devNet      = lazyre.New(`/dev/(?:tcp|udp)/([^/\s]+)/`)
	perlRS      = lazyre.New(`(?i)socket|IO::Socket`)
	perlExec    = lazyre.New(`(?i)\bexec\b|\bsystem\b|open\s*\(\s*STD(?:IN|OUT|ERR)|/bin/\w*sh|\bsh\s+-i`)
	rubyRS      = lazyre.New(`TCPSocket|Socket\.new|UDPSocket`)
	rubyExec    = lazyre.New(`\bexec\b|\bspawn\b|\bsystem\b|IO\.popen|%x|` + "`")
	phpRS       = lazyre.New(`(?i)fsockopen|socket_create|stream_socket_client`)
	phpExec     = lazyre.New(`(?i)\bexec\b|shell_exec|\bsystem\b|passthru|proc_open|popen`)
	pyRS        = lazyre.New(`\bsocket\b`)
	pyExec      = lazyre.New(`dup2|pty\.spawn|subprocess|os\.system|os\.exec|/bin/\w*sh`)
)

func isShell(name string) bool { return shellNames[name] }
func isInterp(name string) bool {
	return isShell(name) || interpRe.MatchString(name) || name == "eval" || name == "source" || name == "."
}

// localOnly: a port probe (nc -z) or a connection to this machine only.
func localOnly(args []string) bool {
	remote := false
	for _, x := range args {
		if x == "-z" || strings.HasPrefix(x, "-z") && !strings.ContainsAny(x, "ec") {
			return true
		}
		if !strings.HasPrefix(x, "-") && !isNumber(x) && !loopbackHost(x) {
			remote = true
		}
	}
	return !remote
}

func loopbackHost(h string) bool {
	h = strings.ToLower(strings.Trim(h, "[]"))
	return h == "localhost" || strings.HasPrefix(h, "127.") || h == "::1" || h == "0.0.0.0"
}

// stmt judges a statement's redirections: bash opens /dev/tcp/HOST/PORT as a socket.
func (a *shellAnalysis) stmt(s *syntax.Stmt, base int) {
	var net string
	var host string
	dup, rw := false, false
	for _, r := range s.Redirs {
		t := wordText(r.Word)
		if m := devNet.FindStringSubmatch(t); m != nil {
			net, host = t, m[1]
			if r.Op == syntax.RdrInOut {
				rw = true
			}
		}
		switch r.Op {
		case syntax.RdrAll, syntax.AppAll, syntax.DplOut, syntax.DplIn:
			dup = true
		}
	}
	if net == "" || loopbackHost(host) {
		return
	}
	name := ""
	if c, ok := s.Cmd.(*syntax.CallExpr); ok {
		name, _, _ = argv(c)
		if len(c.Args) > 0 && strings.ToLower(path.Base(wordText(c.Args[0]))) == "exec" {
			name = "exec"
		}
	}
	line := lineOf(s, base)
	switch {
	case isInterp(name) || (dup && name != "echo" && name != "printf" && name != "cat"):
		a.emit(idShellReverse, sevCritical, "network",
			"shell or interpreter with its input/output redirected to a network socket (/dev/tcp reverse shell)", line, net)
	case name == "exec" || rw:
		a.emit(idShellReverse, sevCritical, "network",
			"opens a read-write network socket on a file descriptor (exec N<>/dev/tcp/…: a reverse-shell channel)", line, net)
	default:
		a.emit(idShellNetRedir, sevHigh, "network", "sends or reads data over a raw /dev/tcp socket to a remote host", line, net)
	}
}

// call judges one command.
func (a *shellAnalysis) call(c *syntax.CallExpr, depth, base int) {
	name, args, words := argv(c)
	if name == "" {
		return
	}
	line := lineOf(c, base)
	joined := strings.Join(args, " ")
	switch {
	case name == "mkfifo" || (name == "mknod" && strings.Contains(joined, " p")):
		a.fifo = true
	case netTools[name]:
		if !localOnly(args) {
			a.netTool = append(a.netTool, line)
		}
		a.netCall(name, args, line)
	case name == "perl" && hasFlagArg(args, "-e", "-E") && perlRS.MatchString(joined) && perlExec.MatchString(joined):
		a.emit(idShellReverse, sevCritical, "network", "Perl one-liner opening a socket and running a shell over it (reverse shell)", line, cut(joined))
	case strings.HasPrefix(name, "ruby") && rubyRS.MatchString(joined) && rubyExec.MatchString(joined):
		a.emit(idShellReverse, sevCritical, "network", "Ruby one-liner opening a socket and running commands from it (reverse shell)", line, cut(joined))
	case strings.HasPrefix(name, "php") && phpRS.MatchString(joined) && phpExec.MatchString(joined):
		a.emit(idShellReverse, sevCritical, "network", "PHP one-liner opening a socket and running a shell over it (reverse shell)", line, cut(joined))
	case strings.HasPrefix(name, "python") && hasFlagArg(args, "-c") && pyRS.MatchString(joined) && pyExec.MatchString(joined):
		a.emit(idShellReverse, sevCritical, "network", "Python one-liner wiring a socket to a shell (dup2/pty.spawn reverse shell)", line, cut(joined))
	}
	// A command string handed to a shell is a script of its own.
	if isShell(name) || name == "eval" {
		for i, w := range words {
			if name == "eval" || (i > 0 && (args[i-1] == "-c" || strings.HasSuffix(args[i-1], "c") && strings.HasPrefix(args[i-1], "-"))) {
				_ = a.add(wordText(w), depth+1, line-1)
			}
		}
	}
	// sh -c "$(curl …)", bash <(curl …), eval "$(wget -O- …)", . <(curl …)
	if isInterp(name) {
		for _, w := range words {
			if fetch := fetchInside(w); fetch != "" {
				a.emit(idShellPipeExec, sevCritical, "supply_chain",
					"runs code downloaded at run time ("+fetch+" inside a substitution given to "+name+")", line, cut(name+" "+joined))
			}
		}
	}
}

func (a *shellAnalysis) netCall(name string, args []string, line int) {
	joined := strings.Join(args, " ")
	switch name {
	case "socat":
		l := strings.ToLower(joined)
		if strings.Contains(l, "exec:") || strings.Contains(l, "system:") {
			a.emit(idShellReverse, sevCritical, "network", "socat connecting a network socket to a program (exec:/system: shell)", line, cut("socat "+joined))
		}
	case "openssl":
		// openssl s_client feeding a shell is caught by the fifo/pipeline checks.
	default:
		for _, x := range args {
			if x == "-e" || x == "-c" || x == "--exec" || x == "--sh-exec" || x == "--lua-exec" ||
				(strings.HasPrefix(x, "-") && !strings.HasPrefix(x, "--") && strings.ContainsAny(x[1:], "ec") && len(x) <= 6 && !strings.ContainsAny(x[1:], "0123456789")) {
				if x == "-c" && name == "telnet" {
					continue
				}
				a.emit(idShellReverse, sevCritical, "network", name+" with -e/-c: runs a program with its input and output on a network connection", line, cut(name+" "+joined))
				return
			}
		}
	}
}

// pipeline judges `A | B | C`: code fetched or decoded by one stage and run by a
// later one.
func (a *shellAnalysis) pipeline(b *syntax.BinaryCmd, base int) {
	var stages []*syntax.Stmt
	var flat func(s *syntax.Stmt)
	flat = func(s *syntax.Stmt) {
		if bc, ok := s.Cmd.(*syntax.BinaryCmd); ok && (bc.Op == syntax.Pipe || bc.Op == syntax.PipeAll) {
			flat(bc.X)
			flat(bc.Y)
			return
		}
		stages = append(stages, s)
	}
	flat(b.X)
	flat(b.Y)
	source := ""
	for _, s := range stages {
		c, ok := s.Cmd.(*syntax.CallExpr)
		if !ok {
			continue
		}
		name, args, _ := argv(c)
		switch {
		case downloaders[name]:
			source = name
		case name == "base64" && (hasFlagArg(args, "-d", "--decode", "-D") || hasFlagArg(args, "-di")):
			if source == "" {
				source = "base64 -d"
			}
		case name == "xxd" && hasFlagArg(args, "-r", "-p", "-r -p"):
			if source == "" {
				source = "xxd -r"
			}
		case name == "openssl" && len(args) > 0 && (args[0] == "enc" || args[0] == "base64") && hasFlagArg(args, "-d"):
			if source == "" {
				source = "openssl -d"
			}
		case source != "" && (isInterp(name) || (name == "" && len(c.Args) > 0)):
			if isInterp(name) && !stdinIsData(name, args) {
				line := lineOf(b, base)
				if downloaders[source] {
					a.emit(idShellPipeExec, sevCritical, "supply_chain",
						"pipes code downloaded by "+source+" into "+name+" (download-and-execute)", line, cut(source+" … | "+name))
				} else {
					a.emit(idShellPipeExec, sevCritical, "obfuscation",
						"pipes "+source+"-decoded text into "+name+" (obfuscated execution)", line, cut(source+" | "+name))
				}
				return
			}
		}
		if netTools[name] && source == "" {
			source = "" // a socket's output into a shell is the mkfifo family; judged there
		}
	}
}

// stdinIsData: the interpreter runs a named script, so the pipe is its data.
func stdinIsData(name string, args []string) bool {
	for i, x := range args {
		if x == "-" || x == "-s" || x == "/dev/stdin" {
			return false
		}
		if x == "-c" || x == "-e" {
			return i+1 < len(args)
		}
		if !strings.HasPrefix(x, "-") {
			return true
		}
	}
	return false
}

// fetchInside names the downloader inside a command or process substitution of w.
func fetchInside(w *syntax.Word) string {
	found := ""
	syntax.Walk(w, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok && found == "" {
			if name, _, _ := argv(c); downloaders[name] {
				found = name
			}
		}
		return found == ""
	})
	return found
}

func hasFlagArg(args []string, flags ...string) bool {
	for _, a := range args {
		for _, f := range flags {
			if a == f {
				return true
			}
		}
	}
	return false
}

func cut(s string) string {
	if len(s) > 160 {
		return s[:157] + "..."
	}
	return s
}
