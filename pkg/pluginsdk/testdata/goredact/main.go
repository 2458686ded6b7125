// Command goredact is a test plugin (internal/cli/testdata/script/go_redaction.txtar):
// a Go plugin adds a redaction pattern and an auxiliary task through the SDK, and
// its tool returns a fake secret (built at run time) the pattern must mask; its
// @gonote:<id> references expand to a note, and @gonote:missing is an error.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/hermes-go/hermes/pkg/pluginsdk"
)

func register(ctx pluginsdk.Context) error {
	n := ctx.RegisterRedactionPatterns([]string{`gokey_[A-Za-z0-9]{12}`, `.*`})
	fmt.Fprintf(os.Stderr, "accepted=%d\n", n)
	if err := ctx.RegisterAuxiliaryTask(pluginsdk.AuxiliaryTask{Key: "go_digest", DisplayName: "Go digest",
		Description: "digests for the Go plugin", Defaults: map[string]any{"timeout": 30}}); err != nil {
		return err
	}
	if err := ctx.RegisterAuxiliaryTask(pluginsdk.AuxiliaryTask{Key: "bad key"}); err != nil {
		fmt.Fprintf(os.Stderr, "bad key refused: %v\n", err)
	}
	err := ctx.RegisterContextReference(pluginsdk.ContextReference{Prefix: "gonote", Description: "Go notes",
		Expand: func(_ context.Context, target string) (string, bool, error) {
			if target == "missing" {
				return "", false, fmt.Errorf("no note %s", target)
			}
			return "Go note " + target + ": water the plants", true, nil
		}})
	if err != nil {
		return err
	}
	if err := ctx.RegisterContextReference(pluginsdk.ContextReference{Prefix: "file",
		Expand: func(context.Context, string) (string, bool, error) { return "", false, nil }}); err != nil {
		fmt.Fprintf(os.Stderr, "file refused: %v\n", err)
	}
	return ctx.RegisterTool(pluginsdk.Tool{
		Name: "goleak", Toolset: "goredact", Description: "Returns a fake secret.",
		Parameters: pluginsdk.Object(pluginsdk.Props{}),
		Handler: func(context.Context, pluginsdk.ToolCall) (string, error) {
			return pluginsdk.JSON(map[string]string{"key": "gokey_" + strings.Repeat("Ab3", 4)}), nil
		},
	})
}

func main() { pluginsdk.Serve(pluginsdk.PluginFunc(register)) }
