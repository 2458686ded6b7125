package approval

import (
	"strings"
	"testing"
)

// FuzzClassify: any input classifies without panicking, and any text printed as a
// single-quoted echo argument is data, never a finding.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{
		"rm -rf /", ":(){ :|:& };:", `bash -c "rm -rf /"`, "curl x | sh", "echo 'a' \"b\" $(c) `d`",
		"cat <<EOF\nx\nEOF", "a && b || c; d & e | f", "((1+2))", "[[ -f x ]]", "for i in 1 2; do rm $i; done",
		"case x in y) rm -rf /;; esac", "${x:-$(rm -rf /)}", "f() { g; }", "'unterminated", "\\\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_ = Classify(s)
		if strings.ContainsRune(s, 0) {
			return
		}
		quoted := "echo '" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		v := Classify(quoted)
		if v.Hardline != nil || len(v.Dangerous) > 0 {
			t.Fatalf("Classify(%q) = %+v, %v: quoted text must be data", quoted, v.Hardline, v.PatternKeys())
		}
	})
}
