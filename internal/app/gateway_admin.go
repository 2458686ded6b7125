package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// gatewayAdmin is the health endpoints' server on gateway.admin_listen, a
// loopback address (off when unset): /healthz says the process is alive,
// /readyz that it should get traffic (a load balancer's check).
type gatewayAdmin struct {
	listen   string
	addr     atomic.Value // the bound address, once serving
	draining atomic.Bool
}

// newGatewayAdmin reads gateway.admin_listen: nil when unset. Only a
// loopback host is accepted: the endpoints say what the process is doing,
// and a balancer on the machine (or a sidecar) is what reads them.
func newGatewayAdmin(cfg map[string]any) (*gatewayAdmin, error) {
	v, _ := stringAt(cfg, "gateway", "admin_listen")
	v = strings.TrimSpace(v)
	if v == "" || v == "off" || v == "false" {
		return nil, nil
	}
	host, port, err := net.SplitHostPort(v)
	if err != nil || port == "" {
		return nil, configError("gateway.admin_listen is %q: write a loopback host:port, like 127.0.0.1:8081", v)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, configError("gateway.admin_listen is %q: the health endpoints listen on a loopback address only (127.0.0.1, ::1 or localhost)", v)
	}
	return &gatewayAdmin{listen: v}, nil
}

// AdminAddr is the health endpoints' bound address ("" when off).
func (g *Gateway) AdminAddr() string {
	if g.admin == nil {
		return ""
	}
	s, _ := g.admin.addr.Load().(string)
	return s
}

// readiness says why this process should get no traffic ("" when it should).
func (g *Gateway) readiness(ctx context.Context) string {
	if g.admin.draining.Load() {
		return "draining"
	}
	if g.cluster == nil {
		return ""
	}
	node, err := g.openCluster(ctx)
	if err != nil {
		return "database unreachable"
	}
	if node.Draining() {
		return "draining"
	}
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := node.Pool().Ping(pctx); err != nil {
		return "database unreachable"
	}
	if !node.Fresh() {
		return "cluster heartbeat stale"
	}
	return ""
}

// serveAdmin serves the endpoints until the returned stop; ctx's end (the
// SIGTERM that begins a drain) turns /readyz to 503 at once, so a balancer
// stops sending before the process goes.
func (g *Gateway) serveAdmin(ctx context.Context) (stop func(), err error) {
	if g.admin == nil {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", g.admin.listen)
	if err != nil {
		return nil, fmt.Errorf("gateway.admin_listen: %w", err)
	}
	g.admin.addr.Store(ln.Addr().String())
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		if why := g.readiness(r.Context()); why != "" {
			http.Error(w, "not ready: "+why, http.StatusServiceUnavailable)
			return
		}
		_, _ = fmt.Fprintln(w, "ready")
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	served := make(chan struct{})
	go func() {
		defer close(served)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			g.log.logger.Warn("gateway: admin endpoints stopped", "error", err)
		}
	}()
	g.log.logger.Info("gateway: health endpoints", "listen", ln.Addr().String())
	watch := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			g.admin.draining.Store(true)
		case <-watch:
		}
	}()
	return func() {
		close(watch)
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-served
	}, nil
}
