package memory

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/config"
)

func TestStoreApply(t *testing.T) {
	ctx := context.Background()
	type step struct {
		action, target, content, old string
		ok                           bool
		errSub                       string
	}
	tests := []struct {
		name  string
		steps []step
		file  string // MEMORY.md afterwards
	}{
		{"add two", []step{{"add", "memory", "a fact", "", true, ""}, {"add", "memory", "another", "", true, ""}}, "a fact\n§\nanother"},
		{"duplicate is not added", []step{{"add", "memory", "x", "", true, ""}, {"add", "memory", "x", "", true, ""}}, "x"},
		{"replace by substring", []step{{"add", "memory", "uses vim", "", true, ""}, {"replace", "memory", "uses emacs", "vim", true, ""}}, "uses emacs"},
		{"remove", []step{{"add", "memory", "a", "", true, ""}, {"add", "memory", "b", "", true, ""}, {"remove", "memory", "", "a", true, ""}}, "b"},
		{"no match", []step{{"add", "memory", "a", "", true, ""}, {"remove", "memory", "", "zzz", false, "No entry matched 'zzz'"}}, "a"},
		{"ambiguous", []step{{"add", "memory", "cat one", "", true, ""}, {"add", "memory", "cat two", "", true, ""}, {"remove", "memory", "", "cat", false, "Multiple entries matched"}}, "cat one\n§\ncat two"},
		{"over the limit", []step{{"add", "memory", strings.Repeat("x", 30), "", true, ""}, {"add", "memory", strings.Repeat("y", 30), "", false, "would exceed the limit"}}, strings.Repeat("x", 30)},
		{"bad target", []step{{"add", "other", "x", "", false, "Invalid target 'other'"}}, ""},
		{"bad action", []step{{"forget", "memory", "x", "", false, "Unknown action 'forget'"}}, ""},
		{"add needs content", []step{{"add", "memory", " ", "", false, "Content is required"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s := NewStore(dir, config.MemorySettings{MemoryCharLimit: 40, UserCharLimit: 40})
			for i, st := range tt.steps {
				res, err := s.Apply(ctx, st.action, st.target, st.content, st.old)
				if err != nil {
					t.Fatal(err)
				}
				ok, _ := res["success"].(bool)
				msg, _ := res["error"].(string)
				if ok != st.ok || !strings.Contains(msg, st.errSub) {
					t.Fatalf("step %d: %v, want success %v error %q", i, res, st.ok, st.errSub)
				}
			}
			b, _ := os.ReadFile(filepath.Join(dir, "MEMORY.md"))
			if string(b) != tt.file {
				t.Errorf("MEMORY.md = %q, want %q", b, tt.file)
			}
		})
	}
}

func TestPromptBlock(t *testing.T) {
	dir := t.TempDir()
	s := NewStore(dir, config.MemorySettings{})
	if b := s.PromptBlock(true, true); b != "" {
		t.Fatalf("empty store gave %q", b)
	}
	ctx := context.Background()
	if _, err := s.Apply(ctx, "add", "user", "prefers short answers", ""); err != nil {
		t.Fatal(err)
	}
	b := s.PromptBlock(true, true)
	if !strings.Contains(b, "USER PROFILE (who the user is) [1% — 21/1375 chars]") || !strings.Contains(b, "prefers short answers") {
		t.Fatalf("block = %q", b)
	}
	if s.PromptBlock(true, false) != "" {
		t.Fatal("user_profile_enabled: false still shows USER.md")
	}
	// A file grown by hand far past its limit is cut.
	if err := os.WriteFile(filepath.Join(dir, "MEMORY.md"), []byte(strings.Repeat("z", 20000)), 0o600); err != nil {
		t.Fatal(err)
	}
	if b := s.PromptBlock(true, false); len(b) > 6000 || !strings.Contains(b, "truncated") {
		t.Fatalf("oversized MEMORY.md block is %d bytes", len(b))
	}
}
