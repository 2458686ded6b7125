package auth

import "testing"

func TestListHas(t *testing.T) {
	for _, c := range []struct {
		raw  string
		ids  []string
		want bool
	}{
		{"1,2,3", []string{"2"}, true},
		{" 1 , 22 ,3", []string{"22"}, true},
		{"1,22,3", []string{"2"}, false},
		{"", []string{""}, false},
		{",,", []string{""}, false},
		{"5,*", []string{"9", "*"}, true},
		{"12", []string{"1"}, false},
	} {
		if got := listHas(c.raw, c.ids...); got != c.want {
			t.Errorf("listHas(%q, %q) = %v, want %v", c.raw, c.ids, got, c.want)
		}
		// The same answer as splitting the list.
		split := false
		for _, id := range c.ids {
			split = split || contains(splitList(c.raw), id)
		}
		if split != c.want {
			t.Errorf("splitList(%q) disagrees: %v", c.raw, split)
		}
	}
}
