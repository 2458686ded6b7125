// Package yamlbomb gives tests an "alias bomb": a few hundred bytes of YAML whose
// aliases expand to 9^9 values, which a decoder copying aliases cannot hold.
package yamlbomb

import "strings"

// Source is the bomb as top-level keys a, b, ... i of one mapping.
func Source() string {
	src := "a: &a [x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for _, name := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		src += name + ": &" + name + " [" + strings.TrimSuffix(strings.Repeat("*"+prev+", ", 9), ", ") + "]\n"
		prev = name
	}
	return src
}
