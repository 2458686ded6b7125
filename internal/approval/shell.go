package approval

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// command is one simple command the shell would run, its words resolved as far as
// static text allows: quotes removed, backslash escapes undone, "r”m" joined to
// "rm". A dynamic part stays as its source spelling ("$HOME", "$(…)").
type command struct {
	places   *Places  // where the user's home and Hermes' policy files are
	name     string   // the program actually run, base name, lower case ("" if dynamic)
	args     []string // arguments after the program
	words    []string // every word as written, wrappers included
	wrappers []string // sudo, env, xargs, ... peeled off in front of name
	sudoArgs []string // options given to sudo/doas
}

// redirect is one redirection anywhere in the command.
type redirect struct {
	op     syntax.RedirOperator
	target string
}

// analysis is what a command line would execute, found by parsing it as bash.
type analysis struct {
	places   *Places
	cmds     []*command
	redirs   []redirect
	pipes    [][][]*command // pipelines: stages, each stage's commands
	texts    []string       // heredoc and here-string bodies fed to non-shell programs (psql <<EOF)
	forkBomb bool
	// unparsed lists the lines the parser could not read; they are judged by the
	// conservative raw-text rules only.
	unparsed []string
}

// maxPayloadDepth bounds how deep `bash -c "bash -c '…'"` nesting is followed.
const maxPayloadDepth = 6

// maxCommandBytes bounds the text the parser is given: a multi-megabyte command is
// not something a model writes by hand, and parsing it must stay cheap.
const maxCommandBytes = 256 << 10

func analyze(src string, places *Places) *analysis {
	// The parser wants UTF-8. An invalid byte cannot spell a command name the rules
	// know, so a replacement character in its place loses nothing.
	src = strings.ToValidUTF8(src, "\uFFFD")
	a := &analysis{places: places}
	a.add(src, 0)
	for _, c := range a.cmds {
		c.places = places
	}
	return a
}

// add parses src and records what it runs. A parse failure falls back to parsing
// line by line, because bash runs the lines before a syntax error.
func (a *analysis) add(src string, depth int) {
	if depth > maxPayloadDepth {
		a.unparsed = append(a.unparsed, src)
		return
	}
	if len(src) > maxCommandBytes {
		a.unparsed = append(a.unparsed, src)
		return
	}
	f, err := parse(src)
	if err == nil {
		a.file(f, depth)
		return
	}
	for _, line := range strings.Split(src, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if f, err := parse(line); err == nil {
			a.file(f, depth)
		} else {
			a.unparsed = append(a.unparsed, line)
		}
	}
}

func parse(src string) (*syntax.File, error) {
	p := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(false))
	return p.Parse(strings.NewReader(src), "")
}

func (a *analysis) file(f *syntax.File, depth int) {
	calls := map[*syntax.CallExpr]*command{}
	var pipeRoots []*syntax.BinaryCmd
	var fed []*syntax.Stmt // statements with a heredoc or here-string
	inner := map[*syntax.BinaryCmd]bool{}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			for _, r := range n.Redirs {
				a.redirect(r, depth)
				if r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc || r.Op == syntax.WordHdoc {
					fed = append(fed, n)
				}
			}
		case *syntax.CallExpr:
			if c := newCommand(n); c != nil {
				calls[n] = c
				a.cmds = append(a.cmds, c)
			}
		case *syntax.BinaryCmd:
			if isPipe(n.Op) && !inner[n] {
				pipeRoots = append(pipeRoots, n)
				markInner(n, inner)
			}
		case *syntax.FuncDecl:
			if isForkBomb(n) {
				a.forkBomb = true
			}
		}
		return true
	})
	for _, c := range commandsInOrder(f, calls) {
		a.payloads(c, depth)
	}
	for _, st := range fed {
		ce, ok := st.Cmd.(*syntax.CallExpr)
		if !ok || calls[ce] == nil || !shellNames[calls[ce].name] || hasScriptOperand(calls[ce].args) {
			for _, r := range st.Redirs {
				if r.Hdoc != nil {
					a.texts = append(a.texts, wordText(r.Hdoc))
				} else if r.Op == syntax.WordHdoc && r.Word != nil {
					a.texts = append(a.texts, wordText(r.Word))
				}
			}
			continue
		}
		for _, r := range st.Redirs {
			switch {
			case (r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc) && r.Hdoc != nil:
				a.add(wordText(r.Hdoc), depth+1)
			case r.Op == syntax.WordHdoc && r.Word != nil:
				a.add(wordText(r.Word), depth+1)
			}
		}
	}
	for _, p := range pipeRoots {
		var stages [][]*command
		for _, st := range pipeStages(p) {
			var cs []*command
			syntax.Walk(st, func(n syntax.Node) bool {
				if ce, ok := n.(*syntax.CallExpr); ok && calls[ce] != nil {
					cs = append(cs, calls[ce])
				}
				return true
			})
			stages = append(stages, cs)
		}
		a.pipes = append(a.pipes, stages)
		a.pipedPayloads(stages, depth)
	}
}

