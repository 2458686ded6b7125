"""Fitting plugins written for upstream's Python host: the `plugins.<name>` alias,
telling a missing pip package from a missing plugin file or Hermes module, giving
callbacks only the keyword arguments they name, and checking a tool's result."""

import os
import sys
import traceback

CO_VARKEYWORDS = 0x08
CO_COROUTINE = 0x80


def _is_multimodal(value):
    return isinstance(value, dict) and value.get("_multimodal") is True and isinstance(value.get("content"), list)


def _tool_result(value):
    """The handler contract is str (or the _multimodal envelope). Anything else goes to
    hermes as a marker naming the Python type: encoding it (None as null, bytes decoded,
    object() as its repr) would make a broken handler look like a successful one."""
    if isinstance(value, str) or _is_multimodal(value):
        return value
    return {"_hermes_unsupported_result": type(value).__name__}


# (package name, directory) of the directory plugin this process loaded: a missing
# module under that package is a file missing from the plugin, not a pip install.
# Set by Bridge.import_plugin.
_PLUGIN_PACKAGE = None

# Top-level packages and modules of Hermes itself (the Python agent). A plugin that
# imports one this bridge does not provide needs Hermes, not a pip install.
_HERMES_INTERNAL = frozenset((
    "hermes_cli", "agent", "gateway", "plugins", "providers", "utils", "model_tools",
    "plugin_runtime", "tools", "run_agent", "hermes_state", "hermes_constants", "hermes_logging",
    "hermes_time", "toolsets", "cron", "acp_adapter", "tui_gateway",
))


