// Package memory is hermes' memory: the built-in store ($HERMES_HOME/memories/
// MEMORY.md and USER.md, written by the `memory` tool) and at most one external
// memory provider (a plugin selected by memory.provider), called around each
// turn by the agent through Manager. Everything a provider returns is
// untrusted: checked, bounded and sanitised before it reaches the model.
package memory

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/hermes-go/hermes/internal/config"
)

// EntryDelimiter separates entries in MEMORY.md and USER.md (upstream's).
const EntryDelimiter = "\n§\n"

// Targets of the memory tool.
const (
	TargetMemory = "memory"
	TargetUser   = "user"
)

// Store is the built-in memory: two files of §-separated entries, each bounded
// by a character limit (characters, not tokens: model-independent).
type Store struct {
	Dir         string // $HERMES_HOME/memories
	MemoryLimit int
	UserLimit   int

	mu sync.Mutex // one writer in this process; the file lock covers others
}

// NewStore returns the store of dir with the limits of s (defaults when 0).
func NewStore(dir string, s config.MemorySettings) *Store {
	st := &Store{Dir: dir, MemoryLimit: s.MemoryCharLimit, UserLimit: s.UserCharLimit}
	if st.MemoryLimit <= 0 {
		st.MemoryLimit = config.DefaultMemoryCharLimit
	}
	if st.UserLimit <= 0 {
		st.UserLimit = config.DefaultUserCharLimit
	}
	return st
}

func (s *Store) path(target string) string {
	if target == TargetUser {
		return filepath.Join(s.Dir, "USER.md")
	}
	return filepath.Join(s.Dir, "MEMORY.md")
}

func (s *Store) limit(target string) int {
	if target == TargetUser {
		return s.UserLimit
	}
	return s.MemoryLimit
}

// Entries reads target's entries (none when the file is missing).
func (s *Store) Entries(target string) ([]string, error) {
	b, err := os.ReadFile(s.path(target))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", s.path(target), err)
	}
	var out []string
	seen := map[string]bool{}
	for _, e := range strings.Split(string(b), EntryDelimiter) {
		if e = strings.TrimSpace(e); e != "" && !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	return out, nil
}

func chars(entries []string) int {
	if len(entries) == 0 {
		return 0
	}
	return utf8.RuneCountInString(strings.Join(entries, EntryDelimiter))
}

// Result is the memory tool's answer, in upstream's shape.
type Result map[string]any

