package limits

import "bytes"

// CheckYAML applies k's caps to a YAML document in one pass over its bytes.
//
// Depth is over-estimated as the block levels (a stack of indentation
// columns, a compact "- " list under a key at the same column counting as
// its own level, each further "- " on a line one more) plus the open flow
// collections ("[", "{" where a node starts, outside quotes and comments).
// Values are counted as lines plus ": " and ", " indicators and aliases.
//
// Where the pass cannot tell what the parser will do, it counts more, never
// less: a quote, comment or block scalar is taken as one only where the
// parser surely takes it so (a quote at a node start, "#" after a space, a
// block scalar's content only while indented past its key). It does not
// validate YAML: the parser that runs next does.
func CheckYAML(data []byte, file string, k Kind) error {
	s := yamlScan{file: file, k: k}
	if s.k.MaxDepth > maxStack {
		s.k.MaxDepth = maxStack
	}
	// The first MaxBytes say more than "too large" when a bomb is also too
	// deep; the size is checked after them.
	all := data
	data = data[:min(len(data), k.MaxBytes)]
	for start := 0; start < len(data); {
		end := bytes.IndexByte(data[start:], '\n')
		next := len(data)
		if end < 0 {
			end = len(data)
		} else {
			end += start
			next = end + 1
		}
		s.line++
		l := data[start:end]
		if n := len(l); n > 0 && l[n-1] == '\r' {
			l = l[:n-1]
		}
		if err := s.scanLine(l); err != nil {
			return err
		}
		start = next
	}
	return checkSize(all, file, k)
}

type blockLevel struct {
	col int
	seq bool // a "- " list
}

type yamlScan struct {
	file  string
	k     Kind
	line  int
	stack [maxStack]blockLevel
	sp    int
	flow  int  // open flow collections
	nodes int  // values so far
	quote byte // the open quoted scalar's quote, which may span lines
	// block: inside a block scalar (| or >), whose content lines are those
	// indented past blockT.
	block  bool
	blockT int
}

func (s *yamlScan) tooDeep() error { return refuse(s.file, s.line, s.k, ErrTooDeep, s.k.MaxDepth) }

func (s *yamlScan) count() error {
	if s.nodes++; s.nodes > s.k.MaxNodes {
		return refuse(s.file, s.line, s.k, ErrTooManyNodes, s.k.MaxNodes)
	}
	return nil
}

func (s *yamlScan) push(col int, seq bool) error {
	if s.sp+1+s.flow > s.k.MaxDepth {
		return s.tooDeep()
	}
	s.stack[s.sp] = blockLevel{col, seq}
	s.sp++
	return nil
}

func (s *yamlScan) openFlow() error {
	if s.flow++; s.sp+s.flow > s.k.MaxDepth {
		return s.tooDeep()
	}
	return s.count()
}

// place puts a block line starting at column col (a "- " entry when dash) on
// the indentation stack.
func (s *yamlScan) place(col int, dash bool) error {
	for s.sp > 0 && s.stack[s.sp-1].col > col {
		s.sp--
	}
	if s.sp == 0 || s.stack[s.sp-1].col < col {
		return s.push(col, dash)
	}
	top := s.stack[s.sp-1]
	switch {
	case dash && !top.seq: // a list in compact form under a key of the same column
		return s.push(col, true)
	case !dash && top.seq: // the key after such a list
		s.sp--
		if s.sp == 0 || s.stack[s.sp-1].col != col || s.stack[s.sp-1].seq {
			return s.push(col, false)
		}
	}
	return nil
}

func (s *yamlScan) scanLine(l []byte) error {
	if s.quote != 0 || s.flow > 0 {
		return s.scan(l, 0, false, -1)
	}
	indent := 0
	for indent < len(l) && l[indent] == ' ' {
		indent++
	}
	first := indent
	for first < len(l) && (l[first] == ' ' || l[first] == '\t') {
		first++
	}
	if first == len(l) {
		return nil // blank: also inside a block scalar
	}
	marker := indent == 0 && docMarker(l)
	if s.block {
		if indent > s.blockT && !marker {
			return nil
		}
		s.block = false
	}
	if l[first] == '#' {
		return nil
	}
	if err := s.count(); err != nil {
		return err
	}
	if marker {
		return s.scan(l, 3, true, 0)
	}
	if err := s.place(indent, indicator(l, indent)); err != nil {
		return err
	}
	return s.scan(l, indent, true, indent)
}

