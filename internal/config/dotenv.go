package config

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hermes-go/hermes/internal/home"
	"github.com/hermes-go/hermes/internal/lazyre"
	"github.com/hermes-go/hermes/internal/limits"
)

// envAssignment is one KEY=value found in a .env file; [start, end) covers its whole
// text up to the end of its last line (before the line ending).
type envAssignment struct {
	key, value string
	export     bool
	start, end int
}

// parseDotenv reads the KEY=value, export KEY=value, 'single' and "double" quoted forms
// (quoted values may span lines). Comments, blank lines and lines without '=' are skipped,
// as python-dotenv does.
func parseDotenv(data string) []envAssignment {
	var out []envAssignment
	pos := 0
	for pos < len(data) {
		eol := strings.IndexByte(data[pos:], '\n')
		if eol < 0 {
			eol = len(data)
		} else {
			eol += pos
		}
		start := pos
		pos = eol + 1
		line := strings.TrimRight(data[start:eol], "\r")
		rest := strings.TrimLeft(line, " \t")
		if rest == "" || rest[0] == '#' {
			continue
		}
		a := envAssignment{start: start}
		if after, ok := strings.CutPrefix(rest, "export"); ok && after != "" && (after[0] == ' ' || after[0] == '\t') {
			a.export = true
			rest = strings.TrimLeft(after, " \t")
		}
		eq := strings.IndexByte(rest, '=')
		if eq <= 0 {
			continue
		}
		a.key = strings.TrimSpace(rest[:eq])
		if strings.ContainsAny(a.key, " \t") {
			continue
		}
		val := strings.TrimLeft(rest[eq+1:], " \t")
		valStart := start + len(line) - len(val)
		a.end = start + len(line)
		if val != "" && (val[0] == '"' || val[0] == '\'') {
			if v, closeAt, ok := unquoteDotenv(data, valStart); ok {
				a.value = v
				// The record ends with the line holding the closing quote.
				if nl := strings.IndexByte(data[closeAt:], '\n'); nl >= 0 {
					a.end = closeAt + nl
					pos = a.end + 1
				} else {
					a.end = len(data)
					pos = len(data)
				}
				a.end = trimCR(data, a.end)
				out = append(out, a)
				continue
			}
		}
		if i := strings.Index(val, " #"); i >= 0 {
			val = val[:i]
		}
		if i := strings.Index(val, "\t#"); i >= 0 {
			val = val[:i]
		}
		a.value = strings.TrimSpace(val)
		out = append(out, a)
	}
	return out
}

func trimCR(data string, end int) int {
	if end > 0 && end <= len(data) && data[end-1] == '\r' {
		return end - 1
	}
	return end
}

// unquoteDotenv decodes the quoted value starting at data[at] (a quote character); it
// returns the value, the offset just past the closing quote, and false when unclosed.
func unquoteDotenv(data string, at int) (string, int, bool) {
	q := data[at]
	var b strings.Builder
	for i := at + 1; i < len(data); i++ {
		c := data[i]
		if c == q {
			return b.String(), i + 1, true
		}
		if c == '\\' && i+1 < len(data) {
			n := data[i+1]
			if q == '\'' {
				if n == '\'' || n == '\\' {
					b.WriteByte(n)
					i++
					continue
				}
				b.WriteByte(c)
				continue
			}
			if r, ok := dotenvEscapes[n]; ok {
				b.WriteByte(r)
				i++
				continue
			}
		}
		b.WriteByte(c)
	}
	return "", 0, false
}

var dotenvEscapes = map[byte]byte{
	'\\': '\\', '\'': '\'', '"': '"', 'a': '\a', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v',
}