// commandsInOrder lists the commands of f in source order (Walk order), so payload
// findings come out deterministically.
func commandsInOrder(f *syntax.File, calls map[*syntax.CallExpr]*command) []*command {
	var out []*command
	syntax.Walk(f, func(n syntax.Node) bool {
		if ce, ok := n.(*syntax.CallExpr); ok && calls[ce] != nil {
			out = append(out, calls[ce])
		}
		return true
	})
	return out
}

func (a *analysis) redirect(r *syntax.Redirect, depth int) {
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		// The body is data unless a shell reads it; payloads() handles that case.
		return
	}
	if r.Word == nil {
		return
	}
	a.redirs = append(a.redirs, redirect{op: r.Op, target: wordText(r.Word)})
}

func isPipe(op syntax.BinCmdOperator) bool { return op == syntax.Pipe || op == syntax.PipeAll }

func markInner(b *syntax.BinaryCmd, inner map[*syntax.BinaryCmd]bool) {
	for _, st := range []*syntax.Stmt{b.X, b.Y} {
		if x, ok := st.Cmd.(*syntax.BinaryCmd); ok && isPipe(x.Op) {
			inner[x] = true
			markInner(x, inner)
		}
	}
}

// pipeStages flattens a|b|c (parsed as nested binary commands) into its stages.
func pipeStages(b *syntax.BinaryCmd) []*syntax.Stmt {
	var out []*syntax.Stmt
	for _, st := range []*syntax.Stmt{b.X, b.Y} {
		if x, ok := st.Cmd.(*syntax.BinaryCmd); ok && isPipe(x.Op) && len(st.Redirs) == 0 {
			out = append(out, pipeStages(x)...)
		} else {
			out = append(out, st)
		}
	}
	return out
}

// isForkBomb spots a function that calls itself in a pipe or in the background:
// :(){ :|:& };: and every renamed spelling of it.
func isForkBomb(fd *syntax.FuncDecl) bool {
	if fd.Name == nil || fd.Body == nil {
		return false
	}
	name := fd.Name.Value
	selfCalls, spreads := 0, false
	syntax.Walk(fd.Body, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			if len(n.Args) > 0 && wordText(n.Args[0]) == name {
				selfCalls++
			}
		case *syntax.BinaryCmd:
			if isPipe(n.Op) {
				spreads = true
			}
		case *syntax.Stmt:
			if n.Background {
				spreads = true
			}
		}
		return true
	})
	return selfCalls > 0 && spreads
}

var shellNames = map[string]bool{"sh": true, "bash": true, "zsh": true, "ksh": true, "dash": true, "ash": true, "mksh": true}

// payloads follows text that c hands to another shell: bash -c '…', eval …,
// bash <<EOF … EOF, bash <<< '…'.
func (a *analysis) payloads(c *command, depth int) {
	switch {
	case shellNames[c.name]:
		if p, ok := dashC(c.args); ok {
			a.add(p, depth+1)
		}
	case c.name == "eval":
		a.add(strings.Join(c.args, " "), depth+1)
	case c.name == "alias":
		// alias x='rm -rf /': the value is code once the alias is used.
		for _, arg := range c.args {
			if _, v, ok := strings.Cut(arg, "="); ok {
				a.add(v, depth+1)
			}
		}
	}
}

