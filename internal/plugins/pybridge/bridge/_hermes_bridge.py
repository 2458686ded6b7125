"""Entry point of the hermes plugin bridge. Kept tiny: Python caches the bytecode of
what a script imports (the _hermes_bridge_core package), never of the script itself."""
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
import _hermes_bridge_core  # noqa: E402

# The bridge directory must not shadow the plugin's own imports.
if sys.path and os.path.abspath(sys.path[0] or ".") == _here:
    sys.path.pop(0)
sys.exit(_hermes_bridge_core.main())
