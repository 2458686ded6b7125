package limits

// CheckJSON applies k's caps to a JSON document. It counts, outside strings,
// the open arrays and objects (depth) and every opening, comma and colon
// (values), so a document it accepts builds at most about MaxNodes values.
// It does not validate JSON: the parser that runs next does.
func CheckJSON(data []byte, file string, k Kind) error {
	all := data
	data = data[:min(len(data), k.MaxBytes)] // the size is checked after these, see CheckYAML
	depth, nodes, line := 0, 0, 1
	inString := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if c == '\n' {
			line++
			continue
		}
		if inString {
			switch c {
			case '\\':
				i++ // the escaped byte cannot end the string (a newline there is invalid JSON anyway)
				if i < len(data) && data[i] == '\n' {
					line++
				}
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			if depth++; depth > k.MaxDepth {
				return refuse(file, line, k, ErrTooDeep, k.MaxDepth)
			}
			fallthrough
		case ',', ':':
			if nodes++; nodes > k.MaxNodes {
				return refuse(file, line, k, ErrTooManyNodes, k.MaxNodes)
			}
		case ']', '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return checkSize(all, file, k)
}
