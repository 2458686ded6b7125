package scan

import (
	"bytes"
	"regexp"
	"strings"

	"github.com/hermes-go/hermes/internal/lazyre"
)

// Scanner v2, part 4: what a finding's text is for. Three judgements, each only
// lowering or dropping a finding, each on evidence in the same file:
//   - docs: an attack phrase quoted in explanatory prose (a code span, quotes, a
//     blockquote, a fence, introduced as an example, or under a heading about
//     security that does not itself address the agent) is at most high (caution);
//     the same phrase addressed to the agent keeps its severity;
//   - deny-lists: a rule's text that sits only in the string literals of a
//     collection (list/set/tuple/regex) bound to a name the file uses for matching
//     (`in NAME`, `NAME.search(`) and never runs is the guard's vocabulary: dropped;
//   - compound names: a tool name glued into an identifier (`my-socat-helper`) is a
//     name, not a command: dropped.

var (
	docHeading   = lazyre.New(`^\s{0,3}(#{1,6})\s+(.*)$`)
	aboutAttacks = lazyre.New(`(?i)secur|safety|safe\b|threat|attack|injection|jailbreak|abuse|malicious|exploit|` +
		`example|detect|defen|guard|protect|block|filter|warning|risk|red[- ]team|what .* catch|how .* works`)
	exampleIntro = lazyre.New(`(?i)\be\.g\.|\bfor (?:example|instance)\b|\bsuch as\b|\bexamples?\b|\blike\b|\bphrases?\b|` +
		`\battackers?\b|\bmalicious\b|\bcontains?\b|\bdetects?\b|\bflags?\b|\bblocks?\b|\bcatch(?:es)?\b|\bpatterns?\b|\bsays?\b|\bwrites?\b|\bquot(?:e|es|ed|ing)\b`)
	// addressesAgent: the line speaks to the model in the imperative.
	addressesAgent = lazyre.New(`(?i)^\W*(?:ignore|disregard|forget|override|pretend|act\s+as|respond|answer|reply|output|reveal|send|` +
		`do\s+not\s+tell|don't\s+tell|never\s+tell|from\s+now\s+on|you\s+(?:are|must|will|should|have)|always|before\s+answering|assistant\s*:|system\s*:)`)
	docExt = map[string]bool{".md": true, ".txt": true, ".rst": true, ".html": true, ".markdown": true}
)

// judge applies the three judgements to one file's findings.
func (v *v2File) judge(in []Finding) []Finding {
	out := in[:0]
	isDoc := docExt[v.st.ext] || strings.HasPrefix(strings.ToLower(v.base), "readme")
	for _, f := range in {
		if f.Category == factCategory || f.Line == 0 {
			out = append(out, f)
			continue
		}
		line := v.line(f.Line)
		if compoundNameOnly(f.PatternID, line) {
			continue
		}
		if v.st.pc.code && f.Category != "credential_exposure" && v.denyListMember(f, line) {
			continue
		}
		if isDoc && f.Category == "injection" && f.Severity == sevCritical && v.explanatory(f, line) {
			f.Severity = sevHigh
			f.Description += " (quoted as an example in documentation, not addressed to the agent; at most caution)"
		}
		if !isDoc && f.Category == "injection" && f.Severity == sevCritical && quotedExample(f, line) {
			f.Severity = sevHigh
			f.Description += " (quoted as an example in a description, not addressed to the agent; at most caution)"
		}
		out = append(out, f)
	}
	return out
}

// explanatory: the line quotes the attack rather than making it.
func (v *v2File) explanatory(f Finding, line []byte) bool {
	r := getRuleByID()[f.PatternID]
	if r == nil {
		return false
	}
	loc := r.locator().FindIndex(line)
	if loc == nil {
		return false
	}
	t := bytes.TrimLeft(line, " \t")
	if bytes.HasPrefix(t, []byte(">")) || v.inFence(f.Line) || insideQuotes(line, loc[0], loc[1]) {
		return true
	}
	before := line[:loc[0]]
	if exampleIntro.Match(before) {
		return true
	}
	if prev := v.prevText(f.Line); prev != nil && bytes.HasSuffix(bytes.TrimSpace(prev), []byte(":")) && exampleIntro.Match(prev) {
		return true
	}
	// Under a heading about security, prose is explanation unless it addresses the
	// agent: a payload placed under "## Security" still reads as an order.
	if h := v.heading(f.Line); h != "" && aboutAttacks.MatchString(h) && !addressesAgent.Match(stripListMarker(t)) {
		return true
	}
	return false
}

