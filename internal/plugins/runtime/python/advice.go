package python

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hermes-go/hermes/pkg/protocol"
)

// ImportAdvice turns a register() failure that is an import problem into what
// the user should do about it; ok=false when it is not one. interp is the
// interpreter the plugin ran under ("" when unknown).
func ImportAdvice(perr *protocol.Error, interp string) (error, bool) {
	var d struct {
		Module string `json:"module"`        // a module that is not installed (ModuleNotFoundError)
		Own    string `json:"plugin_module"` // a module the plugin should ship itself
		Dir    string `json:"plugin_dir"`
		Hermes string `json:"hermes_module"` // a module of the Python Hermes agent
	}
	if len(perr.Data) == 0 || json.Unmarshal(perr.Data, &d) != nil {
		return nil, false
	}
	switch {
	case d.Own != "":
		// A relative import of the plugin's own module: pip advice would send the
		// user looking for a package that does not exist.
		file := strings.ReplaceAll(d.Own, ".", "/")
		return fmt.Errorf("imports its own module '%s', which is not in the plugin directory %s: add %s.py (or a %s/ package) there, or fix the import",
			d.Own, d.Dir, file, file), true
	case d.Hermes != "":
		// Likewise a module of the Python Hermes agent (hermes_cli.auth, agent.*): no
		// package on PyPI provides it.
		return fmt.Errorf("imports '%s', a module of Hermes itself that this host does not provide (yet); it is not a pip package, so the plugin cannot load here until hermes provides that module",
			d.Hermes), true
	case d.Module != "":
		if interp == "" {
			interp = "the configured Python"
		}
		return fmt.Errorf("imports module '%s', which is not installed for %s: install it for that interpreter (e.g. %s -m pip install <package>) or set plugins.python to one that has it",
			d.Module, interp, interp), true
	}
	return nil, false
}
