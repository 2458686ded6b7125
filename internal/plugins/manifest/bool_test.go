package manifest

import "testing"

func TestBool(t *testing.T) {
	tests := []struct {
		in       any
		want, ok bool
	}{
		{true, true, true}, {false, false, true},
		{"yes", true, true}, {"Yes", true, true}, {"YES", true, true},
		{"no", false, true}, {"No", false, true}, {"NO", false, true},
		{"on", true, true}, {"On", true, true}, {"ON", true, true},
		{"off", false, true}, {"Off", false, true}, {"OFF", false, true},
		{"true", true, true}, {"True", true, true}, {"TRUE", true, true},
		{"false", false, true}, {"False", false, true}, {"FALSE", false, true},
		// Not booleans to PyYAML either.
		{"y", false, false}, {"n", false, false}, {"Y", false, false}, {"yES", false, false},
		{"oN", false, false}, {" yes", false, false}, {"1", false, false}, {"", false, false},
		{uint64(1), false, false}, {nil, false, false}, {[]any{true}, false, false},
	}
	for _, tc := range tests {
		got, ok := Bool(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Bool(%#v) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
