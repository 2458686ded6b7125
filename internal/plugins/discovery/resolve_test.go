package discovery

import (
	"errors"
	"testing"
)

func TestResolveName(t *testing.T) {
	cands := []*Candidate{
		plug("disk-cleanup", ""),
		plug("observability/langfuse", "langfuse-tracer"),
		plug("image_gen/openai", "openai-image"),
		plug("web/openai", "openai-web"),
		plug("platforms/irc", "irc-platform"),
		plug("dup-a", "shared-name"),
		plug("dup-b", "shared-name"),
		plug("tools/disk-cleanup", "dc2"),
	}
	tests := []struct {
		name, want string
		ambiguous  []string
	}{
		{name: "disk-cleanup", want: "disk-cleanup"}, // exact key beats a leaf match
		{name: "observability/langfuse", want: "observability/langfuse"},
		{name: "langfuse-tracer", want: "observability/langfuse"},
		{name: "langfuse", want: "observability/langfuse"},
		{name: "irc", want: "platforms/irc"},
		{name: "irc-platform", want: "platforms/irc"},
		{name: "openai-web", want: "web/openai"},
		{name: "openai", ambiguous: []string{"image_gen/openai", "web/openai"}},
		{name: "shared-name", ambiguous: []string{"dup-a", "dup-b"}},
		{name: "nope"},
		{name: ""},
		{name: "image_gen"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ResolveName(cands, tt.name)
			switch {
			case tt.want != "":
				if err != nil || c.Key != tt.want {
					t.Fatalf("got %v, %v; want %s", c, err, tt.want)
				}
			case tt.ambiguous != nil:
				var ae *AmbiguousError
				if !errors.As(err, &ae) || len(ae.Keys) != len(tt.ambiguous) || ae.Keys[0] != tt.ambiguous[0] || ae.Keys[1] != tt.ambiguous[1] {
					t.Fatalf("got %v, %v; want ambiguity between %q", c, err, tt.ambiguous)
				}
			default:
				var nf *NotFoundError
				if !errors.As(err, &nf) || c != nil {
					t.Fatalf("got %v, %v; want not found", c, err)
				}
				if want := "Plugin '" + tt.name + "' is not installed or bundled."; err.Error() != want {
					t.Fatalf("error %q, want %q", err, want)
				}
			}
		})
	}
}
