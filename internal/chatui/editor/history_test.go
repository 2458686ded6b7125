package editor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestMain lets the test binary be a second chat session appending to a
// history file (TestHistoryTwoProcesses).
func TestMain(m *testing.M) {
	if path := os.Getenv("EDITOR_TEST_HISTORY_WRITER"); path != "" {
		n, _ := strconv.Atoi(os.Getenv("EDITOR_TEST_HISTORY_N"))
		h, err := OpenHistory(path, 100000)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		for i := range n {
			if err := h.Add(fmt.Sprintf("child %d\nsecond line of %d", i, i)); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func open(t *testing.T, path string, limit int) *History {
	t.Helper()
	h, err := OpenHistory(path, limit)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func add(t *testing.T, h *History, entries ...string) {
	t.Helper()
	for _, e := range entries {
		if err := h.Add(e); err != nil {
			t.Fatal(err)
		}
	}
}

// fileLines checks every line of the file is one whole record and returns them.
func fileLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Errorf("file does not end with a newline: %q", b[max(0, len(b)-40):])
	}
	var out []string
	for _, l := range bytes.Split(bytes.TrimSuffix(b, []byte{'\n'}), []byte{'\n'}) {
		var s string
		if err := json.Unmarshal(l, &s); err != nil {
			t.Errorf("line %q is not a record: %v", l, err)
		}
		out = append(out, s)
	}
	return out
}

func TestHistoryRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "chat_history")
	h := open(t, path, 10)
	if got := h.Entries(); len(got) != 0 {
		t.Fatalf("missing file: entries %q, want none", got)
	}
	huge := strings.Repeat("x", 200000)
	entries := []string{"one", "two\nlines\n", `quote " and \ backslash`, "<html> & tabs\t", "日本語 😀", huge}
	add(t, h, entries...)
	add(t, h, "", "  \n ", huge) // blank and a repeat of the newest are not kept
	if got := h.Entries(); !slices.Equal(got, entries) {
		t.Errorf("entries %.80q, want %.80q", got, entries)
	}
	if got := open(t, path, 10).Entries(); !slices.Equal(got, entries) {
		t.Errorf("reopened %.80q, want %.80q", got, entries)
	}
	if got := fileLines(t, path); len(got) != len(entries) {
		t.Errorf("file has %d records, want %d", len(got), len(entries))
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v (%v), want 0600", fi.Mode(), err)
	}
}

func TestHistoryCorruptAndTorn(t *testing.T) {
	tests := []struct {
		name, file string
		want       []string
	}{
		{name: "torn last write", file: "\"one\"\n\"two\\nlines\"\n\"tor", want: []string{"one", "two\nlines"}},
		{name: "torn inside an escape", file: "\"one\"\n\"two\\", want: []string{"one"}},
		{name: "garbage in the middle", file: "\"one\"\n\x00\x00\x00\n{\"not\":\"a string\"}\n42\n\"two\"\n", want: []string{"one", "two"}},
		{name: "empty lines", file: "\n\n\"one\"\n\n", want: []string{"one"}},
		{name: "no final newline", file: "\"one\"\n\"two\"", want: []string{"one", "two"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "chat_history")
			if err := os.WriteFile(path, []byte(tt.file), 0o600); err != nil {
				t.Fatal(err)
			}
			h := open(t, path, 100)
			if got := h.Entries(); !slices.Equal(got, tt.want) {
				t.Fatalf("entries %q, want %q", got, tt.want)
			}
			// The next write must not be glued to a torn line.
			add(t, h, "after")
			want := append(slices.Clone(tt.want), "after")
			if got := open(t, path, 100).Entries(); !slices.Equal(got, want) {
				t.Errorf("after an add: %q, want %q", got, want)
			}
		})
	}
}

func TestHistoryCap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chat_history")
	h := open(t, path, 5)
	var all []string
	for i := range 23 {
		e := fmt.Sprintf("entry %d\nline two", i)
		all = append(all, e)
		add(t, h, e)
		if n := len(fileLines(t, path)); n >= 10 {
			t.Fatalf("after %d adds the file holds %d records, want under twice the cap", i+1, n)
		}
	}
	if got := h.Entries(); !slices.Equal(got, all[len(all)-5:]) {
		t.Errorf("entries %q, want the newest 5", got)
	}
	if got := open(t, path, 5).Entries(); !slices.Equal(got, all[len(all)-5:]) {
		t.Errorf("reopened %q, want the newest 5", got)
	}
	if got := open(t, path, 3).Entries(); !slices.Equal(got, all[len(all)-3:]) {
		t.Errorf("reopened with a cap of 3: %q, want the newest 3", got)
	}
}

