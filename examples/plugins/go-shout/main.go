// Command go-shout is an example hermes plugin written in Go: one tool, one hook and
// one CLI command, served out of process through pkg/pluginsdk.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/hermes-go/hermes/pkg/pluginsdk"
)

func register(ctx pluginsdk.Context) error {
	log := ctx.Logger()
	return errors.Join(
		ctx.RegisterTool(pluginsdk.Tool{
			Name: "shout", Toolset: "shout", Description: "Returns the text upper-cased.",
			Parameters: pluginsdk.Object(pluginsdk.Props{"text": pluginsdk.String("text to shout")}, "text"),
			Handler: func(_ context.Context, call pluginsdk.ToolCall) (string, error) {
				return pluginsdk.JSON(map[string]string{"text": strings.ToUpper(call.String("text"))}), nil
			},
		}),
		ctx.RegisterHook("post_tool_call", func(_ context.Context, p map[string]any) (any, error) {
			log.Info("tool called", "tool", p["tool_name"], "status", p["status"])
			return nil, nil
		}),
		ctx.RegisterCLICommand(pluginsdk.CLICommand{
			Name: "shout-cli", Help: "Print TEXT upper-cased",
			Run: func(_ context.Context, args []string, stdout, stderr io.Writer) int {
				if len(args) == 0 {
					fmt.Fprintln(stderr, "usage: hermes shout-cli TEXT")
					return 2
				}
				fmt.Fprintln(stdout, strings.ToUpper(strings.Join(args, " ")))
				return 0
			},
		}),
	)
}

func main() { pluginsdk.Serve(pluginsdk.PluginFunc(register)) }