// Apply runs one action (add, replace, remove) on target under the file lock.
func (s *Store) Apply(ctx context.Context, action, target, content, oldText string) (Result, error) {
	if target != TargetMemory && target != TargetUser {
		return Result{"success": false, "error": fmt.Sprintf("Invalid target '%s'. Use 'memory' or 'user'.", target)}, nil
	}
	content, oldText = strings.TrimSpace(content), strings.TrimSpace(oldText)
	switch action {
	case "add":
		if content == "" {
			return Result{"success": false, "error": "Content is required for 'add' action."}, nil
		}
	case "replace":
		if oldText == "" || content == "" {
			missing := "content"
			if oldText == "" {
				missing = "old_text"
			}
			return Result{"success": false, "error": fmt.Sprintf("%s is required for 'replace' action.", missing)}, nil
		}
	case "remove":
		if oldText == "" {
			return Result{"success": false, "error": "old_text is required for 'remove' action."}, nil
		}
	default:
		return Result{"success": false, "error": fmt.Sprintf("Unknown action '%s'. Use: add, replace, remove", action)}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", s.Dir, err)
	}
	unlock, err := config.LockFile(ctx, s.path(target)+".lock")
	if err != nil {
		return nil, err
	}
	defer unlock()
	entries, err := s.Entries(target)
	if err != nil {
		return nil, err
	}
	limit := s.limit(target)
	usage := func(n int) string { return fmt.Sprintf("%d/%d", n, limit) }
	var msg string
	switch action {
	case "add":
		for _, e := range entries {
			if e == content {
				return s.success(target, entries, "Entry already exists (no duplicate added)."), nil
			}
		}
		next := append(append([]string(nil), entries...), content)
		if n := chars(next); n > limit {
			return Result{"success": false, "error": fmt.Sprintf(
				"Memory at %d/%d chars. Adding this entry (%d chars) would exceed the limit. Consolidate now: use 'replace' to merge overlapping entries into shorter ones or 'remove' stale ones (see current_entries), then retry this add.",
				chars(entries), limit, utf8.RuneCountInString(content)), "current_entries": entries, "usage": usage(chars(entries))}, nil
		}
		entries, msg = next, "Entry added."
	case "replace", "remove":
		idx := -1
		distinct := map[string]bool{}
		for i, e := range entries {
			if strings.Contains(e, oldText) {
				if idx < 0 {
					idx = i
				}
				distinct[e] = true
			}
		}
		if idx < 0 {
			return Result{"success": false, "error": fmt.Sprintf("No entry matched '%s'. Check current_entries and retry with the exact text of the entry.", oldText),
				"current_entries": entries}, nil
		}
		if len(distinct) > 1 {
			return Result{"success": false, "error": fmt.Sprintf("Multiple entries matched '%s'. Be more specific.", oldText)}, nil
		}
		next := append([]string(nil), entries...)
		if action == "remove" {
			next = append(next[:idx], next[idx+1:]...)
			msg = "Entry removed."
		} else {
			next[idx] = content
			if n := chars(next); n > limit {
				return Result{"success": false, "error": fmt.Sprintf("Replacement would put memory at %d/%d chars. Shorten the new content, or remove other entries to make room.", n, limit),
					"current_entries": entries, "usage": usage(chars(entries))}, nil
			}
			msg = "Entry replaced."
		}
		entries = next
	}
	if err := config.WriteFileAtomic(s.path(target), []byte(strings.Join(entries, EntryDelimiter)), 0o600); err != nil {
		return nil, fmt.Errorf("write %s: %w", s.path(target), err)
	}
	return s.success(target, entries, msg), nil
}

func (s *Store) success(target string, entries []string, msg string) Result {
	n, limit := chars(entries), s.limit(target)
	pct := 0
	if limit > 0 {
		pct = min(100, n*100/limit)
	}
	return Result{"success": true, "done": true, "target": target, "usage": fmt.Sprintf("%d%% — %d/%d chars", pct, n, limit),
		"entry_count": len(entries), "message": msg, "note": "Write saved. This update is complete — do not repeat it."}
}

// PromptBlock is the snapshot of both files for the system prompt of a new
// session ("" when both are empty). Later writes change the files, not the
// prompt of a session already running (its cached prefix stays valid).
func (s *Store) PromptBlock(memoryOn, userOn bool) string {
	var parts []string
	for _, t := range []struct {
		target, header string
		on             bool
	}{{TargetMemory, "MEMORY (your personal notes)", memoryOn}, {TargetUser, "USER PROFILE (who the user is)", userOn}} {
		if !t.on {
			continue
		}
		entries, err := s.Entries(t.target)
		if err != nil || len(entries) == 0 {
			continue
		}
		content := strings.Join(entries, EntryDelimiter)
		n, limit := utf8.RuneCountInString(content), s.limit(t.target)
		// A file grown past its limit by hand is cut, head and tail, so it cannot
		// flood every session's prompt.
		if cap := max(limit*2, 4000); n > cap {
			r := []rune(content)
			head, tail := cap*7/10, cap*2/10
			content = string(r[:head]) + fmt.Sprintf("\n\n[... %d chars truncated — memory over budget (%d/%d) ...]\n\n", n-head-tail, n, limit) + string(r[n-tail:])
		}
		sep := strings.Repeat("═", 46)
		parts = append(parts, fmt.Sprintf("%s\n%s [%d%% — %d/%d chars]\n%s\n%s", sep, t.header, min(100, n*100/max(limit, 1)), n, limit, sep, content))
	}
	return strings.Join(parts, "\n\n")
}
