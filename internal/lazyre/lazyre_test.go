package lazyre

import "testing"

func TestLazyCompile(t *testing.T) {
	r := New(`^a(b+)$`)
	if r.re != nil {
		t.Fatal("compiled before first use")
	}
	if !r.MatchString("abb") || r.MatchString("ac") {
		t.Error("MatchString")
	}
	if m := r.FindStringSubmatch("abbb"); len(m) != 2 || m[1] != "bbb" {
		t.Errorf("FindStringSubmatch = %q", m)
	}
	if first, again := r.Get(), r.Get(); first != again {
		t.Error("compiled twice")
	}
}

func TestInvalidPanicsOnUse(t *testing.T) {
	r := New(`(`)
	defer func() {
		if recover() == nil {
			t.Error("no panic for an invalid expression")
		}
	}()
	r.MatchString("x")
}