class _PluginsAlias:
    """Meta-path finder that makes `plugins.<name>` the loaded plugin package.

    Upstream's bundled plugins live in the `plugins` package and import themselves
    absolutely (`from plugins.spotify import tools`). Two instances: one first on
    sys.meta_path maps the aliases (and below) onto the plugin's own modules, so none
    is imported twice; one last supplies an empty `plugins` (and any parent of an
    alias) only when nothing installed provides it."""

    def __init__(self, aliases, package, parents):
        self.aliases = aliases  # "plugins.<name>" names of the plugin's package
        self.package = package
        self.parents = parents

    def _alias(self, name):
        for alias in self.aliases:
            if name == alias or name.startswith(alias + "."):
                return alias
        return None

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith("plugins"):
            return None
        if self.parents:
            wanted = fullname == "plugins" or any(a.startswith(fullname + ".") for a in self.aliases)
        else:
            wanted = self._alias(fullname) is not None
        if not wanted:
            return None
        import importlib.machinery

        # An alias takes the attributes of the module it stands for; a parent is a package.
        return importlib.machinery.ModuleSpec(fullname, self, is_package=self.parents)

    def create_module(self, spec):
        alias = self._alias(spec.name)
        if alias is not None:
            import importlib

            return importlib.import_module(self.package + spec.name[len(alias):])
        module = type(sys)(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        pass


def _install_plugins_alias(plugin, package, directory):
    aliases = {"plugins." + os.path.basename(os.path.normpath(directory))}
    key = plugin.get("id") or plugin.get("name") or ""
    if key and all(part.isidentifier() for part in key.split("/")):
        aliases.add("plugins." + key.replace("/", "."))
    aliases = {a for a in aliases if all(part.isidentifier() for part in a.split("."))}
    aliases = sorted(aliases)
    if aliases:
        sys.meta_path.insert(0, _PluginsAlias(aliases, package, parents=False))
    # Even without an alias: `plugins.spotify` from another plugin is then reported
    # as that module of Hermes, not as a missing `plugins` package.
    sys.meta_path.append(_PluginsAlias(aliases, package, parents=True))


def _missing_own_submodule(exc):
    """`from . import tools` (or `from plugins.<name> import tools`) with no tools.py:
    Python reports a name the package lacks, not a missing module. The dotted module
    path inside the plugin, or None when the name is not a missing file."""
    package, directory = _PLUGIN_PACKAGE
    if exc.name != package and not exc.name.startswith(package + "."):
        return None
    missing = getattr(exc, "name_from", None)  # Python 3.12+
    if not missing:
        text = str(exc)
        if not text.startswith("cannot import name '"):
            return None
        missing = text[len("cannot import name '"):].partition("'")[0]
    inner = exc.name[len(package) + 1:]
    parent = os.path.join(directory, *inner.split(".")) if inner else directory
    # Only a package's missing submodule: `from .mod import fn` is a name mod lacks.
    if not missing.isidentifier() or not os.path.isfile(os.path.join(parent, "__init__.py")):
        return None
    if os.path.exists(os.path.join(parent, missing + ".py")) or os.path.isdir(os.path.join(parent, missing)):
        return None
    return (inner + "." if inner else "") + missing


def _exception_error(exc):
    data = {
        "type": type(exc).__name__,
        "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-8000:],
    }
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        data["module"] = exc.name
        if _PLUGIN_PACKAGE and exc.name.startswith(_PLUGIN_PACKAGE[0] + "."):
            data["plugin_module"] = exc.name[len(_PLUGIN_PACKAGE[0]) + 1:]
            data["plugin_dir"] = _PLUGIN_PACKAGE[1]
        elif exc.name.partition(".")[0] in _HERMES_INTERNAL:
            data["hermes_module"] = exc.name
    elif isinstance(exc, ImportError) and exc.name and _PLUGIN_PACKAGE:
        missing = _missing_own_submodule(exc)
        if missing:
            data["plugin_module"] = missing
            data["plugin_dir"] = _PLUGIN_PACKAGE[1]
    message = str(exc)
    if isinstance(exc, KeyError) and exc.args:
        message = repr(exc.args[0])
    return {"code": -32000, "message": message, "data": data}


_SIG_CACHE = {}


def _signature_of(fn):
    """(accepts_var_kw, [param names], {names without default}) of a callable."""
    key = fn
    try:
        cached = _SIG_CACHE.get(key)
    except TypeError:
        key = None
        cached = None
    if cached is not None:
        return cached
    result = None
    target = getattr(fn, "__func__", fn)
    code = getattr(target, "__code__", None)
    if code is not None and not hasattr(fn, "__wrapped__"):
        names = list(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])
        defaults = len(getattr(target, "__defaults__", None) or ())
        kwdefaults = getattr(target, "__kwdefaults__", None) or {}
        positional = names[: code.co_argcount]
        required = set(positional[: len(positional) - defaults])
        required.update(n for n in names[code.co_argcount:] if n not in kwdefaults)
        if fn is not target:  # bound method: drop self
            if positional:
                required.discard(positional[0])
                names.remove(positional[0])
        result = (bool(code.co_flags & CO_VARKEYWORDS), names, required)
    else:
        import inspect

        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            result = (True, [], set())
        else:
            var_kw = False
            names = []
            required = set()
            for p in sig.parameters.values():
                if p.kind == p.VAR_KEYWORD:
                    var_kw = True
                elif p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
                    names.append(p.name)
                    if p.default is p.empty:
                        required.add(p.name)
            result = (var_kw, names, required)
    if key is not None:
        try:
            _SIG_CACHE[key] = result
        except TypeError:
            pass
    return result


_NO_KWARGS = {}


def _no_kwargs(fn):
    """The keyword arguments of a tool handler called with an empty payload: none,
    or None for each extra parameter it requires (cached per handler)."""
    try:
        cached = _NO_KWARGS.get(fn)
    except TypeError:
        return _narrow(fn, {}, skip_first=True)
    if cached is None:
        cached = _narrow(fn, {}, skip_first=True)
        try:
            _NO_KWARGS[fn] = cached
        except TypeError:
            pass
    return cached


def _narrow(fn, payload, skip_first, aliases=False):
    """Give a callback the keyword arguments it can take, the way upstream does:
    **kwargs receives everything; a narrow callback receives only what it names."""
    var_kw, names, required = _signature_of(fn)
    if skip_first and names:
        names = names[1:]
    if var_kw:
        out = dict(payload)
    else:
        out = {n: payload[n] for n in names if n in payload}
    if aliases and "params" in names and "params" not in payload and "args" in payload:
        # The seed example's post_tool_call hook is written as (tool_name, params, result).
        out["params"] = payload["args"]
    for n in names:
        if n not in out and n in required:
            out[n] = None
    return out
