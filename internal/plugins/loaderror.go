package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hermes-go/hermes/internal/plugins/hostapi"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// registerError turns a failed register call into the message users see.
func (m *Manager) registerError(p *Plugin, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("register() did not finish within %s; the plugin was stopped", registerTimeout)
	}
	var perr *protocol.Error
	if errors.As(err, &perr) {
		data := hostapi.HandlerData(perr)
		// A relative import of a module the plugin should ship itself: pip advice
		// would send the user looking for a package that does not exist.
		var own struct {
			Module string `json:"plugin_module"`
			Dir    string `json:"plugin_dir"`
			Hermes string `json:"hermes_module"`
		}
		if len(perr.Data) > 0 && json.Unmarshal(perr.Data, &own) == nil && own.Module != "" {
			file := strings.ReplaceAll(own.Module, ".", "/")
			return fmt.Errorf("imports its own module '%s', which is not in the plugin directory %s: add %s.py (or a %s/ package) there, or fix the import",
				own.Module, own.Dir, file, file)
		}
		// Likewise a module of the Python Hermes agent (hermes_cli.auth, agent.*): no
		// package on PyPI provides it.
		if own.Hermes != "" {
			return fmt.Errorf("imports '%s', a module of Hermes itself that this host does not provide (yet); it is not a pip package, so the plugin cannot load here until hermes provides that module",
				own.Hermes)
		}
		if data.Module != "" {
			interp := "the configured Python"
			if m.python != nil {
				interp = m.python.Executable
			}
			return fmt.Errorf("imports module '%s', which is not installed for %s: install it for that interpreter (e.g. %s -m pip install <package>) or set plugins.python to one that has it",
				data.Module, interp, interp)
		}
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
