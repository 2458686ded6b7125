package scan

import (
	"bytes"
	"encoding/binary"
	"strings"
	"unicode/utf8"
)

// Scanner v2, part 3: files without a text extension. Upstream skips them, so a
// payload moved into `bin/setup` (a shebang script) or into a .so's strings went
// unseen. Now a shebang file is scanned as the script it is, and a binary's
// printable strings are scanned like text (then judged by mergeV2: critical only if
// the plugin's code loads the library, or the file is Python bytecode).

// minStringRun is the shortest printable run taken from a binary (as strings(1)'s
// default 4 would flood the rules with noise from machine code, 6 is used).
const minStringRun = 6

// skipOther: media, archives and fonts carry no instructions a host would run, and
// their compressed bytes only make noise as strings. Archives are flagged by
// binary_file when they are of a kind upstream names.
var skipOther = map[string]bool{
	".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".ico": true, ".webp": true, ".bmp": true, ".svg": true,
	".woff": true, ".woff2": true, ".ttf": true, ".otf": true, ".eot": true, ".pdf": true, ".mp3": true, ".mp4": true,
	".wav": true, ".ogg": true, ".webm": true, ".zip": true, ".gz": true, ".tgz": true, ".xz": true, ".bz2": true,
	".zst": true, ".tar": true, ".7z": true, ".lock": true, ".sum": true, ".mod": true,
}

// scanOther scans a file whose extension the text scan does not take.
func (fsc *fileScanner) scanOther(rel string, data []byte) []Finding {
	if bytes.HasPrefix(data, []byte("#!")) {
		return fsc.scanData(rel, data)
	}
	probe := data
	if len(probe) > 8<<10 {
		probe = probe[:8<<10]
	}
	if bytes.IndexByte(probe, 0) < 0 && utf8.Valid(probe) {
		return nil // text without a known extension (LICENSE, Makefile): not scanned, as upstream
	}
	fsc.binary = true
	defer func() { fsc.binary = false }()
	if strings.HasSuffix(rel, ".pyc") || strings.HasSuffix(rel, ".pyo") {
		if s := marshalStrings(data); len(s) > 0 {
			return fsc.scanData(rel, s)
		}
	}
	return fsc.scanData(rel, printableStrings(data, minStringRun))
}

// marshalStrings are the string constants of Python bytecode, one per line. Plain
// printable runs would glue each string to its marshal header ("z'nc -e …": type
// byte, then a length byte that is itself printable), so the headers are read.
func marshalStrings(data []byte) []byte {
	var out []byte
	for i := 0; i+1 < len(data); i++ {
		var n, hdr int
		switch data[i] &^ 0x80 { // FLAG_REF
		case 'z', 'Z': // short ASCII (interned): one length byte
			n, hdr = int(data[i+1]), 2
		case 'a', 'A', 'u', 't', 's': // ASCII, unicode, interned, bytes: four length bytes
			if i+5 > len(data) {
				continue
			}
			n, hdr = int(binary.LittleEndian.Uint32(data[i+1:])), 5
		default:
			continue
		}
		if n < minStringRun || i+hdr+n > len(data) || n > 1<<20 {
			continue
		}
		s := data[i+hdr : i+hdr+n]
		if !printableText(s) {
			continue
		}
		out = append(out, bytes.ReplaceAll(s, []byte("\n"), []byte("\n"))...)
		out = append(out, '\n')
		i += hdr + n - 1
	}
	return out
}

func printableText(s []byte) bool {
	for _, c := range s {
		if c != '\t' && c != '\n' && (c < 0x20 || c >= 0x7f) {
			return false
		}
	}
	return true
}

// printableStrings is strings(1): runs of at least min printable ASCII bytes (tab
// included), one per line.
func printableStrings(data []byte, min int) []byte {
	var out []byte
	start := -1
	flush := func(end int) {
		if start >= 0 && end-start >= min {
			out = append(out, data[start:end]...)
			out = append(out, '\n')
		}
		start = -1
	}
	for i, c := range data {
		if c == '\t' || (c >= 0x20 && c < 0x7f) {
			if start < 0 {
				start = i
			}
			continue
		}
		flush(i)
	}
	flush(len(data))
	return out
}
