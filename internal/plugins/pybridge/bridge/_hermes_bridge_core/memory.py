"""Memory providers: ctx.register_memory_provider and the host's memory.* calls. The
provider object lives here, in the plugin's process; hermes' agent holds a proxy that
calls its methods by upstream's names and keyword arguments. Results are returned as
they are: the host checks them (a provider is untrusted)."""

from .compat import _narrow
from .rpc import HostError

# memory.<method> → the provider's method name.
METHODS = {
    "memory.initialize": "initialize",
    "memory.is_available": "is_available",
    "memory.system_prompt_block": "system_prompt_block",
    "memory.prefetch": "prefetch",
    "memory.queue_prefetch": "queue_prefetch",
    "memory.sync_turn": "sync_turn",
    "memory.tool_schemas": "get_tool_schemas",
    "memory.tool_call": "handle_tool_call",
    "memory.turn_start": "on_turn_start",
    "memory.session_end": "on_session_end",
    "memory.session_switch": "on_session_switch",
    "memory.pre_compress": "on_pre_compress",
    "memory.memory_write": "on_memory_write",
    "memory.config_schema": "get_config_schema",
    "memory.save_config": "save_config",
    "memory.unavailable_reason": "unavailable_reason",
    "memory.shutdown": "shutdown",
}


def _base():
    try:
        from agent.memory_provider import MemoryProvider
    except ImportError:  # the plugin shadows `agent`: take ours directly
        import importlib.util
        import os

        path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                            "_hermes_compat", "agent", "memory_provider.py")
        spec = importlib.util.spec_from_file_location("_hermes_memory_provider", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        MemoryProvider = mod.MemoryProvider
    return MemoryProvider


def register(ctx, provider):
    base = _base()
    bridge = ctx._bridge
    if not isinstance(provider, base):
        bridge.notify("log", {"level": "warning", "message":
                              "register_memory_provider: %s is not a MemoryProvider subclass "
                              "(from agent.memory_provider import MemoryProvider); ignored" % type(provider).__name__})
        return None
    try:
        name = provider.name
    except Exception as exc:  # a property that raises
        raise ValueError("register_memory_provider: the provider's name raised %s: %s" % (type(exc).__name__, exc))
    if not isinstance(name, str) or not name.strip():
        raise ValueError("register_memory_provider: the provider's name must be a non-empty string")
    name = name.strip()
    bridge.memory_providers[name] = provider
    ctx._call("ctx.register_other", {"registrar": "register_memory_provider", "name": name,
                                     "handle": "", "details": {"class": type(provider).__name__,
                                                               "inherited": _inherited(provider),
                                                               "after_turn": True}})
    from .context import PluginRegistration

    return PluginRegistration(ctx, "memory_provider", name)


# Per-turn hooks whose MemoryProvider default does nothing: the host skips the
# round trip for those a provider does not override.
SKIPPABLE = ("prefetch", "queue_prefetch", "sync_turn", "on_turn_start", "on_session_switch",
             "on_pre_compress", "on_memory_write")


def _inherited(provider):
    base = _base()
    if base is None:
        return []
    own = getattr(provider, "__dict__", {})
    return [m for m in SKIPPABLE if m not in own and getattr(type(provider), m, None) is getattr(base, m, None)]


def register_default(ctx, module):
    """upstream's memory loader without register(): the first MemoryProvider subclass
    defined in the module, instantiated with no arguments."""
    import inspect

    base = _base()
    for _, obj in inspect.getmembers(module, inspect.isclass):
        if issubclass(obj, base) and obj is not base and not inspect.isabstract(obj) \
                and obj.__module__ == module.__name__:
            return register(ctx, obj())
    raise HostError(-32005, "no register() function and no MemoryProvider subclass in the module")


class MemoryHost:
    def __init__(self, bridge):
        self.bridge = bridge

    def methods(self):
        out = {}
        for method, attr in METHODS.items():
            out[method] = self._caller(attr)
        out["memory.after_turn"] = self.m_after_turn
        return out

    def m_after_turn(self, params, rid):
        """sync_turn then queue_prefetch in one round trip; each one's exception
        is reported by name ("Type: message"), and the other still runs."""
        name = params.get("provider") or ""
        provider = self.bridge.memory_providers.get(name)
        if provider is None:
            raise HostError(-32005, "this plugin registered no memory provider %r" % name)
        args = params.get("args") or {}
        out = {}
        for attr in ("sync_turn", "queue_prefetch"):
            fn = getattr(provider, attr)
            try:
                self.bridge.run_maybe_async(fn(**_narrow(fn, args.get(attr) or {}, skip_first=False)), rid)
                out[attr] = None
            except Exception as exc:  # the provider's own failure, reported as a separate call's would be
                out[attr] = "%s: %s" % (type(exc).__name__, exc)
        return out

    def _caller(self, attr):
        def call(params, rid):
            name = params.get("provider") or ""
            provider = self.bridge.memory_providers.get(name)
            if provider is None:
                raise HostError(-32005, "this plugin registered no memory provider %r" % name)
            fn = getattr(provider, attr, None)
            if fn is None or not callable(fn):
                raise HostError(-32005, "memory provider %r has no %s()" % (name, attr))
            kwargs = _narrow(fn, params.get("args") or {}, skip_first=False)
            return self.bridge.run_maybe_async(fn(**kwargs), rid)
        return call
