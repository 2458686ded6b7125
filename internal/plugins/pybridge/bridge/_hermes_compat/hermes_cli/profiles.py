"""Compatibility shim for the `hermes_cli.profiles` helpers plugins import."""

import os
import re
import sys

from hermes_constants import get_default_hermes_root, get_hermes_home  # noqa: F401 - re-exported

# The names hermes accepts for --profile.
_PROFILE_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def get_active_profile_name():
    """The profile this plugin runs under, as hermes resolved it: "default" for the
    default home, the profile id for <root>/profiles/<id>, "custom" for any other home."""
    bridge = getattr(sys.modules.get("_hermes_bridge_core"), "_BRIDGE", None)
    name = bridge.info.get("profile_name") if bridge is not None else None
    return name or "default"


def normalize_profile_name(name):
    if not isinstance(name, str):
        name = str(name)
    stripped = name.strip()
    if not stripped:
        raise ValueError("profile name cannot be empty")
    return "default" if stripped.casefold() == "default" else stripped


def get_profile_dir(name):
    """The home directory of profile `name` ("default" is the root itself)."""
    canon = normalize_profile_name(name)
    if canon == "default":
        return get_default_hermes_root()
    if not _PROFILE_ID_RE.match(canon):
        raise ValueError("invalid profile name %r: use letters, digits, '.', '_' or '-'" % canon)
    return get_default_hermes_root() / "profiles" / canon


def profile_exists(name):
    try:
        canon = normalize_profile_name(name)
        return canon == "default" or get_profile_dir(canon).is_dir()
    except ValueError:
        return False


def list_profile_names():
    """"default" and the profile directories under <root>/profiles, sorted."""
    names = ["default"]
    root = get_default_hermes_root() / "profiles"
    try:
        entries = sorted(os.listdir(root))
    except OSError:
        return names
    names.extend(e for e in entries if e != "default" and _PROFILE_ID_RE.match(e) and (root / e).is_dir())
    return names
