package manifest

import (
	"fmt"
	"strconv"
	"strings"
)

// CheckRequiresHermes applies a manifest's requires_hermes to the running
// version. Clauses are comma-separated and all must hold; each is an
// operator (>=, <=, ==, !=, >, <) and a version, a bare version meaning >=.
// Versions compare as (major, minor, patch) from "v?X.Y.Z[-+...]". Anything
// unparseable — the running version or a clause's version — passes: a
// one-field gate should not lock a plugin out over notation.
func CheckRequiresHermes(spec, running string) error {
	if strings.TrimSpace(spec) == "" {
		return nil
	}
	cur, ok := versionTuple(running)
	if !ok {
		return nil
	}
	for _, clause := range strings.Split(spec, ",") {
		clause = strings.TrimSpace(clause)
		if clause == "" {
			continue
		}
		op, target := splitOperator(clause)
		want, ok := versionTuple(target)
		if !ok {
			continue
		}
		if !compare(op, cmpTuple(cur, want)) {
			return fmt.Errorf("requires hermes %s, running %s", spec, running)
		}
	}
	return nil
}

func splitOperator(clause string) (op, target string) {
	for _, o := range []string{">=", "<=", "==", "!=", ">", "<"} {
		if rest, ok := strings.CutPrefix(clause, o); ok {
			if t := strings.TrimSpace(rest); t != "" {
				return o, t
			}
			break
		}
	}
	return ">=", clause
}

func compare(op string, c int) bool {
	switch op {
	case ">=":
		return c >= 0
	case "<=":
		return c <= 0
	case "==":
		return c == 0
	case "!=":
		return c != 0
	case ">":
		return c > 0
	case "<":
		return c < 0
	}
	return true
}

func cmpTuple(a, b [3]int) int {
	for i := range a {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// versionTuple reads "v1.2.3-rc1" as (1, 2, 3); missing parts are 0, parts
// past the third are ignored, and a non-numeric part among the first three
// makes the version unparseable.
func versionTuple(v string) ([3]int, bool) {
	var t [3]int
	s := strings.TrimLeft(strings.TrimSpace(v), "v")
	if i := strings.IndexAny(s, "-+"); i >= 0 {
		s = s[:i]
	}
	parts := strings.Split(s, ".")
	for i := 0; i < 3 && i < len(parts); i++ {
		n, err := strconv.Atoi(strings.TrimSpace(parts[i]))
		if err != nil {
			return t, false
		}
		t[i] = n
	}
	return t, true
}
