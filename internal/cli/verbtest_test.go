package cli

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/hermes-go/hermes/internal/app"
)

// The TestNewCmd* tests parse a verb's command line without running the verb:
// a runF captures the options the run would get.

// parseVerb runs cmd on args with usage errors typed as the root types them,
// and returns the exit code it would end hermes with and the error.
func parseVerb(t *testing.T, cmd *cobra.Command, args []string) (int, error) {
	t.Helper()
	usageErrors(cmd)
	cmd.SetArgs(args)
	cmd.SetIn(strings.NewReader(""))
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	err := cmd.ExecuteContext(context.Background())
	return app.Report(context.Background(), io.Discard, err), err
}

// checkParseErr compares a parse's error with the wanted one: wantErr "" for
// none, else a substring of the message, and the exit code.
func checkParseErr(t *testing.T, err error, code int, wantErr string, wantCode int) bool {
	t.Helper()
	if wantErr == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return true
	}
	if err == nil {
		t.Fatalf("no error, want %q", wantErr)
	}
	if !strings.Contains(err.Error(), wantErr) {
		t.Errorf("error %q, want it to contain %q", err, wantErr)
	}
	if code != wantCode {
		t.Errorf("exit code %d, want %d", code, wantCode)
	}
	return false
}
