package protocol

import (
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

func TestDecodeMessage(t *testing.T) {
	tests := []struct {
		line    string
		want    Message
		wantErr string
	}{
		{line: `{"jsonrpc":"2.0","id":3,"result":{"a":1}}` + "\n", want: Message{JSONRPC: "2.0", ID: []byte("3"), Result: []byte(`{"a":1}`)}},
		{line: `{"jsonrpc":"2.0","method":"log","params":[1]}`, want: Message{JSONRPC: "2.0", Method: "log", Params: []byte("[1]")}},
		{line: `{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"no"}}`,
			want: Message{JSONRPC: "2.0", ID: []byte(`"x"`), Error: &Error{Code: CodeMethodNotFound, Message: "no"}}},
		{line: "not json", wantErr: `malformed protocol message "not json"`},
		{line: `{"jsonrpc":"1.0","id":1}`, wantErr: "without jsonrpc 2.0"},
		{line: strings.Repeat("x", 200), wantErr: strings.Repeat("x", 120) + "…"},
	}
	for _, tt := range tests {
		got, err := DecodeMessage([]byte(tt.line))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("DecodeMessage(%.40q) error %v, want one containing %q", tt.line, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("DecodeMessage(%q): %v", tt.line, err)
		}
		back, _ := EncodeMessage(got)
		want, _ := EncodeMessage(&tt.want)
		if string(back) != string(want) {
			t.Errorf("DecodeMessage(%q) = %s, want %s", tt.line, back, want)
		}
	}
}

func TestEncodeMessageIsOneLineWithoutHTMLEscapes(t *testing.T) {
	b, err := EncodeMessage(&Message{JSONRPC: "2.0", Method: "m", Params: []byte(`"<a>\n&"`)})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"jsonrpc":"2.0","method":"m","params":"<a>\n&"}` + "\n"; string(b) != want {
		t.Fatalf("got %q, want %q", b, want)
	}
	if _, err := EncodeMessage(&Message{JSONRPC: "2.0", Params: []byte("{bad")}); err == nil {
		t.Fatal("params that are not JSON were encoded")
	}
}

func TestLineReader(t *testing.T) {
	tests := []struct {
		name  string
		input string
		max   int
		want  []string // lines, then the error that ends the stream
		err   error
	}{
		{"lines", "a\nb\n", 10, []string{"a\n", "b\n"}, io.EOF},
		{"blank lines skipped", "\n  \r\na\n\n", 10, []string{"a\n"}, io.EOF},
		{"last line without newline", "a\nb", 10, []string{"a\n", "b"}, io.EOF},
		{"at the cap", "12345\n", 5, []string{"12345\n"}, io.EOF},
		{"over the cap", "123456\n", 5, nil, ErrMessageTooLarge},
		{"longer than the buffer", strings.Repeat("x", 100<<10) + "\n", 200 << 10, []string{strings.Repeat("x", 100<<10) + "\n"}, io.EOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewLineReader(iotest.OneByteReader(strings.NewReader(tt.input)), tt.max)
			if tt.name == "longer than the buffer" {
				l = NewLineReader(strings.NewReader(tt.input), tt.max)
			}
			var got []string
			for {
				line, err := l.ReadLine()
				if err != nil {
					if !errors.Is(err, tt.err) {
						t.Fatalf("ended with %v, want %v", err, tt.err)
					}
					break
				}
				got = append(got, string(line))
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Fatalf("lines %q, want %q", got, tt.want)
			}
		})
	}
}

// TestLineReaderKeepsPartialLine: a read that fails in the middle of a line (a
// read deadline) loses nothing; the next call returns the whole line.
func TestLineReaderKeepsPartialLine(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	l := NewLineReader(r, 100)
	if _, err := w.WriteString(`{"half":`); err != nil {
		t.Fatal(err)
	}
	if err := r.SetReadDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		t.Skip("no read deadlines on this platform's pipes")
	}
	if _, err := l.ReadLine(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("first read: %v, want the deadline", err)
	}
	_ = r.SetReadDeadline(time.Time{})
	if _, err := w.WriteString("1}\n"); err != nil {
		t.Fatal(err)
	}
	line, err := l.ReadLine()
	if err != nil || string(line) != `{"half":1}`+"\n" {
		t.Fatalf("second read: %q, %v", line, err)
	}
}
