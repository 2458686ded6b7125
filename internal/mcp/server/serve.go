// Package server is hermes as an MCP server (`hermes mcp serve`): the tools
// of the user's tool set, built-in and plugin, offered to another MCP client,
// each call run through the same tool pipeline a model's call goes through.
//
// The transport answers `initialize` at once; the tools are loaded behind it
// (plugins take a while to start) and every tools/* request waits until they
// are there, so a client's handshake never waits on a plugin.
package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hermes-go/hermes/internal/clock"
	"github.com/hermes-go/hermes/internal/jsonx"
	"github.com/hermes-go/hermes/internal/termsafe"
	"github.com/hermes-go/hermes/internal/tools"
)

// MCPPrefix starts the names hermes gives the tools of its own MCP servers.
// They are never offered again: a client of ours that is also our server would
// call itself in a loop.
const MCPPrefix = "mcp__"

// Runner runs one tool call through the whole pipeline (the host's).
type Runner interface {
	Run(ctx context.Context, c tools.Call) tools.Outcome
}

// Tools is what a load produced: the tools to offer (the tool set already
// applied) and what runs their calls.
type Tools struct {
	List   []*tools.Tool
	Runner Runner
}

// Load prepares the tools; it runs once, while the client's handshake goes on.
type Load func(ctx context.Context) (Tools, error)

// Options configure a server.
type Options struct {
	Name, Version string
	// Warn shows a warning to the user (stderr); it must be safe for text from
	// plugins (the caller sanitises).
	Warn func(msg string)
	// Log gets the SDK's log and one line per call (-v); nil: quiet.
	Log *slog.Logger
}

// Serve answers MCP requests on t until the client goes (EOF), ctx ends, or
// load fails; it returns load's error, or nil after a clean end.
func Serve(ctx context.Context, t mcp.Transport, load Load, o Options) error {
	s := newServer(o)
	ss, err := s.sdk.Connect(ctx, t, nil)
	if err != nil {
		return fmt.Errorf("start the MCP connection: %w", err)
	}
	waited := make(chan error, 1)
	go func() { waited <- ss.Wait() }()

	// A client that leaves while the plugins still start stops that too.
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	loaded := make(chan struct{})
	go func() {
		defer close(loaded)
		s.load(loadCtx, load)
		if s.loadErr != nil {
			_ = ss.Close() // nothing could be served; the command reports why
		}
	}()

	var ended error
	select {
	case <-ctx.Done():
		_ = ss.Close()
		ended = <-waited
	case ended = <-waited:
	}
	// How the session ended (the client's EOF, a closed pipe) is for -v only:
	// a client that leaves is how a server's life ends.
	s.log().Info("session ended", "error", ended)
	stopLoad()
	<-loaded // load has stopped using what the caller will now close
	// A load cut short because the client left or ctx ended is no failure.
	if s.loadErr != nil && ctx.Err() == nil && !errors.Is(s.loadErr, context.Canceled) {
		return s.loadErr
	}
	return nil
}

type server struct {
	sdk   *mcp.Server
	o     Options
	ready chan struct{} // closed once load has ended
	// loadErr is set before ready closes.
	loadErr error
	runner  Runner
	calls   atomic.Int64 // numbers the calls, for hooks' tool_call_id
}

