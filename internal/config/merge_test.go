package config

import (
	"slices"
	"strings"
	"testing"
)

func TestDocMerge(t *testing.T) {
	userFile := `# my notes, keep them
_config_version: 21

model:
  default: anthropic/claude-sonnet   # the usual one
  provider: openrouter

plugins:
  # what runs
  enabled: [mine]
  hook_callback_timeout: 45

streaming: true # added by hand
`
	tests := []struct {
		name        string
		src         string
		over        map[string]any
		want        string // the whole file after the merge
		wantChanged []string
		wantErr     string
	}{
		{
			name: "nix keys win, user keys and comments stay",
			src:  userFile,
			over: map[string]any{
				"model":    map[string]any{"default": "openai/gpt-5"},
				"plugins":  map[string]any{"enabled": []any{"nix-one", "mine"}},
				"toolsets": []any{"all"},
			},
			want: `# my notes, keep them
_config_version: 21

model:
  default: openai/gpt-5   # the usual one
  provider: openrouter

plugins:
  # what runs
  enabled: [nix-one, mine]
  hook_callback_timeout: 45

streaming: true # added by hand
toolsets:
  - all
`,
			wantChanged: []string{"model.default", "plugins.enabled", "toolsets"},
		},
		{
			name:        "nothing to change writes nothing",
			src:         userFile,
			over:        map[string]any{"model": map[string]any{"provider": "openrouter"}, "streaming": true, "plugins": map[string]any{}},
			want:        userFile,
			wantChanged: nil,
		},
		{
			name:        "a mapping replaces a scalar",
			src:         "model: gpt-4 # old style\n",
			over:        map[string]any{"model": map[string]any{"default": "gpt-5", "provider": "openai"}},
			want:        "model: # old style\n  default: gpt-5\n  provider: openai\n",
			wantChanged: []string{"model"},
		},
		{
			name:        "a scalar replaces a mapping",
			src:         "display:\n  skin: dark\n  busy_input_mode: queue\n",
			over:        map[string]any{"display": "plain"},
			want:        "display: plain\n",
			wantChanged: []string{"display"},
		},
		{
			name:        "new nested keys into an empty file",
			src:         "",
			over:        map[string]any{"platforms": map[string]any{"telegram": map[string]any{"enabled": true, "extra": map[string]any{"base_url": "http://127.0.0.1:1"}}}},
			want:        "platforms:\n  telegram:\n    enabled: true\n    extra:\n      base_url: \"http://127.0.0.1:1\"\n",
			wantChanged: []string{"platforms"},
		},
		{
			name:        "null is a value like any other",
			src:         "memory:\n  provider: honcho\n",
			over:        map[string]any{"memory": map[string]any{"provider": nil}},
			want:        "memory:\n  provider: null\n",
			wantChanged: []string{"memory.provider"},
		},
		{
			name:    "a value that cannot be written is refused",
			src:     userFile,
			over:    map[string]any{"model": map[string]any{"default": struct{}{}}},
			want:    userFile,
			wantErr: "unsupported value type",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Parse([]byte(tt.src), "config.yaml")
			if err != nil {
				t.Fatal(err)
			}
			changed, err := d.Merge(tt.over)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if got := string(d.Bytes()); got != tt.want {
				t.Errorf("file after merge:\n%s\nwant:\n%s", got, tt.want)
			}
			if !slices.Equal(changed, tt.wantChanged) {
				t.Errorf("changed %q, want %q", changed, tt.wantChanged)
			}
		})
	}
}

// A merge that fails halfway leaves the document as it was, not half merged.
func TestDocMergeAllOrNothing(t *testing.T) {
	src := "a: 1\nz:\n  y: 1\n"
	d, err := Parse([]byte(src), "config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// "a" sorts first and is set; then z's empty key cannot be written.
	_, err = d.Merge(map[string]any{"a": 2, "z": map[string]any{"": 1}})
	if err == nil {
		t.Fatal("merge of an invalid key succeeded")
	}
	if got := string(d.Bytes()); got != src {
		t.Errorf("document changed by a failed merge:\n%s", got)
	}
}
