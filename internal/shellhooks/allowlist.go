package shellhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gofrs/flock"
	"github.com/google/renameio/v2"

	"github.com/hermes-go/hermes/internal/limits"
)

// allowlistKind caps the consent file before it is parsed (one entry is ~200 bytes).
var allowlistKind = limits.Kind{Noun: "the shell hook allowlist", Fix: "fix the JSON by hand, or delete the file (hooks are asked about again)",
	MaxBytes: 1 << 20, MaxDepth: 8, MaxNodes: 100_000}

// Approval is one consent record: this command may run for this event.
type Approval struct {
	Event      string `json:"event"`
	Command    string `json:"command"`
	ApprovedAt string `json:"approved_at,omitempty"`
	// ScriptMtime is the script's modification time when it was approved, so
	// `hermes hooks list` can say the script changed since.
	ScriptMtime string `json:"script_mtime_at_approval,omitempty"`
}

// Allowlist is HERMES_HOME/shell-hooks-allowlist.json, upstream's format
// ({"approvals": [{"event", "command", "approved_at", "script_mtime_at_approval"}]}).
type Allowlist struct {
	Path string
	// Home expands ~ in commands to find their script (for the mtime).
	Home string
}

// Load reads the approvals. A missing file has none; a file that is not the
// expected JSON is an error naming it and what to do.
func (a Allowlist) Load() ([]Approval, error) {
	data, err := os.ReadFile(a.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the shell hook allowlist: %w", err)
	}
	return a.parse(data)
}

func (a Allowlist) parse(data []byte) ([]Approval, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // an editor's BOM
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	if err := limits.CheckJSON(data, a.Path, allowlistKind); err != nil {
		return nil, err
	}
	var doc struct {
		Approvals []json.RawMessage `json:"approvals"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s is not valid JSON (%v): %s", a.Path, err, allowlistKind.Fix)
	}
	out := make([]Approval, 0, len(doc.Approvals))
	for _, raw := range doc.Approvals {
		var ap Approval
		// An entry of another shape approves nothing; it is kept out, not fatal.
		if json.Unmarshal(raw, &ap) == nil && ap.Event != "" && ap.Command != "" {
			out = append(out, ap)
		}
	}
	return out, nil
}

// Lookup is the approval of (event, command), if there is one.
func Lookup(approvals []Approval, event, command string) (Approval, bool) {
	for _, ap := range approvals {
		if ap.Event == event && ap.Command == command {
			return ap, true
		}
	}
	return Approval{}, false
}

// Approve records consent for (event, command) at now, replacing an older record.
func (a Allowlist) Approve(ctx context.Context, event, command string, now time.Time) error {
	ap := Approval{Event: event, Command: command, ApprovedAt: isoUTC(now), ScriptMtime: a.ScriptMtime(command)}
	return a.update(ctx, func(list []Approval) []Approval {
		kept := list[:0]
		for _, e := range list {
			if e.Event != event || e.Command != command {
				kept = append(kept, e)
			}
		}
		return append(kept, ap)
	})
}

// Revoke removes every approval of command, for any event, and says how many.
func (a Allowlist) Revoke(ctx context.Context, command string) (int, error) {
	removed := 0
	err := a.update(ctx, func(list []Approval) []Approval {
		kept := list[:0]
		for _, e := range list {
			if e.Command == command {
				removed++
				continue
			}
			kept = append(kept, e)
		}
		return kept
	})
	return removed, err
}

// update rewrites the file under a lock beside it (an atomic rename replaces
// the file's inode), so two hermes approving at once both land.
func (a Allowlist) update(ctx context.Context, edit func([]Approval) []Approval) error {
	if err := os.MkdirAll(filepath.Dir(a.Path), 0o700); err != nil {
		return fmt.Errorf("save the shell hook allowlist: %w", err)
	}
	fl := flock.New(a.Path+".lock", flock.SetPermissions(0o600))
	ok, err := fl.TryLockContext(ctx, 20*time.Millisecond)
	if err != nil || !ok {
		_ = fl.Close()
		if err == nil {
			err = ctx.Err()
		}
		return fmt.Errorf("lock the shell hook allowlist %s: %w", a.Path, err)
	}
	defer func() { _ = fl.Unlock() }()
	list, err := a.Load()
	if err != nil {
		return err
	}
	list = edit(list)
	if list == nil {
		list = []Approval{}
	}
	body, err := json.MarshalIndent(struct {
		Approvals []Approval `json:"approvals"`
	}{list}, "", "  ")
	if err != nil {
		return err
	}
	if err := renameio.WriteFile(a.Path, append(body, '\n'), 0o600); err != nil {
		return fmt.Errorf("save the shell hook allowlist: %w", err)
	}
	return nil
}

// ScriptMtime is the modification time of the script command runs ("" when
// it cannot be found): the first word that looks like a script, else the
// first path-like word, else the program.
func (a Allowlist) ScriptMtime(command string) string {
	path := ScriptPath(command, a.Home)
	if path == "" {
		return ""
	}
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	return isoUTC(fi.ModTime())
}

var scriptExts = []string{".sh", ".bash", ".zsh", ".fish", ".py", ".pyw", ".rb", ".pl", ".lua", ".js", ".mjs", ".cjs", ".ts"}

// ScriptPath is the file command's hook code lives in, ~ expanded.
func ScriptPath(command, home string) string {
	words, err := SplitCommand(command)
	if err != nil {
		return ""
	}
	pick := ""
	for _, w := range words {
		for _, ext := range scriptExts {
			if strings.HasSuffix(strings.ToLower(w), ext) {
				pick = w
				break
			}
		}
		if pick != "" {
			break
		}
	}
	if pick == "" {
		for _, w := range words {
			if strings.Contains(w, "/") || strings.HasPrefix(w, "~") {
				pick = w
				break
			}
		}
	}
	if pick == "" {
		pick = words[0]
	}
	return expandHome(pick, home)
}

func isoUTC(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000000Z")
}