func newServer(o Options) *server {
	if o.Warn == nil {
		o.Warn = func(string) {}
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &server{o: o, ready: make(chan struct{})}
	s.sdk = mcp.NewServer(&mcp.Implementation{Name: o.Name, Version: o.Version}, &mcp.ServerOptions{
		Logger: log,
		// Tools are offered even while none are loaded yet, and the list never
		// changes once tools/list can answer (it waits for the load), so no
		// list_changed. Nothing else is offered (no logging capability: hermes'
		// log is its stderr).
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	s.sdk.AddReceivingMiddleware(s.waitForTools)
	return s
}

// waitForTools holds tools/* requests until the tools are loaded.
func (s *server) waitForTools(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if strings.HasPrefix(method, "tools/") {
			select {
			case <-s.ready:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if s.loadErr != nil {
				return nil, fmt.Errorf("hermes could not load its tools: %w", s.loadErr)
			}
		}
		return next(ctx, method, req)
	}
}

func (s *server) load(ctx context.Context, load Load) {
	defer close(s.ready)
	ts, err := load(ctx)
	if err != nil {
		s.loadErr = err
		return
	}
	s.runner = ts.Runner
	n := s.addTools(ts.List)
	s.log().Info("tools loaded", "offered", n, "of", len(ts.List))
}

func (s *server) log() *slog.Logger {
	if s.o.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.o.Log
}

// addTools offers each tool the SDK accepts and warns about the others; it
// returns how many are offered.
func (s *server) addTools(list []*tools.Tool) int {
	n := 0
	for _, t := range list {
		if strings.HasPrefix(t.Name, MCPPrefix) {
			continue
		}
		mt, err := Describe(t)
		if err == nil {
			err = s.add(mt, t.Name)
		}
		if err != nil {
			s.o.Warn(fmt.Sprintf("mcp serve: tool %q (from %s) is not offered: %v", t.Name, t.Source, err))
			continue
		}
		n++
	}
	return n
}

// add registers mt, turning the SDK's refusal (a panic) into an error.
func (s *server) add(mt *mcp.Tool, name string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the MCP SDK refuses it: %v", r)
		}
	}()
	s.sdk.AddTool(mt, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return s.call(ctx, name, req), nil
	})
	return nil
}

// Describe is t as an MCP client sees it: its name, its model description with
// control characters escaped (clients show it on terminals), and its
// parameters schema as the input schema (an empty object schema when it has
// none).
func Describe(t *tools.Tool) (*mcp.Tool, error) {
	schema := any(map[string]any{"type": "object"})
	if _, has := t.Schema["parameters"]; has {
		p := t.Parameters()
		if p == nil {
			return nil, fmt.Errorf("its parameters schema is %s, not a JSON object", kindOf(t.Schema["parameters"]))
		}
		schema = p
	}
	return &mcp.Tool{Name: t.Name, Description: termsafe.Text(t.ModelDescription()), InputSchema: schema}, nil
}

func kindOf(v any) string {
	if v == nil {
		return "null"
	}
	return jsonx.KindOf(v)
}

// call runs one tools/call through the pipeline. Every failure of the tool,
// its arguments or a guard is a result with isError, as the model would see it.
func (s *server) call(ctx context.Context, name string, req *mcp.CallToolRequest) *mcp.CallToolResult {
	start := clock.Now()
	args, err := decodeArgs(req.Params.Arguments)
	var out tools.Outcome
	if err != nil {
		msg := fmt.Sprintf("Invalid arguments for %s: %v", name, err)
		out = tools.Outcome{Result: tools.ErrorResult(msg, nil), Status: tools.StatusError, ErrorType: "invalid_arguments", ErrorMessage: msg}
	} else {
		id := "mcp-" + strconv.FormatInt(s.calls.Add(1), 10)
		out = s.runner.Run(ctx, tools.Call{Name: name, Args: args, TaskID: "mcp", ToolCallID: id,
			Origin: tools.Origin{Kind: tools.FromMCPClient}})
	}
	s.log().Info("tools/call", "tool", termsafe.Line(name), "status", string(out.Status),
		"error_type", out.ErrorType, "ms", time.Since(start).Milliseconds())
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: out.Result}}, IsError: out.Status != tools.StatusOK}
}

// decodeArgs reads a call's arguments: a JSON object (absent or null is none),
// numbers kept exactly as the client wrote them.
func decodeArgs(raw json.RawMessage) (map[string]any, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("more than one JSON value")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("they must be a JSON object, got %s", kindOf(v))
	}
	return jsonx.ExactArgs(m).(map[string]any), nil
}

// Stdio is the transport of `hermes mcp serve`: requests from in, responses to
// out, one JSON object a line. Neither is closed: they are the process's.
func Stdio(in io.Reader, out io.Writer) mcp.Transport {
	return &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
