package app

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/plugins/registry"
)

func TestRunCLICommand(t *testing.T) {
	hh := filepath.Join(t.TempDir(), ".hermes")
	var out, errOut bytes.Buffer
	f := &Factory{
		IO:    &IOStreams{In: strings.NewReader("answer\n"), Out: &out, Err: &errOut},
		Env:   func(k string) string { return map[string]string{"HERMES_HOME": hh}[k] },
		Clock: time.Now,
	}
	defer f.Close()
	h, err := f.Host(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	c := &registry.CLICommand{Name: "hello", Plugin: "greeter", Run: func(ctx context.Context, argv []string, stdout, stderr io.Writer) (int, error) {
		fmt.Fprintf(stdout, "args %q\n", argv)
		fmt.Fprintln(stderr, "to stderr")
		return 3, nil
	}}
	code, err := h.RunCLICommand(context.Background(), c, []string{"a", "--b"})
	if err != nil || code != 3 {
		t.Fatalf("code %d, err %v", code, err)
	}
	if out.String() != "args [\"a\" \"--b\"]\n" || errOut.String() != "to stderr\n" {
		t.Fatalf("stdout %q, stderr %q", out.String(), errOut.String())
	}
}
