package scan

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

type sample struct {
	id, want, sev, path, text string
	line                      int
}

// corpus reads testdata/rules.txt (format in its header).
func corpus(t *testing.T) []sample {
	t.Helper()
	f, err := os.Open("testdata/rules.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []sample
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var fields []string
		rest := line
		for len(fields) < 3 {
			rest = strings.TrimLeft(rest, " \t")
			i := strings.IndexAny(rest, " \t")
			if i < 0 {
				t.Fatalf("rules.txt:%d: want <id> <fire|pass> <path> <text>", n)
			}
			fields = append(fields, rest[:i])
			rest = rest[i+1:]
		}
		text := rest
		if strings.HasPrefix(text, `"`) {
			u, err := strconv.Unquote(text)
			if err != nil {
				t.Fatalf("rules.txt:%d: bad quoted text: %v", n, err)
			}
			text = u
		}
		s := sample{id: fields[0], path: fields[2], text: text, line: n}
		s.want, s.sev, _ = strings.Cut(fields[1], "=")
		if s.want != "fire" && s.want != "pass" {
			t.Fatalf("rules.txt:%d: want fire or pass, got %q", n, fields[1])
		}
		out = append(out, s)
	}
	return out
}

// The plugin declares these in requires_env for every corpus sample.
var corpusEnv = []string{"ACME_API_KEY", "OPENAI_API_KEY"}

func TestRuleCorpus(t *testing.T) {
	for _, s := range corpus(t) {
		t.Run(strconv.Itoa(s.line)+"_"+s.id+"_"+s.want, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, filepath.FromSlash(s.path))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			text := s.text
			if !strings.HasSuffix(text, "\n") {
				text += "\n"
			}
			if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := Scan(context.Background(), dir, Options{RequiresEnv: corpusEnv, Python: testPython(t)})
			if err != nil {
				t.Fatal(err)
			}
			var got []Finding
			for _, f := range res.Findings {
				if f.PatternID == s.id {
					got = append(got, f)
				}
			}
			switch {
			case s.want == "pass" && len(got) > 0:
				t.Errorf("rules.txt:%d: %s fired on a look-alike in %s:\n  %q\n  %+v", s.line, s.id, s.path, s.text, got)
			case s.want == "fire" && len(got) == 0:
				t.Errorf("rules.txt:%d: %s did not fire in %s:\n  %q\n  all findings: %+v", s.line, s.id, s.path, s.text, res.Findings)
			case s.want == "fire" && s.sev != "" && got[0].Severity != s.sev:
				t.Errorf("rules.txt:%d: %s severity %s, want %s (%s)", s.line, s.id, got[0].Severity, s.sev, got[0].Description)
			}
		})
	}
}

// Every rule has a sample that must fire and a look-alike that must not.
func TestCorpusCoversEveryRule(t *testing.T) {
	fire, pass := map[string]bool{}, map[string]bool{}
	for _, s := range corpus(t) {
		if s.want == "fire" {
			fire[s.id] = true
		} else {
			pass[s.id] = true
		}
	}
	ids := []string{"invisible_unicode", correlatedID, "undeclared_secret_env"}
	for _, r := range getRules() {
		ids = append(ids, r.id)
	}
	for _, id := range ids {
		if !fire[id] {
			t.Errorf("rules.txt has no sample that fires %s", id)
		}
		if !pass[id] {
			t.Errorf("rules.txt has no look-alike that must not fire %s", id)
		}
	}
}

// The prefilters are sound: a line a rule matches always holds one of its literals
// and its needed words, so running the rule only where they occur loses nothing.
// Checked on every corpus line.
func TestLiteralsCoverMatches(t *testing.T) {
	for _, s := range corpus(t) {
		for _, line := range strings.Split(s.text, "\n") {
			for _, r := range getRules() {
				if !r.match([]byte(line)) {
					continue
				}
				if !r.hasLiteral([]byte(line)) {
					t.Errorf("rules.txt:%d: %s matches %q but none of its literals %q occurs", s.line, r.id, line, r.lits)
				}
				if r.need != nil && !needsMet(lowerASCII([]byte(line)), r.need) {
					t.Errorf("rules.txt:%d: %s matches %q but its needed words %q are missing", s.line, r.id, line, r.need)
				}
			}
		}
	}
}
