package hostapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/jsonx"
	"github.com/hermes-go/hermes/internal/limits"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// ctx.get_config / ctx.set_config: the plugin's own settings under
// plugins.entries.<id>.settings in config.yaml.

// pluginKeyPath maps a plugin-relative config key to its path under
// plugins.entries.<id>.settings; a bad key raises ValueError with upstream's text.
func pluginKeyPath(pluginID, key string) ([]string, error) {
	path, err := config.PluginKeySegments(pluginID, key)
	if errors.Is(err, config.ErrInvalidPluginKey) {
		return nil, protocol.Errorf(protocol.CodeInvalidArgument, "%s", config.InvalidPluginKeyMessage)
	}
	if err != nil {
		return nil, protocol.Errorf(protocol.CodeInvalidArgument, "%v", err)
	}
	return path, nil
}

func getConfig(_ context.Context, s *Session, cp protocol.ConfigGetParams) (any, error) {
	path, err := pluginKeyPath(s.p.ID(), cp.Key)
	if err != nil {
		return nil, err
	}
	doc, err := s.h.config.Load()
	if err != nil {
		return nil, protocol.Errorf(protocol.CodeRuntimeError, "%v", err)
	}
	if v, ok := doc.GetPath(path); ok {
		return v, nil
	}
	// Legacy fallback: plugins.entries.<id>.config.<key>.
	legacy := append([]string{}, path...)
	for i, seg := range legacy {
		if seg == "settings" && i == 3 {
			legacy[i] = "config"
			break
		}
	}
	if v, ok := doc.GetPath(legacy); ok {
		return v, nil
	}
	return cp.Default, nil
}

func setConfig(ctx context.Context, s *Session, cp protocol.ConfigSetParams) (any, error) {
	path, err := pluginKeyPath(s.p.ID(), cp.Key)
	if err != nil {
		return nil, err
	}
	value := jsonx.ExactNumbers(cp.Value)
	if err := checkStoredValue(value, fmt.Sprintf("the value of ctx.set_config(%q)", cp.Key)); err != nil {
		return nil, err
	}
	err = s.h.opts.Store.Update(ctx, func(d *config.Doc) error { return d.SetPath(path, value) })
	if err != nil {
		return nil, protocol.Errorf(protocol.CodeRuntimeError, "set_config: %v", err)
	}
	return nil, nil
}

// checkStoredValue refuses a value a plugin stores (set_config, state) that is
// too deep or too large: stored, it would cost every later read of the file.
// Nothing is stored then; the plugin gets a ValueError.
func checkStoredValue(v any, what string) error {
	if err := limits.CheckValue(v, what, limits.PluginValue); err != nil {
		return protocol.Errorf(protocol.CodeInvalidArgument, "%v", err)
	}
	b, err := json.Marshal(v)
	if err == nil && len(b) > limits.PluginValue.MaxBytes {
		return protocol.Errorf(protocol.CodeInvalidArgument, "%s is %d bytes of JSON, over the %d-byte cap; %s",
			what, len(b), limits.PluginValue.MaxBytes, limits.PluginValue.Fix)
	}
	return nil
}
