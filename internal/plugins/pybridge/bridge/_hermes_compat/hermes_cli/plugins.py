"""Compatibility shim for the `hermes_cli.plugins` names plugins import."""

import os
import sys
from pathlib import Path

_core = sys.modules["_hermes_bridge_core"]

# For type hints and isinstance checks: the classes this bridge actually uses.
PluginContext = _core.PluginContext
PluginManifest = _core.PluginManifest
PluginRegistration = _core.PluginRegistration
PluginToolOverrideError = _core.PluginToolOverrideError


def get_bundled_plugins_dir():
    """$HERMES_BUNDLED_PLUGINS, the directory hermes scans for bundled plugins.

    Unset, there is no such directory: this host's bundled plugins are built into the
    hermes binary, so no path can honestly be returned."""
    value = os.getenv("HERMES_BUNDLED_PLUGINS")
    if value:
        return Path(value)
    raise _core.HermesNotAvailableError(
        "get_bundled_plugins_dir(): this host's bundled plugins are built into the hermes binary, "
        "not a directory (set HERMES_BUNDLED_PLUGINS to add one)")
