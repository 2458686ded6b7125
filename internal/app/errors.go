package app

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/hermes-go/hermes/internal/termsafe"
)

// Exit codes: 0 success, 1 failure, 2 usage error, 130 interrupted.
const (
	ExitOK          = 0
	ExitFail        = 1
	ExitUsage       = 2
	ExitInterrupted = 130
)

// ExitError ends the command with Code, printing Message (when not empty) as
// it is.
type ExitError struct {
	Code    int
	Message string
}

func (e *ExitError) Error() string { return e.Message }

// Failf returns an error that prints its message and exits 1.
func Failf(format string, args ...any) error {
	return &ExitError{Code: ExitFail, Message: fmt.Sprintf(format, args...)}
}

// SilentExit exits with code without printing anything more.
func SilentExit(code int) error { return &ExitError{Code: code} }

// FlagError is a usage error: the command line itself is wrong (an unknown
// flag, a missing argument). It exits 2.
type FlagError struct{ Err error }

func (e *FlagError) Error() string { return e.Err.Error() }
func (e *FlagError) Unwrap() error { return e.Err }

// FlagErrorf returns a usage error.
func FlagErrorf(format string, args ...any) error {
	return &FlagError{Err: fmt.Errorf(format, args...)}
}

// Report prints what err says to stderr and returns the exit code for it: the
// one place an error becomes an exit code. Error messages quote names, paths
// and texts from outside hermes, so what is printed is made terminal-safe
// (its lines stay lines).
func Report(ctx context.Context, stderr io.Writer, err error) int {
	return ReportRedacted(ctx, stderr, err, nil)
}

// ReportRedacted is Report with the error's text passed through redact first
// (an error can quote a plugin's output, a URL with a token, a config value).
func ReportRedacted(ctx context.Context, stderr io.Writer, err error, redact func(string) string) int {
	if err == nil {
		return ExitOK
	}
	if redact == nil {
		redact = func(s string) string { return s }
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Message != "" {
			fmt.Fprintln(stderr, termsafe.Text(redact(ee.Message)))
		}
		return ee.Code
	}
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "interrupted")
		return ExitInterrupted
	}
	fmt.Fprintf(stderr, "Error: %s\n", termsafe.Text(redact(err.Error())))
	var fe *FlagError
	if errors.As(err, &fe) {
		return ExitUsage
	}
	return ExitFail
}
