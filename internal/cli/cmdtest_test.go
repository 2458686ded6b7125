package cli

import (
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/hermes-go/hermes/internal/app"
)

// The TestNewCmdX tests check what a command line parses to, without running
// the verb: the command is built with a runF that keeps the options it gets.

// testFactory is a Factory no verb runs on: no terminal, an empty environment.
func testFactory() *app.Factory {
	return &app.Factory{
		IO:  &app.IOStreams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard},
		Env: func(string) string { return "" },
		Cwd: "/work/dir",
	}
}

// parseCmd builds the command with newCmd on f and executes it on args. got is
// the options runF was given, nil when parsing failed before the run.
func parseCmd[O any](t *testing.T, f *app.Factory, newCmd func(*app.Factory, func(*O) error) *cobra.Command, args []string) (got *O, err error) {
	t.Helper()
	cmd := newCmd(f, func(o *O) error {
		got = o
		return nil
	})
	err = execute(cmd, args)
	return got, err
}

// execute runs cmd on args with its own streams discarded.
func execute(cmd *cobra.Command, args []string) error {
	cmd.SetArgs(args)
	cmd.SetIn(strings.NewReader(""))
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	_, err := cmd.ExecuteC()
	return err
}

// checkErr reports whether the test case is done: err was wanted (wantErr is
// a part of its message) or not.
func checkErr(t *testing.T, err error, wantErr string) (done bool) {
	t.Helper()
	switch {
	case wantErr == "" && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case wantErr != "" && err == nil:
		t.Fatalf("no error, want one with %q", wantErr)
	case wantErr != "" && !strings.Contains(err.Error(), wantErr):
		t.Fatalf("error %q, want one with %q", err, wantErr)
	}
	return wantErr != ""
}

// parseCase is one command line and the options it parses to (or the error).
type parseCase[O any] struct {
	name    string
	args    []string
	want    O
	wantErr string
}

// checkParses runs every case through newCmd. The options must be built from
// the factory (its terminal and the factory itself, checked and then left out
// of the comparison) and otherwise equal want.
func checkParses[O any](t *testing.T, newCmd func(*app.Factory, func(*O) error) *cobra.Command, cases []parseCase[O]) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			f := testFactory()
			got, err := parseCmd(t, f, newCmd, tt.args)
			if checkErr(t, err, tt.wantErr) {
				return
			}
			v := reflect.ValueOf(got).Elem()
			io, fac := v.FieldByName("IO"), v.FieldByName("Factory")
			checkBuiltFrom(t, f, io.Interface().(*app.IOStreams), fac.Interface().(*app.Factory))
			io.SetZero()
			fac.SetZero()
			if !reflect.DeepEqual(*got, tt.want) {
				t.Fatalf("options %+v, want %+v", *got, tt.want)
			}
		})
	}
}

// checkBuiltFrom fails unless the options were built from f (its terminal and
// the factory itself).
func checkBuiltFrom(t *testing.T, f *app.Factory, io *app.IOStreams, fac *app.Factory) {
	t.Helper()
	if io != f.IO || fac != f {
		t.Fatalf("options not built from the factory: IO %p (want %p), Factory %p (want %p)", io, f.IO, fac, f)
	}
}

// Messages of cobra's own, as a sub-command executed alone gives them (under
// the root they become usage errors, exit 2).
const (
	errUnknownFlag = "unknown flag"
	errExclusive   = "none of the others can be"
)
