"""Compatibility shim for the `hermes_constants` helpers plugins commonly import."""

import os
from pathlib import Path


def get_hermes_home():
    value = os.environ.get("HERMES_HOME")
    return Path(value).expanduser() if value else Path.home() / ".hermes"


def get_default_hermes_root():
    """The root that holds profiles/: <root> when the home is <root>/profiles/<name>,
    the home itself otherwise (hermes resolves --profile the same way)."""
    home = get_hermes_home()
    if home.parent.name == "profiles":
        return home.parent.parent
    return home


def display_hermes_home():
    home = str(get_hermes_home())
    user = str(Path.home())
    return "~" + home[len(user):] if home.startswith(user) else home