// docMarker reports a "---" or "..." line start.
func docMarker(l []byte) bool {
	return len(l) >= 3 && (string(l[:3]) == "---" || string(l[:3]) == "...") && indicator(l, 2)
}

// indicator reports whether l[i] is followed by a space, a tab or the line end,
// which makes "-", "?" and ":" indicators rather than part of a scalar.
func indicator(l []byte, i int) bool {
	return i+1 >= len(l) || l[i+1] == ' ' || l[i+1] == '\t'
}

// scan reads l from i. nodeStart: a node may begin here (block context).
// lastStart is the column of the last node begun on the line, which a block
// scalar's content must be indented past.
func (s *yamlScan) scan(l []byte, i int, nodeStart bool, lastStart int) error {
	prev, afterDash := byte(' '), false
	if i > 0 {
		prev = l[i-1]
	}
	for ; i < len(l); i++ {
		c := l[i]
		if s.quote != 0 {
			switch {
			case s.quote == '\'' && c == '\'':
				if i+1 < len(l) && l[i+1] == '\'' {
					i++
					continue
				}
				s.quote, nodeStart = 0, false
			case s.quote == '"' && c == '\\':
				i++
				continue
			case s.quote == '"' && c == '"':
				s.quote, nodeStart = 0, false
			}
			prev = c
			continue
		}
		if c == ' ' || c == '\t' {
			prev = c
			continue
		}
		if c == '#' && (prev == ' ' || prev == '\t') {
			return nil
		}
		if s.flow > 0 {
			if err := s.flowByte(c, prev); err != nil {
				return err
			}
			if s.flow == 0 {
				nodeStart = false // what follows a closed collection on its line is no new node
			}
			prev = c
			continue
		}
		if afterDash && c != '-' && c != '&' && c != '!' && c != '|' && c != '>' {
			// The entry's node: a level of its own, at its column ("- key: v"
			// then "  key2: v").
			afterDash = false
			if err := s.push(i, false); err != nil {
				return err
			}
		}
		switch {
		case nodeStart && (c == '[' || c == '{'):
			if err := s.openFlow(); err != nil {
				return err
			}
		case nodeStart && (c == '\'' || c == '"'):
			s.quote, lastStart = c, i
		case nodeStart && (c == '|' || c == '>'):
			s.block, s.blockT = true, lastStart
			if s.sp > 0 && s.stack[s.sp-1].col > s.blockT {
				s.blockT = s.stack[s.sp-1].col
			}
			return nil
		case nodeStart && c == '-' && indicator(l, i):
			if afterDash { // a further entry on the line: "- - x"
				if err := s.push(i, true); err != nil {
					return err
				}
				if err := s.count(); err != nil {
					return err
				}
			}
			lastStart, afterDash = i, true
		case nodeStart && c == '?' && indicator(l, i):
		case nodeStart && (c == '&' || c == '!'):
			// An anchor or tag: the node itself follows. It ends at a space or
			// at a flow indicator, which then opens the node.
			for i+1 < len(l) && !endsProperty(l[i+1]) {
				i++
			}
		case c == ':' && (indicator(l, i) || prev == '"' || prev == '\''):
			// A mapping value; after a quoted key it needs no space ("a":[1]).
			nodeStart = true
			if err := s.count(); err != nil {
				return err
			}
		case nodeStart:
			if c == '*' {
				if err := s.count(); err != nil {
					return err
				}
			}
			nodeStart, lastStart = false, i
		}
		prev = c
	}
	return nil
}

// flowByte handles c inside a flow collection, where "[", "{" always open one.
func (s *yamlScan) flowByte(c, prev byte) error {
	switch c {
	case '[', '{':
		return s.openFlow()
	case ']', '}':
		s.flow--
	case ',', ':', '*':
		return s.count()
	case '\'', '"':
		switch prev {
		case ' ', '\t', '[', '{', ',', ':':
			s.quote = c
		}
	}
	return nil
}

func endsProperty(c byte) bool {
	switch c {
	case ' ', '\t', '[', ']', '{', '}', ',':
		return true
	}
	return false
}
