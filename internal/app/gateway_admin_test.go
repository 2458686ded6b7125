package app

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestNewGatewayAdmin(t *testing.T) {
	tests := []struct {
		listen  any
		off     bool
		wantErr string
	}{
		{nil, true, ""},
		{"", true, ""},
		{"off", true, ""},
		{"127.0.0.1:0", false, ""},
		{"[::1]:8081", false, ""},
		{"localhost:8081", false, ""},
		{"0.0.0.0:8081", false, "loopback address only"},
		{"10.1.2.3:8081", false, "loopback address only"},
		{"8081", false, "write a loopback host:port"},
	}
	for _, tc := range tests {
		cfg := map[string]any{"gateway": map[string]any{"admin_listen": tc.listen}}
		a, err := newGatewayAdmin(cfg)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: error %v, want one saying %q", tc.listen, err, tc.wantErr)
			}
			continue
		}
		if err != nil || (a == nil) != tc.off {
			t.Errorf("%v: %v, %v; want off=%v", tc.listen, a, err, tc.off)
		}
	}
}

// /healthz answers while the process lives; /readyz turns 503 as soon as
// the stop (SIGTERM) begins, before the drain ends.
func TestGatewayAdminEndpoints(t *testing.T) {
	a, err := newGatewayAdmin(map[string]any{"gateway": map[string]any{"admin_listen": "127.0.0.1:0"}})
	if err != nil {
		t.Fatal(err)
	}
	g := &Gateway{admin: a, log: &gatewayLog{logger: slog.New(slog.DiscardHandler)}}
	ctx, stopRun := context.WithCancel(context.Background())
	stop, err := g.serveAdmin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + g.AdminAddr() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/healthz"); code != 200 || body != "ok\n" {
		t.Fatalf("/healthz: %d %q", code, body)
	}
	if code, body := get("/readyz"); code != 200 {
		t.Fatalf("/readyz before the stop: %d %q", code, body)
	}
	stopRun()
	deadline := time.Now().Add(5 * time.Second)
	for {
		code, body := get("/readyz")
		if code == http.StatusServiceUnavailable && strings.Contains(body, "draining") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz after the stop: %d %q", code, body)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Fatalf("/healthz while draining: %d", code)
	}
}
