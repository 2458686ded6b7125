package llm

import (
	"testing"
	"time"
)

// The bounds each attempt gets from the settings: model.request_timeout wins for
// both kinds of attempt; unset, a stream's first line gets the 2-minute default or
// the idle timeout if that is longer, and a plain attempt model.timeout.
func TestAttemptBounds(t *testing.T) {
	cases := []struct {
		name                   string
		in                     Config
		firstLine, plain, idle time.Duration
		plainKey               string
	}{
		{"defaults", Config{}, DefaultRequestTimeout, DefaultTimeout, DefaultIdleTimeout, "model.timeout"},
		{"request_timeout set", Config{RequestTimeout: 30 * time.Second, Timeout: time.Hour}, 30 * time.Second, 30 * time.Second, DefaultIdleTimeout, "model.request_timeout"},
		{"a longer idle timeout", Config{IdleTimeout: 5 * time.Minute}, 5 * time.Minute, DefaultTimeout, 5 * time.Minute, "model.timeout"},
		{"a shorter idle timeout", Config{IdleTimeout: 10 * time.Second}, DefaultRequestTimeout, DefaultTimeout, 10 * time.Second, "model.timeout"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.BaseURL = "http://127.0.0.1:1/v1"
			cl, err := New(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			c := cl.(*client)
			if c.cfg.RequestTimeout != tc.firstLine || c.cfg.Timeout != tc.plain || c.cfg.IdleTimeout != tc.idle || c.timeoutKey != tc.plainKey {
				t.Errorf("first line %s, plain %s (%s), idle %s; want %s, %s (%s), %s", c.cfg.RequestTimeout, c.cfg.Timeout, c.timeoutKey,
					c.cfg.IdleTimeout, tc.firstLine, tc.plain, tc.plainKey, tc.idle)
			}
		})
	}
}
