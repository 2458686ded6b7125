"""Model providers: register_provider(ProviderProfile(...)) and the host's
model_provider.call. The profile object lives here; hermes reads its fields once at
registration and calls the hooks a subclass overrides by name (many providers may be
loaded at once, unlike memory providers and context engines)."""

from .engines import _accepts
from .rpc import HostError

# The hooks the host may call, and what each must return.
HOOKS = ("prepare_messages", "build_extra_body", "fetch_models")

# register_provider() calls made while the plugin's module imported, before its ctx
# exists; Bridge.m_load registers them once it has one.
_PENDING = []


def register_module_level(profile):
    _PENDING.append(profile)


def flush(ctx):
    pending = list(_PENDING)
    del _PENDING[:]
    for profile in pending:
        register(ctx, profile)


def _base():
    try:
        from providers.base import ProviderProfile
    except ImportError:  # pragma: no cover - the compat package is always there
        return None
    return ProviderProfile


def _strs(value, what, name):
    if value is None:
        return []
    if isinstance(value, str):
        value = (value,)
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise TypeError("register_provider %s: %s must be a tuple of strings" % (name, what))
    return list(value)


def register(ctx, profile):
    bridge = ctx._bridge
    base = _base()
    if base is not None and not isinstance(profile, base):
        raise TypeError("register_provider needs a ProviderProfile (from providers.base import ProviderProfile), "
                        "not %s" % type(profile).__name__)
    name = getattr(profile, "name", None)
    if not isinstance(name, str) or not name.strip():
        raise ValueError("register_provider: the profile's name must be a non-empty string")
    name = name.strip()
    headers = getattr(profile, "default_headers", None) or {}
    if not isinstance(headers, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in headers.items()):
        raise TypeError("register_provider %s: default_headers must be a dict of strings" % name)
    hooks = [h for h in HOOKS if base is None or getattr(type(profile), h, None) is not getattr(base, h, None)]
    details = {
        "base_url": str(getattr(profile, "base_url", "") or ""),
        "models_url": str(getattr(profile, "models_url", "") or ""),
        "api_mode": str(getattr(profile, "api_mode", "") or ""),
        "display_name": str(getattr(profile, "display_name", "") or ""),
        "description": str(getattr(profile, "description", "") or ""),
        "env_vars": _strs(getattr(profile, "env_vars", ()), "env_vars", name),
        "aliases": _strs(getattr(profile, "aliases", ()), "aliases", name),
        "fallback_models": _strs(getattr(profile, "fallback_models", ()), "fallback_models", name),
        "default_headers": dict(headers),
        "hooks": hooks,
    }
    res = ctx._call("ctx.register_other", {"registrar": "register_provider", "name": name, "details": details})
    if isinstance(res, dict) and res.get("registered") is False:
        return None
    bridge.model_providers[name] = profile
    from .context import PluginRegistration

    return PluginRegistration(ctx, "provider", name)


class ProviderHost:
    def __init__(self, bridge):
        self.bridge = bridge

    def methods(self):
        return {"model_provider.call": self.m_call}

    def m_call(self, params, rid):
        name = params.get("name") or ""
        profile = self.bridge.model_providers.get(name)
        if profile is None:
            raise HostError(-32005, "this plugin registered no model provider %r" % name)
        method = params.get("method") or ""
        if method not in HOOKS:
            raise HostError(-32602, "model provider hook %r is not one the host calls" % method)
        fn = getattr(profile, method)
        kwargs = params.get("kwargs") or {}
        if method == "prepare_messages":
            result = self.bridge.run_maybe_async(fn(kwargs.get("messages") or []), rid)
            if not isinstance(result, list) or not all(isinstance(m, dict) for m in result):
                raise TypeError("%s.prepare_messages() returned %s, not a list of message dicts"
                                % (name, type(result).__name__))
            return {"messages": result}
        result = self.bridge.run_maybe_async(fn(**_accepts(fn, kwargs)), rid)
        if method == "build_extra_body":
            if result is None:
                return {}
            if not isinstance(result, dict):
                raise TypeError("%s.build_extra_body() returned %s, not a dict" % (name, type(result).__name__))
            return result
        # fetch_models
        if result is None:
            return None
        if not isinstance(result, (list, tuple)) or not all(isinstance(m, str) for m in result):
            raise TypeError("%s.fetch_models() returned %s, not a list of model ids" % (name, type(result).__name__))
        return list(result)
