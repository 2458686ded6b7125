"""hermes plugin bridge: runs one Hermes Python plugin in its own process.

The Go host starts _hermes_bridge.py with two dedicated pipes (HERMES_PLUGIN_FD_IN /
HERMES_PLUGIN_FD_OUT) that carry JSON-RPC 2.0, one object per line. The plugin's own
stdout and stderr stay free for print() and are shown by the host as log lines.

Modules: rpc (the wire), bridge (the host's methods), context (the plugin's ctx),
cli_io (plugin CLI commands), compat (fitting upstream's plugins), forkserver,
process (main). Stdlib only; heavy modules (asyncio, inspect, argparse, logging),
and cli_io and forkserver of this package, are imported only when needed, to keep
start-up fast; the fork server imports cli_io before it forks, so its children
import nothing of the bridge themselves.
"""

from .rpc import HermesNotAvailableError, HostError, PluginLlmTrustError, PluginToolOverrideError
from .context import PluginContext, PluginManifest, PluginRegistration, PluginState
from .bridge import Bridge
from .process import main

# The bridge of this process, set by Bridge(): the compat shims (hermes_cli.profiles,
# ...) read what hermes told it (profile, plugin id) and reach ctx through it.
_BRIDGE = None

# The bridge was once this one module: the names plugins see (in tracebacks, reprs,
# `type(e).__module__`) keep naming it, not the submodule that defines them.
for _cls in (HermesNotAvailableError, HostError, PluginLlmTrustError, PluginToolOverrideError,
             PluginContext, PluginManifest, PluginRegistration, PluginState):
    _cls.__module__ = __name__
del _cls
