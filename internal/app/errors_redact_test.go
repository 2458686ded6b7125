package app

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/redact"
)

func TestReportRedacted(t *testing.T) {
	secret := "sk" + "-" + strings.Repeat("Ab9", 10)
	r := redact.New(nil)
	tests := []struct {
		err  error
		code int
	}{
		{errors.New("request failed with key " + secret), ExitFail},
		{&FlagError{Err: errors.New("bad --token " + secret)}, ExitUsage},
		{&ExitError{Code: 3, Message: "plugin said " + secret}, 3},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		if code := ReportRedacted(context.Background(), &b, tt.err, r.String); code != tt.code {
			t.Errorf("ReportRedacted(%v) = %d, want %d", tt.err, code, tt.code)
		}
		if strings.Contains(b.String(), secret) || !strings.Contains(b.String(), secret[:6]+"...") {
			t.Errorf("ReportRedacted(%v) printed %q", tt.err, b.String())
		}
	}
}
