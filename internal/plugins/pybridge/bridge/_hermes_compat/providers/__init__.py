"""hermes-go's stand-in for upstream's `providers` package: register_provider(profile),
called by a model-provider plugin's __init__.py at import time."""

from .base import OMIT_TEMPERATURE, ProviderProfile  # noqa: F401

_REGISTERED = {}


def register_provider(profile):
    from _hermes_bridge_core import providers as _bridge_providers

    _bridge_providers.register_module_level(profile)
    _REGISTERED[getattr(profile, "name", "")] = profile


def get_provider_profile(name):
    return _REGISTERED.get(name)


def list_providers():
    return list(_REGISTERED.values())
