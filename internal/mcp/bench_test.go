package mcp

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkMCPDirect is the floor: the SDK's own client over stdio calling
// server-everything's echo, nothing of hermes in between.
func BenchmarkMCPDirect(b *testing.B) {
	client := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: exec.Command(nodePath(b), serverJS(b, "server-everything"))}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}}
	b.ResetTimer()
	for b.Loop() {
		if _, err := cs.CallTool(context.Background(), params); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkManagerCallTool is the same call through hermes' client: breaker,
// trust gate, shared connection, result JSON.
func BenchmarkManagerCallTool(b *testing.B) {
	m := New(Options{Config: &Config{Servers: []*ServerConfig{benchServer("ev")}}, Reaper: testReaper, Environ: os.Environ()})
	defer m.Close()
	ctx := context.Background()
	if _, err := m.CallTool(ctx, "ev", "echo", map[string]any{"message": "hi"}, 0); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := m.CallTool(ctx, "ev", "echo", map[string]any{"message": "hi"}, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func benchServer(name string) *ServerConfig {
	return &ServerConfig{Name: name, Command: "node", Args: []string{serverJS(nil, "server-everything")}, Transport: "stdio",
		Timeout: DefaultTimeout, ConnectTimeout: DefaultConnectTimeout, Enabled: true, Trust: TrustFull, Resources: true, Prompts: true}
}

// BenchmarkOfferFiveServers is what a chat pays to offer the tools of five
// stdio servers: all connected (in parallel), tools listed and converted.
// Compare with BenchmarkFiveServersAlone (target ≤ 1.2×).
func BenchmarkOfferFiveServers(b *testing.B) {
	serversDir(b)
	for b.Loop() {
		var servers []*ServerConfig
		for i := range 5 {
			servers = append(servers, benchServer(fmt.Sprintf("s%d", i)))
		}
		m := New(Options{Config: &Config{Servers: servers}, Reaper: testReaper, Environ: os.Environ()})
		list, warns := m.ModelTools(context.Background(), nil)
		if len(warns) > 0 || len(list) < 5 {
			b.Fatal(warns)
		}
		b.StopTimer()
		m.Close()
		b.StartTimer()
	}
}

// BenchmarkFiveServersAlone starts the same five servers with the bare SDK,
// in parallel, up to their tool lists.
func BenchmarkFiveServersAlone(b *testing.B) {
	js := serverJS(b, "server-everything")
	node := nodePath(b)
	for b.Loop() {
		var wg sync.WaitGroup
		sessions := make([]*mcp.ClientSession, 5)
		for i := range 5 {
			wg.Go(func() {
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(),
					&mcp.CommandTransport{Command: exec.Command(node, js)}, nil)
				if err != nil {
					b.Error(err)
					return
				}
				if _, err := cs.ListTools(context.Background(), nil); err != nil {
					b.Error(err)
				}
				sessions[i] = cs
			})
		}
		wg.Wait()
		b.StopTimer()
		for _, cs := range sessions {
			if cs != nil {
				_ = cs.Close()
			}
		}
		b.StartTimer()
	}
}