// ReadDotenv reads a .env file into a map (a later assignment of a key wins); a missing
// file is an empty map. Values are taken literally: ${VAR} references are not expanded.
func ReadDotenv(path string) (map[string]string, error) {
	data, err := home.ReadFileLimit(path, limits.Dotenv.MaxBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if err := limits.CheckLines(data, path, limits.Dotenv); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, a := range parseDotenv(string(data)) {
		out[a.key] = a.value
	}
	return out, nil
}

var envKeyRE = lazyre.New(`^[A-Za-z_][A-Za-z0-9_]*$`)
var envBareRE = lazyre.New(`^[A-Za-z0-9_./:@,+=%-]*$`)

// quoteDotenv writes value so ReadDotenv and python-dotenv read it back unchanged: bare
// when safe, else single quotes (literal, no ${} expansion), else double quotes.
func quoteDotenv(value string) string {
	if envBareRE.MatchString(value) {
		return value
	}
	if !strings.ContainsAny(value, "'\\\n\r") {
		return "'" + value + "'"
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`, "\t", `\t`)
	return `"` + r.Replace(value) + `"`
}

// SetDotenv sets key=value in the .env file at path: every existing assignment of key is
// rewritten in place (keeping an "export " prefix), otherwise a line is appended. All
// other lines and comments stay as they are. The write is atomic, mode 0600, under the
// sidecar lock "<path>.lock".
func SetDotenv(ctx context.Context, path, key, value string) error {
	return UpdateDotenv(ctx, path, key, func(string, bool) (string, bool, error) { return value, true, nil })
}

// UpdateDotenv is SetDotenv for a value computed from the current one: fn gets the
// file's value of key (and whether the file assigns it), read under the lock, and
// returns the new value, or keep=false to delete every assignment of key. A
// read-modify-write through it is never lost to a concurrent writer of the file.
// When fn fails, or changes nothing, the file is not written.
func UpdateDotenv(ctx context.Context, path, key string, fn func(current string, ok bool) (value string, keep bool, err error)) error {
	if !envKeyRE.MatchString(key) {
		return fmt.Errorf("invalid environment variable name %q: use letters, digits and '_', not starting with a digit", key)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create directory for %s: %w", path, err)
	}
	unlock, err := lockFile(ctx, path+".lock")
	if err != nil {
		return err
	}
	defer unlock()
	target, err := writeTarget(path)
	if err != nil {
		return err
	}
	raw, err := home.ReadFileLimit(target, limits.Dotenv.MaxBytes)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if err := limits.CheckLines(raw, path, limits.Dotenv); err != nil {
		return err // never rewrite a file hermes did not read whole
	}
	data := string(raw)
	assignments := parseDotenv(data)
	current, found := "", false
	for _, a := range assignments {
		if a.key == key {
			current, found = a.value, true // the last one wins, as ReadDotenv reads it
		}
	}
	value, keep, err := fn(current, found)
	if err != nil {
		return err
	}
	if strings.ContainsRune(value, 0) {
		return fmt.Errorf("value for %s contains a NUL byte, which a .env file cannot hold", key)
	}
	line := key + "=" + quoteDotenv(value)

	var b strings.Builder
	pos := 0
	for _, a := range assignments {
		if a.key != key {
			continue
		}
		b.WriteString(data[pos:a.start])
		if keep {
			if a.export {
				b.WriteString("export ")
			}
			b.WriteString(line)
			pos = a.end
			continue
		}
		// Deleting: the assignment goes with its line ending.
		pos = a.end
		if strings.HasPrefix(data[pos:], "\r\n") {
			pos += 2
		} else if strings.HasPrefix(data[pos:], "\n") {
			pos++
		}
	}
	b.WriteString(data[pos:])
	if !found && keep {
		if data != "" && !strings.HasSuffix(data, "\n") {
			b.WriteString(newlineOf(data))
		}
		b.WriteString(line + newlineOf(data))
	}
	if b.String() == data {
		return nil
	}
	if err := writeAtomic(target, []byte(b.String()), 0o600, false); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func newlineOf(data string) string {
	if i := strings.IndexByte(data, '\n'); i > 0 && data[i-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}
