// Package bundled holds the Go plugins compiled into hermes. Like upstream's bundled
// standalone plugins they are discovered automatically but load only once enabled.
package bundled

import (
	"context"
	"sync"
	"time"

	"github.com/hermes-go/hermes/internal/clock"
	"github.com/hermes-go/hermes/internal/plugins/manifest"
	"github.com/hermes-go/hermes/pkg/pluginsdk"
)

// Plugin is one compiled-in plugin.
type Plugin struct {
	Manifest *manifest.Manifest
	Plugin   pluginsdk.Plugin
	// Category is the provider sub-category (model-providers) of a provider
	// plugin, "" for a general one.
	Category string
}

// all is built once: every hermes start lists the compiled-in plugins.
var all = sync.OnceValue(func() []Plugin {
	return append([]Plugin{datetimePlugin()}, modelProviderPlugins()...)
})

// All returns every compiled-in plugin. The slice is shared: do not modify it.
func All() []Plugin { return all() }

func datetimePlugin() Plugin {
	m := &manifest.Manifest{
		Name:            "datetime",
		Version:         "1.0.0",
		Description:     "Tells the model the current date and time in any time zone",
		Author:          "hermes",
		Kind:            "standalone",
		ManifestVersion: 1,
		ProvidesTools:   []string{"current_time"},
	}
	m.Raw = map[string]any{"name": m.Name, "version": m.Version, "description": m.Description,
		"author": m.Author, "provides_tools": []any{"current_time"}}
	return Plugin{Manifest: m, Plugin: pluginsdk.PluginFunc(registerDatetime)}
}

func registerDatetime(ctx pluginsdk.Context) error {
	return ctx.RegisterTool(pluginsdk.Tool{
		Name:        "current_time",
		Toolset:     "datetime",
		Description: "Returns the current date and time. Pass an IANA time zone such as Europe/Paris; default is the host's local zone.",
		Parameters:  pluginsdk.Object(pluginsdk.Props{"timezone": pluginsdk.String("IANA time zone name, e.g. America/New_York")}),
		Handler: func(_ context.Context, call pluginsdk.ToolCall) (string, error) {
			now := clock.Now()
			loc := time.Local
			if tz := call.String("timezone"); tz != "" {
				l, err := time.LoadLocation(tz)
				if err != nil {
					return pluginsdk.Error("unknown time zone " + tz + ": use an IANA name such as Europe/Paris"), nil
				}
				loc = l
			}
			t := now.In(loc)
			return pluginsdk.JSON(map[string]any{
				"iso": t.Format(time.RFC3339), "timezone": loc.String(), "weekday": t.Weekday().String(), "unix": t.Unix(),
			}), nil
		},
	})
}
