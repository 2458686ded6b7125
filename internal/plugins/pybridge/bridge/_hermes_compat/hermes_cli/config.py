"""Compatibility shim for the `hermes_cli.config` helpers plugins import.

load_config() returns config.yaml as the user wrote it: upstream's built-in defaults
are not merged in, so read optional keys with .get(). Writing goes through hermes:
a plugin's own settings via ctx.set_config, anything else with `hermes config set`.
"""

import sys

from hermes_constants import get_hermes_home


def _core():
    return sys.modules["_hermes_bridge_core"]


def get_config_path():
    return get_hermes_home() / "config.yaml"


def load_config():
    """The user's config.yaml as a dict ({} when there is none)."""
    try:
        import yaml  # only when asked: plugin start-up never pays for it
    except ImportError:
        raise _core().HermesNotAvailableError(
            "hermes_cli.config.load_config() needs PyYAML, which is not installed for %s: "
            "install it (%s -m pip install pyyaml), or read the plugin's own settings with ctx.get_config()"
            % (sys.executable, sys.executable)) from None
    try:
        with open(get_config_path(), encoding="utf-8") as f:
            data = yaml.safe_load(f)
    except FileNotFoundError:
        return {}
    return data if isinstance(data, dict) else {}


def set_config_value(key, value):
    """Set a dotted config key. Only the plugin's own settings
    (plugins.entries.<id>.settings.<key>) can be written from a plugin in this host."""
    bridge = _core()._BRIDGE
    ctx = bridge.ctx if bridge is not None else None
    if ctx is not None:
        own = "plugins.entries.%s.settings." % ctx.plugin_id
        if isinstance(key, str) and key.startswith(own) and len(key) > len(own):
            ctx.set_config(key[len(own):], value)
            return
    shown = str(value)
    if len(shown) > 200 or "\n" in shown:
        shown = "VALUE"
    else:
        import shlex

        shown = shlex.quote(shown)
    raise _core().HermesNotAvailableError(
        "set_config_value(%r) is not available in this host yet: use `hermes config set %s %s`"
        % (key, key, shown))


def save_config(config):
    raise _core().HermesNotAvailableError(
        "save_config() is not available in this host yet: change keys with `hermes config set KEY VALUE`")
