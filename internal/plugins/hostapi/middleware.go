package hostapi

import (
	"context"
	"fmt"
	"sync"

	"github.com/hermes-go/hermes/internal/plugins/registry"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// register_middleware and the next_call of execution middleware (upstream §11.4).

func registerMiddleware(_ context.Context, s *Session, rp protocol.RegisterMiddlewareParams) (any, error) {
	key := s.p.ID()
	kind := registry.MiddlewareKind(rp.Kind)
	if !kind.Known() {
		s.p.Warnf("plugin %s registered unknown middleware kind '%s' (valid: llm_execution, llm_request, tool_execution, tool_request)", key, rp.Kind)
	}
	s.h.reg.AddMiddleware(key, &registry.Middleware{Kind: kind, Plugin: key, Invoke: s.remoteMiddleware(rp.Handle)})
	return protocol.RegisterResult{Registered: true}, nil
}

// nextTable maps the single-use next_call tokens handed to execution middleware.
type nextTable struct {
	mu  sync.Mutex
	seq uint64
	fns map[string]func(context.Context, any) (any, error)
}

func (t *nextTable) add(f func(context.Context, any) (any, error)) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.fns == nil {
		t.fns = map[string]func(context.Context, any) (any, error){}
	}
	t.seq++
	tok := fmt.Sprintf("next-%d", t.seq)
	t.fns[tok] = f
	return tok
}

func (t *nextTable) take(tok string) func(context.Context, any) (any, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.fns[tok]
	delete(t.fns, tok)
	return f
}

func (t *nextTable) drop(tok string) { t.take(tok) }

// middlewareNext serves ctx.middleware_next: a plugin's next_call.
func middlewareNext(ctx context.Context, s *Session, np protocol.MiddlewareNextParams) (any, error) {
	f := s.h.nexts.take(np.Token)
	if f == nil {
		return nil, protocol.Errorf(protocol.CodeRuntimeError, "next_call may be called only once, and only while the middleware runs")
	}
	v, err := f(ctx, np.Payload)
	if err != nil {
		return nil, protocol.Errorf(protocol.CodeRuntimeError, "%v", err)
	}
	return v, nil
}
