package config

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func TestReadDotenv(t *testing.T) {
	src := `# secrets for hermes
PLAIN=value
SPACED = spaced value   # trailing comment
export EXPORTED=yes
DOUBLE="with # hash and \"quotes\"\nnewline"
SINGLE='literal \n $HOME # kept'
EMPTY=
QUOTED_EMPTY=""
MULTI="line one
line two"
   INDENTED=ok
not a pair
=novalue
DUP=first
DUP=second
URL=https://example.test/a?b=c#frag
CRLF=win` + "\r\n" + `TAB=a	# tab comment
`
	path := filepath.Join(t.TempDir(), ".env")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := ReadDotenv(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"PLAIN":        "value",
		"SPACED":       "spaced value",
		"EXPORTED":     "yes",
		"DOUBLE":       "with # hash and \"quotes\"\nnewline",
		"SINGLE":       `literal \n $HOME # kept`,
		"EMPTY":        "",
		"QUOTED_EMPTY": "",
		"MULTI":        "line one\nline two",
		"INDENTED":     "ok",
		"DUP":          "second",
		"URL":          "https://example.test/a?b=c#frag",
		"CRLF":         "win",
		"TAB":          "a",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d keys %v, want %d", len(got), got, len(want))
	}
}

func TestReadDotenvMissingFile(t *testing.T) {
	got, err := ReadDotenv(filepath.Join(t.TempDir(), "nope", ".env"))
	if err != nil || got == nil || len(got) != 0 {
		t.Fatalf("ReadDotenv(missing) = %v, %v; want an empty map", got, err)
	}
}

func TestSetDotenv(t *testing.T) {
	tests := []struct {
		name       string
		src        string // "-" = no file
		key, value string
		want       string
	}{
		{"new file", "-", "API_KEY", "abc123", "API_KEY=abc123\n"},
		{"append keeps everything", "# comment\nA=1\n\n# tail\n", "B", "two", "# comment\nA=1\n\n# tail\nB=two\n"},
		{"append without final newline", "A=1", "B", "2", "A=1\nB=2\n"},
		{"replace in place", "# top\nA=1   # old\nB=2\n", "A", "new", "# top\nA=new\nB=2\n"},
		{"replace keeps export", "export TOKEN='x'\n", "TOKEN", "y", "export TOKEN=y\n"},
		{"replace every duplicate", "A=1\nB=2\nA=3\n", "A", "9", "A=9\nB=2\nA=9\n"},
		{"replace multi-line value", "A=\"one\ntwo\"\nB=2\n", "A", "x", "A=x\nB=2\n"},
		{"crlf file", "A=1\r\nB=2\r\n", "C", "3", "A=1\r\nB=2\r\nC=3\r\n"},
		{"crlf replace", "A=1\r\nB=2\r\n", "A", "0", "A=0\r\nB=2\r\n"},
		{"value with spaces", "", "A", "two words", "A='two words'\n"},
		{"value with quote", "", "A", "it's", "A=\"it's\"\n"},
		{"value with newline", "", "A", "l1\nl2", "A=\"l1\\nl2\"\n"},
		{"value with hash", "", "A", "x #y", "A='x #y'\n"},
		{"empty value", "", "A", "", "A=\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "home", ".env")
			if tc.src != "-" {
				if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(tc.src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := SetDotenv(context.Background(), path, tc.key, tc.value); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(path)
			if string(got) != tc.want {
				t.Errorf("file =\n%q\nwant\n%q", got, tc.want)
			}
			assertMode(t, path, 0o600)
			vals, err := ReadDotenv(path)
			if err != nil || vals[tc.key] != tc.value {
				t.Errorf("read back %s = %q (%v), want %q", tc.key, vals[tc.key], err, tc.value)
			}
		})
	}
}

func TestSetDotenvRejectsBadInput(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".env")
	src := "A=1\n"
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ key, value, want string }{
		{"1ABC", "x", "invalid environment variable name"},
		{"A B", "x", "invalid environment variable name"},
		{"A=B", "x", "invalid environment variable name"},
		{"", "x", "invalid environment variable name"},
		{"OK", "nul\x00byte", "NUL"},
	} {
		err := SetDotenv(context.Background(), path, tc.key, tc.value)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("SetDotenv(%q, %q) = %v, want an error mentioning %q", tc.key, tc.value, err, tc.want)
		}
	}
	if got, _ := os.ReadFile(path); string(got) != src {
		t.Errorf("file changed by rejected calls: %q", got)
	}
}

func TestSetDotenvConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".env")
	const n = 12
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := SetDotenv(context.Background(), path, "K"+string(rune('A'+i)), "v"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	vals, err := ReadDotenv(path)
	if err != nil || len(vals) != n {
		t.Errorf("after %d concurrent SetDotenv calls the file has %d keys (%v): %v", n, len(vals), err, vals)
	}
}

func TestUpdateDotenv(t *testing.T) {
	appendID := func(cur string, ok bool) (string, bool, error) {
		if !ok {
			return "", true, nil
		}
		return cur + ",9", true, nil
	}
	drop := func(string, bool) (string, bool, error) { return "", false, nil }
	tests := []struct {
		name string
		src  string
		fn   func(string, bool) (string, bool, error)
		want string
	}{
		{"append to a list, comments kept", "# who may talk\nT=1,2 # owner\nB=x\n", appendID, "# who may talk\nT=1,2,9\nB=x\n"},
		{"the last assignment is the current value", "T=1\nT=2\n", appendID, "T=2,9\nT=2,9\n"},
		{"delete every assignment with its line", "A=1\nT=1\n# keep\nT=2\n", drop, "A=1\n# keep\n"},
		{"delete in a crlf file", "T=1\r\nA=1\r\n", drop, "A=1\r\n"},
		{"delete a missing key changes nothing", "A=1\n", drop, "A=1\n"},
		{"delete the last line without newline", "A=1\nT=5", drop, "A=1\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), ".env")
			if err := os.WriteFile(path, []byte(tc.src), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := UpdateDotenv(context.Background(), path, "T", tc.fn); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(path)
			if string(got) != tc.want {
				t.Errorf("file =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

func TestUpdateDotenvErrorWritesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".env")
	if err := os.WriteFile(path, []byte("T=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := UpdateDotenv(context.Background(), path, "T", func(string, bool) (string, bool, error) { return "2", true, boom })
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "T=1\n" {
		t.Errorf("file = %q after a failed update, want it unchanged", got)
	}
}

// Concurrent read-modify-writes of one key lose nothing: each sees the one before.
func TestUpdateDotenvConcurrentAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".env")
	const n = 16
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := UpdateDotenv(context.Background(), path, "IDS", func(cur string, ok bool) (string, bool, error) {
				id := strconv.Itoa(i)
				if cur == "" {
					return id, true, nil
				}
				return cur + "," + id, true, nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	vals, err := ReadDotenv(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Split(vals["IDS"], ","); len(got) != n {
		t.Errorf("IDS = %q: %d ids, want %d", vals["IDS"], len(got), n)
	}
}
