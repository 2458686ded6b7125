// Command pong is a test plugin (internal/cli/testdata/script/ctx_dispatch_tool.txtar):
// its tool dispatches "ping", a Python plugin's tool that dispatches "pong" back,
// so the nesting of dispatch_tool calls crosses the Go SDK.
package main

import (
	"context"
	"encoding/json"

	"github.com/hermes-go/hermes/pkg/pluginsdk"
)

func register(ctx pluginsdk.Context) error {
	return ctx.RegisterTool(pluginsdk.Tool{
		Name: "pong", Toolset: "pong", Description: "Dispatches ping.",
		Parameters: pluginsdk.Object(pluginsdk.Props{"d": pluginsdk.Integer("depth")}),
		Handler: func(c context.Context, call pluginsdk.ToolCall) (string, error) {
			return ctx.DispatchTool(c, "ping", map[string]any{"d": depth(call) + 1})
		},
	})
}

func main() { pluginsdk.Serve(pluginsdk.PluginFunc(register)) }

func depth(call pluginsdk.ToolCall) int {
	switch v := call.Args["d"].(type) {
	case float64:
		return int(v)
	case json.Number:
		n, _ := v.Int64()
		return int(n)
	}
	return 0
}
