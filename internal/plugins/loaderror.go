package plugins

import (
	"context"
	"errors"
	"fmt"

	"github.com/hermes-go/hermes/internal/plugins/hostapi"
	"github.com/hermes-go/hermes/internal/plugins/runtime/python"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// registerError turns a failed register call into the message users see.
func (m *Manager) registerError(p *Plugin, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("register() did not finish within %s; the plugin was stopped", registerTimeout)
	}
	var perr *protocol.Error
	if errors.As(err, &perr) {
		if err, ok := python.ImportAdvice(perr, m.py.Executable()); ok {
			return err
		}
		data := hostapi.HandlerData(perr)
		if data.Type != "" {
			if data.Traceback != "" {
				m.log.Debug("plugin register traceback", "plugin", p.Key, "traceback", data.Traceback)
			}
			return fmt.Errorf("%s: %s", data.Type, perr.Message)
		}
		return errors.New(perr.Message)
	}
	return err
}
