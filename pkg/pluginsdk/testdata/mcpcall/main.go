// Command mcpcall is a test plugin (internal/plugins/mcp_linux_test.go): its
// tool and its pre_tool_call hook call ctx.CallMCP, so the gate and the
// envelope are seen through the Go SDK, across processes.
package main

import (
	"context"
	"errors"
	"time"

	"github.com/hermes-go/hermes/pkg/pluginsdk"
)

func register(ctx pluginsdk.Context) error {
	call := func(c context.Context, args map[string]any) string {
		server, _ := args["server"].(string)
		tool, _ := args["tool"].(string)
		arguments, _ := args["arguments"].(map[string]any)
		secs, _ := args["timeout"].(float64)
		res, err := ctx.CallMCP(c, server, tool, arguments, time.Duration(secs*float64(time.Second)))
		var denied *pluginsdk.MCPNotAllowedError
		switch {
		case errors.As(err, &denied):
			return pluginsdk.JSON(map[string]any{"denied": denied.Message, "server": denied.Server})
		case err != nil:
			return pluginsdk.Error(err.Error())
		}
		return pluginsdk.JSON(res)
	}
	if err := ctx.RegisterTool(pluginsdk.Tool{
		Name: "go_mcp", Toolset: "gomcp", Description: "Calls an MCP tool.",
		Handler: func(c context.Context, tc pluginsdk.ToolCall) (string, error) { return call(c, tc.Args), nil },
	}); err != nil {
		return err
	}
	// The hook blocks go_probe with what the MCP call answered.
	return ctx.RegisterHook("pre_tool_call", func(c context.Context, payload map[string]any) (any, error) {
		if payload["tool_name"] != "go_probe" {
			return nil, nil
		}
		out := call(c, map[string]any{"server": "fs", "tool": "echo", "arguments": map[string]any{"message": "from a Go hook"}})
		return map[string]any{"action": "block", "message": out}, nil
	})
}

func main() { pluginsdk.Serve(pluginsdk.PluginFunc(register)) }