// pipedPayloads follows `echo 'rm -rf /' | bash`: a shell reading a pipe whose
// writer prints literal text runs that text.
func (a *analysis) pipedPayloads(stages [][]*command, depth int) {
	for i := 1; i < len(stages); i++ {
		if len(stages[i]) == 0 || len(stages[i-1]) != 1 {
			continue
		}
		sh, src := stages[i][0], stages[i-1][0]
		if !shellNames[sh.name] || hasScriptOperand(sh.args) {
			continue
		}
		if src.name == "echo" || src.name == "printf" {
			var words []string
			for _, w := range src.args {
				if src.name == "echo" && strings.HasPrefix(w, "-") && len(words) == 0 {
					continue
				}
				words = append(words, w)
			}
			a.add(strings.Join(words, " "), depth+1)
		}
	}
}

// dashC returns the script of `sh -c SCRIPT` (also -lc, -ec, -xc ...).
func dashC(args []string) (string, bool) {
	for i := 0; i < len(args); i++ {
		w := args[i]
		switch {
		case oneOf(w, "-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
			i++ // the option's value
			continue
		case strings.HasPrefix(w, "--") && w != "--":
			continue // --login, --norc ...
		case strings.HasPrefix(w, "+"):
			continue
		case w == "--" || !strings.HasPrefix(w, "-"):
			return "", false
		}
		if strings.ContainsRune(w[1:], 'c') && i+1 < len(args) {
			return args[i+1], true
		}
	}
	return "", false
}

// hasScriptOperand reports whether a shell was given a script file or -c, in which
// case it does not read commands from its stdin.
func hasScriptOperand(args []string) bool {
	for i := 0; i < len(args); i++ {
		w := args[i]
		if oneOf(w, "-o", "+o", "-O", "+O", "--rcfile", "--init-file") {
			i++
			continue
		}
		if w == "-s" {
			return false
		}
		if !strings.HasPrefix(w, "-") {
			return true
		}
		if !strings.HasPrefix(w, "--") && strings.ContainsRune(w[1:], 'c') {
			return true
		}
	}
	return false
}

func newCommand(ce *syntax.CallExpr) *command {
	if len(ce.Args) == 0 {
		return nil
	}
	c := &command{}
	for _, w := range ce.Args {
		t := wordText(w)
		if hasIFS(w) {
			// ${IFS} is whitespace: rm${IFS}-rf${IFS}/ runs as rm -rf /.
			c.words = append(c.words, strings.Fields(t)...)
			continue
		}
		c.words = append(c.words, t)
	}
	if len(c.words) == 0 {
		return nil
	}
	c.peel()
	return c
}

func hasIFS(w *syntax.Word) bool {
	found := false
	syntax.Walk(w, func(n syntax.Node) bool {
		if p, ok := n.(*syntax.ParamExp); ok && p.Param != nil && p.Param.Value == "IFS" {
			found = true
		}
		return !found
	})
	return found
}

// wordText renders a word the way the shell would see it after quote removal, with
// expansions kept as their source spelling.
func wordText(w *syntax.Word) string {
	var sb strings.Builder
	for _, p := range w.Parts {
		partText(&sb, p, false)
	}
	return sb.String()
}

func partText(sb *strings.Builder, p syntax.WordPart, quoted bool) {
	switch p := p.(type) {
	case *syntax.Lit:
		sb.WriteString(unescape(p.Value, quoted))
	case *syntax.SglQuoted:
		sb.WriteString(p.Value)
	case *syntax.DblQuoted:
		for _, q := range p.Parts {
			partText(sb, q, true)
		}
	case *syntax.ParamExp:
		if p.Param != nil && p.Param.Value == "IFS" {
			sb.WriteByte(' ')
			return
		}
		sb.WriteByte('$')
		if p.Param != nil {
			sb.WriteString(p.Param.Value)
		}
	case *syntax.CmdSubst:
		sb.WriteString("$(…)")
	case *syntax.ProcSubst:
		sb.WriteString("<(…)")
	case *syntax.ArithmExp:
		sb.WriteString("$((…))")
	case *syntax.ExtGlob:
		sb.WriteString(p.Op.String())
		if p.Pattern != nil {
			sb.WriteString(p.Pattern.Value)
		}
		sb.WriteByte(')')
	default:
		sb.WriteString("?")
	}
}

// unescape undoes backslash escapes: every one outside quotes, and only \" \\ \$ \`
// inside double quotes. A backslash-newline (line continuation) disappears.
func unescape(s string, quoted bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			next := s[i+1]
			if next == '\n' {
				i++
				continue
			}
			if !quoted || strings.IndexByte("\"\\$`", next) >= 0 {
				sb.WriteByte(next)
				i++
				continue
			}
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
}

// Wrappers that run their operand as a command, and the options of each that take a
// separate value.
var wrapperArgOpts = map[string]map[string]bool{
	"sudo":       {"-u": true, "-g": true, "-h": true, "-p": true, "-C": true, "-D": true, "-r": true, "-t": true, "-U": true, "-T": true, "--user": true, "--group": true, "--host": true, "--prompt": true, "--chdir": true},
	"doas":       {"-u": true, "-C": true},
	"env":        {"-u": true, "--unset": true, "-C": true, "--chdir": true, "-S": true, "--split-string": true, "-a": true, "--argv0": true},
	"exec":       {"-a": true},
	"nohup":      {},
	"setsid":     {},
	"time":       {"-f": true, "--format": true, "-o": true, "--output": true},
	"builtin":    {},
	"command":    {},
	"nice":       {"-n": true, "--adjustment": true},
	"ionice":     {"-c": true, "--class": true, "-n": true, "--classdata": true},
	"stdbuf":     {"-i": true, "-o": true, "-e": true, "--input": true, "--output": true, "--error": true},
	"timeout":    {"-s": true, "--signal": true, "-k": true, "--kill-after": true},
	"chroot":     {"--userspec": true, "--groups": true},
	"xargs":      {"-I": true, "-n": true, "-P": true, "-d": true, "-E": true, "-L": true, "-s": true, "-a": true, "--max-args": true, "--max-procs": true, "--delimiter": true, "--arg-file": true},
	"busybox":    {},
	"toybox":     {},
	"unbuffer":   {},
	"caffeinate": {},
}

// positional operands a wrapper takes before the command (timeout DURATION, chroot DIR).
var wrapperOperands = map[string]int{"timeout": 1, "chroot": 1}

// peel strips wrappers (sudo, env, nohup, xargs, timeout, ...) so name is the program
// that really runs.
func (c *command) peel() {
	w := c.words
	for guard := 0; guard < 16 && len(w) > 0; guard++ {
		base := strings.ToLower(path.Base(w[0]))
		opts, isWrapper := wrapperArgOpts[base]
		if !isWrapper {
			break
		}
		if base == "command" && len(w) > 1 && (w[1] == "-v" || w[1] == "-V") {
			break // command -v only looks the name up
		}
		c.wrappers = append(c.wrappers, base)
		i := 1
		for i < len(w) {
			a := w[i]
			if a == "--" {
				i++
				break
			}
			if base == "env" && strings.Contains(a, "=") && !strings.HasPrefix(a, "-") {
				i++
				continue
			}
			if !strings.HasPrefix(a, "-") || a == "-" {
				break
			}
			if base == "sudo" || base == "doas" {
				c.sudoArgs = append(c.sudoArgs, a)
			}
			i++
			if opts[a] && i < len(w) {
				if base == "sudo" || base == "doas" {
					c.sudoArgs = append(c.sudoArgs, w[i])
				}
				i++
			}
		}
		for n := wrapperOperands[base]; n > 0 && i < len(w); n-- {
			i++
		}
		w = w[i:]
	}
	if len(w) == 0 {
		if n := len(c.wrappers); n > 0 {
			c.name = c.wrappers[n-1]
			c.wrappers = c.wrappers[:n-1]
		}
		return
	}
	if strings.HasPrefix(w[0], "$") {
		c.name = "" // the program is chosen at run time
	} else {
		c.name = strings.ToLower(path.Base(w[0]))
	}
	c.args = w[1:]
}

func (c *command) has(wrapper string) bool {
	for _, w := range c.wrappers {
		if w == wrapper {
			return true
		}
	}
	return false
}