// quotedExample: in a tool description, a schema or a manifest (a string in code or
// YAML), every hit is quoted inside that text and introduced as an example ("e.g.
// 'ignore all previous instructions'"), and its sentence does not address the agent.
// The whole string being quoted proves nothing there, so the quote must open right
// before the phrase and the introduction must be near.
func quotedExample(f Finding, line []byte) bool {
	r := getRuleByID()[f.PatternID]
	if r == nil {
		return false
	}
	hits := r.locator().FindAllIndex(line, -1)
	if len(hits) == 0 {
		return false
	}
	for _, h := range hits {
		pre := bytes.TrimRight(line[:h[0]], " ")
		q := ""
		for _, o := range []string{"'", `"`, "`", "“", "‘", `\"`} {
			if bytes.HasSuffix(pre, []byte(o)) {
				q = o
			}
		}
		closer := map[string]string{"“": "”", "‘": "’"}[q]
		if closer == "" {
			closer = q
		}
		if q == "" || !bytes.Contains(line[h[1]:], []byte(closer)) {
			return false
		}
		window := pre[max(0, len(pre)-len(q)-48) : len(pre)-len(q)]
		if !exampleIntro.Match(window) {
			return false
		}
		sentence := window
		if i := bytes.LastIndexAny(window, ".!?"); i >= 0 && !bytes.HasSuffix(bytes.ToLower(window[:i+1]), []byte("e.g.")) {
			sentence = window[i+1:]
		}
		if addressesAgent.Match(bytes.TrimLeft(sentence, " \t\"',:")) {
			return false
		}
	}
	return true
}

func stripListMarker(t []byte) []byte {
	t = bytes.TrimLeft(t, "-*+ \t")
	for len(t) > 0 && t[0] >= '0' && t[0] <= '9' {
		t = t[1:]
	}
	return bytes.TrimLeft(t, ".) \t*_")
}

