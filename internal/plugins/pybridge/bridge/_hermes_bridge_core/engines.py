"""Context engines: ctx.register_context_engine and the host's context_engine.call. The
engine object lives here; hermes' agent holds a proxy that calls its methods by name,
passing only the keyword arguments the method's signature takes (as upstream's host)."""

import inspect

from .rpc import HostError

# The engine methods the host may call.
METHODS = frozenset({
    "update_model", "update_from_response", "should_compress", "compress", "get_status",
    "on_session_start", "on_session_end", "on_session_reset",
})


def register(ctx, engine):
    bridge = ctx._bridge
    try:
        from agent.context_engine import ContextEngine
    except ImportError:  # pragma: no cover - the compat package is always there
        ContextEngine = None
    if ContextEngine is not None and not isinstance(engine, ContextEngine):
        _warn(bridge, "plugin %s: register_context_engine needs a ContextEngine instance (from agent.context_engine "
              "import ContextEngine), not %s; ignored" % (ctx.plugin_id, type(engine).__name__))
        return None
    name = getattr(engine, "name", None)
    if not isinstance(name, str) or not name.strip():
        raise ValueError("register_context_engine: the engine's name must be a non-empty string")
    name = name.strip()
    if bridge.context_engines and name not in bridge.context_engines:
        _warn(bridge, "plugin %s: Only one context engine plugin is allowed; '%s' is ignored" % (ctx.plugin_id, name))
        return None
    details = {}
    for key in ("threshold_percent", "protect_first_n", "protect_last_n"):
        value = getattr(engine, key, None)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            details[key] = value
    res = ctx._call("ctx.register_other", {"registrar": "register_context_engine", "name": name, "details": details})
    if isinstance(res, dict) and res.get("registered") is False:
        return None
    bridge.context_engines[name] = engine
    from .context import PluginRegistration

    return PluginRegistration(ctx, "context_engine", name)


def register_default(ctx, module):
    """upstream's context_engine loader without register(): the first concrete
    ContextEngine subclass defined in the module, instantiated with no arguments."""
    from agent.context_engine import ContextEngine

    for _, obj in inspect.getmembers(module, inspect.isclass):
        if issubclass(obj, ContextEngine) and obj is not ContextEngine and not inspect.isabstract(obj) \
                and obj.__module__ == module.__name__:
            return register(ctx, obj())
    raise HostError(-32005, "no register() function and no ContextEngine subclass in the module")


def _warn(bridge, message):
    bridge.notify("log", {"level": "warning", "message": message})


def _accepts(fn, kwargs):
    """The keyword arguments of kwargs that fn's signature takes (all of them with **kw)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return dict(kwargs)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return dict(kwargs)
    return {k: v for k, v in kwargs.items() if k in params}


def _message(m):
    """One message of compress()'s result in the wire shape, or None when it is not one."""
    if not isinstance(m, dict) or not isinstance(m.get("role"), str):
        return None
    content = m.get("content")
    if isinstance(content, list):
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    out = {"role": m["role"], "content": "" if content is None else str(content)}
    for key in ("name", "tool_call_id"):
        if isinstance(m.get(key), str) and m[key]:
            out[key] = m[key]
    if isinstance(m.get("tool_calls"), list) and m["tool_calls"]:
        out["tool_calls"] = m["tool_calls"]
    return out


class EngineHost:
    def __init__(self, bridge):
        self.bridge = bridge

    def methods(self):
        return {"context_engine.call": self.m_call}

    def m_call(self, params, rid):
        name = params.get("name") or ""
        engine = self.bridge.context_engines.get(name)
        if engine is None:
            raise HostError(-32005, "this plugin registered no context engine %r" % name)
        method = params.get("method") or ""
        if method not in METHODS:
            raise HostError(-32602, "context engine method %r is not one the host calls" % method)
        fn = getattr(engine, method, None)
        if not callable(fn):
            raise HostError(-32005, "context engine %r has no method %s()" % (name, method))
        result = self.bridge.run_maybe_async(fn(**_accepts(fn, params.get("kwargs") or {})), rid)
        if method == "compress":
            if not isinstance(result, list):
                raise TypeError("%s.compress() returned %s, not a list of messages" % (name, type(result).__name__))
            msgs = [_message(m) for m in result]
            if any(m is None for m in msgs):
                raise TypeError("%s.compress() returned a list with an item that is not a message dict" % name)
            return {"messages": msgs}
        if method == "should_compress":
            return bool(result)
        if method == "get_status":
            return result if isinstance(result, dict) else {}
        return None