func TestHistoryTwoWriters(t *testing.T) {
	for _, limit := range []int{100000, 40} { // without and with compaction racing appends
		t.Run(fmt.Sprintf("cap %d", limit), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "chat_history")
			a, b := open(t, path, limit), open(t, path, limit)
			const n = 150
			var wg sync.WaitGroup
			for w, h := range []*History{a, b} {
				wg.Go(func() {
					for i := range n {
						if err := h.Add(fmt.Sprintf("writer %d entry %d\nline two\n", w, i)); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			lines := fileLines(t, path)
			got := open(t, path, limit).Entries()
			if limit > 2*n {
				if len(lines) != 2*n || len(got) != 2*n {
					t.Fatalf("%d records in the file, %d entries, want %d", len(lines), len(got), 2*n)
				}
			} else if len(got) != limit || len(lines) >= 2*limit {
				t.Fatalf("%d records in the file, %d entries, want %d entries and under %d records", len(lines), len(got), limit, 2*limit)
			}
			// Each writer's entries are whole, and what is left of them is
			// its newest: compaction drops the oldest of the file.
			seen := map[int][]int{}
			for _, e := range got {
				var w, i int
				if _, err := fmt.Sscanf(e, "writer %d entry %d\nline two\n", &w, &i); err != nil || !strings.HasSuffix(e, "\nline two\n") {
					t.Fatalf("entry %q is not whole", e)
				}
				seen[w] = append(seen[w], i)
			}
			if len(seen) == 0 {
				t.Fatal("no entries")
			}
			for w, is := range seen {
				for k, i := range is {
					if want := n - len(is) + k; i != want {
						t.Fatalf("writer %d's entries %v: want its newest %d in order", w, is, len(is))
					}
				}
			}
		})
	}
}

// Two chat processes append to one file at once.
func TestHistoryTwoProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chat_history")
	const n = 100
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "EDITOR_TEST_HISTORY_WRITER="+path, "EDITOR_TEST_HISTORY_N="+strconv.Itoa(n))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := open(t, path, 100000)
	for i := range n {
		add(t, h, fmt.Sprintf("parent %d\nsecond line of %d", i, i))
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v\n%s", err, stderr.String())
	}
	got := open(t, path, 100000).Entries()
	counts := map[string]int{}
	for _, e := range got {
		who, _, _ := strings.Cut(e, " ")
		counts[who]++
		var i, j int
		if _, err := fmt.Sscanf(e[len(who):], " %d\nsecond line of %d", &i, &j); err != nil || i != j {
			t.Fatalf("entry %q is not whole", e)
		}
	}
	if counts["parent"] != n || counts["child"] != n || len(got) != 2*n {
		t.Errorf("entries by writer %v (%d in all), want %d each", counts, len(got), n)
	}
}

func TestHistoryErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := OpenHistory(filepath.Join(dir, "h"), 0); err == nil || !strings.Contains(err.Error(), "must be positive") {
		t.Errorf("cap 0: %v, want a clear error", err)
	}
	if _, err := OpenHistory(dir, 10); err == nil {
		t.Error("a directory as the history file: no error")
	}
	if _, err := OpenHistory(filepath.Join(dir, "a", "b"), 10); err != nil {
		t.Errorf("a missing directory: %v, want an empty history", err)
	}
	h := brokenHistory(t)
	if err := h.Add("x"); err == nil || !strings.Contains(err.Error(), "save history") {
		t.Errorf("add under a file: %v, want a save error", err)
	}
	if got := h.Entries(); !slices.Equal(got, []string{"x"}) {
		t.Errorf("entries %q: the session keeps what it could not save", got)
	}
}

// The editor reports a history it could not save, and still sends.
func TestSubmitWithBrokenHistory(t *testing.T) {
	m := New(Options{History: brokenHistory(t), Width: 40})
	_, msgs := run(m, in("hi", kEnter))
	var sent, failed bool
	for _, msg := range msgs {
		switch msg := msg.(type) {
		case SubmitMsg:
			sent = msg.Text == "hi"
		case HistoryErrorMsg:
			failed = msg.Err != nil
		}
	}
	if !sent || !failed {
		t.Errorf("messages %#v, want the SubmitMsg and a HistoryErrorMsg", msgs)
	}
}

// brokenHistory is a history whose directory became a file after it opened.
func brokenHistory(t *testing.T) *History {
	t.Helper()
	sub := filepath.Join(t.TempDir(), "sub")
	h := open(t, filepath.Join(sub, "chat_history"), 10)
	if err := os.WriteFile(sub, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return h
}