// insideQuotes: [s,e) lies inside a code span or a quoted phrase on the line.
func insideQuotes(line []byte, s, e int) bool {
	pairs := [][2]string{{"`", "`"}, {`"`, `"`}, {"“", "”"}, {"«", "»"}, {"'", "'"}}
	for _, p := range pairs {
		open := bytes.LastIndex(line[:s], []byte(p[0]))
		if open < 0 {
			continue
		}
		// An apostrophe in a word ("don't") is not a quote mark.
		if p[0] == "'" && open > 0 && isWordByte(line[open-1]) {
			continue
		}
		if bytes.Count(line[:s], []byte(p[0]))%2 == 0 && p[0] == p[1] {
			continue
		}
		if bytes.Contains(line[e:], []byte(p[1])) {
			return true
		}
	}
	return false
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func (v *v2File) inFence(n int) bool {
	in := false
	for i := 1; i < n; i++ {
		t := bytes.TrimLeft(v.line(i), " ")
		if bytes.HasPrefix(t, []byte("```")) || bytes.HasPrefix(t, []byte("~~~")) {
			in = !in
		}
	}
	return in
}

func (v *v2File) prevText(n int) []byte {
	for i := n - 1; i >= 1 && i >= n-3; i-- {
		if l := bytes.TrimSpace(v.line(i)); len(l) > 0 {
			return l
		}
	}
	return nil
}

func (v *v2File) heading(n int) string {
	for i := n - 1; i >= 1; i-- {
		if m := docHeading.FindSubmatch(v.line(i)); m != nil {
			return string(m[2])
		}
	}
	return ""
}

// ── deny-lists ──

var (
	collectionOwner = lazyre.New(`^\s*(?:(?:const|let|var|final|static|export)\s+)*([A-Za-z_][\w.]*)\s*(?::[^=]*?)?(?::=|=)\s*` +
		`(?:frozenset|set|tuple|list|re\.compile|regexp\.MustCompile|new\s+Set|new\s+RegExp|Object\.freeze|\[\]string|map\[string\]\w+)?\s*[\[({]`)
	goVarOwner = lazyre.New(`^\s*(?:var\s+)?([A-Za-z_]\w*)\s*=\s*(?:\[\]string|map\[string\]\w+)\s*\{`)
)

// denyListMember: f's text is an entry of a collection the file only matches against.
func (v *v2File) denyListMember(f Finding, line []byte) bool {
	r := getRuleByID()[f.PatternID]
	if r == nil || execOnLine.Match(line) || !insideLiteral(line, r.locator()) {
		return false
	}
	owner := v.ownerOf(f.Line)
	ol := v.line(owner)
	m := collectionOwner.FindSubmatch(ol)
	if m == nil {
		m = goVarOwner.FindSubmatch(ol)
	}
	if m == nil || (owner != f.Line && execOnLine.Match(ol)) {
		return false
	}
	name := string(m[1])
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	q := regexp.QuoteMeta(name)
	member := regexp.MustCompile(`(\bfor\s+[\w, ()]+?\s+)?\bin\s+(?:self\.|cls\.|\w+\.)?` + q + `\b`)
	matched := regexp.MustCompile(`\b` + q + `\s*\.\s*(?:search|match|fullmatch|findall|finditer|test|has|includes|` +
		`MatchString|Match|FindString\w*|__contains__|some|find)\s*\(|(?:slices\.Contains|strings\.Contains\w*)\s*\(\s*` + q + `\b|range\s+` + q + `\b|` +
		`\b` + q + `\s*\[\s*\w+\s*\]\s*(?:;|$|\)|\s*[!=]=)|\b(?:any|all)\s*\([^)\n]*\b` + q + `\b`)
	run := regexp.MustCompile(`\b(?:system|popen|Popen|run|call|check_output|exec|eval|spawn\w*|execSync|Command)\s*\([^)\n]*\b` + q + `\b`)
	used := false
	for i := 1; i <= v.numLines(); i++ {
		if i == owner {
			continue
		}
		l := v.line(i)
		if run.Match(l) {
			return false
		}
		used = used || matched.Match(l) || membership(member, l)
	}
	return used
}

// membership: `x in NAME`, or `for w in NAME` inside a test (any/all/if on the
// line); a bare loop over the entries may well run each one.
func membership(re *regexp.Regexp, l []byte) bool {
	for _, m := range re.FindAllSubmatchIndex(l, -1) {
		if m[2] < 0 || bytes.Contains(l, []byte("any(")) || bytes.Contains(l, []byte("all(")) || bytes.Contains(l, []byte(" if ")) {
			return true
		}
	}
	return false
}

// ownerOf is the first line of the statement holding line n (open brackets carry a
// statement over lines).
func (v *v2File) ownerOf(n int) int {
	owner, depth := 1, 0
	for i := 1; i < n; i++ {
		if depth <= 0 {
			owner = i
		}
		bare := quotedSpan.ReplaceAll(v.line(i), nil)
		depth += bytes.Count(bare, []byte("(")) + bytes.Count(bare, []byte("[")) + bytes.Count(bare, []byte("{")) -
			bytes.Count(bare, []byte(")")) - bytes.Count(bare, []byte("]")) - bytes.Count(bare, []byte("}"))
		depth = max(depth, 0)
	}
	if depth <= 0 {
		return n
	}
	return owner
}

// ── compound names ──

var wordRuleIDs = map[string]bool{"reverse_shell": true, "tunnel_service": true, "format_filesystem": true,
	"crypto_mining": true, "mining_indicators": true, "sudo_usage": true}

// compoundNameOnly: every match of the rule on the line is part of a hyphenated or
// underscored name such as my-socat-helper or ngrok_status.
func compoundNameOnly(id string, line []byte) bool {
	if !wordRuleIDs[id] {
		return false
	}
	r := getRuleByID()[id]
	if r == nil {
		return false
	}
	hits := r.locator().FindAllIndex(line, -1)
	if len(hits) == 0 {
		return false
	}
	for _, h := range hits {
		glued := func(i, dir int) bool {
			j := i + dir
			return i >= 0 && i < len(line) && (line[i] == '-' || line[i] == '_') && j >= 0 && j < len(line) && isWordByte(line[j])
		}
		if !glued(h[0]-1, -1) && !glued(h[1], 1) {
			return false
		}
		// `socat -d …` after a name is still a command: a space follows a command word.
		if h[1] < len(line) && line[h[1]] == ' ' && !glued(h[0]-1, -1) {
			return false
		}
	}
	return true
}
