"""The Bridge: what each host → plugin method does, importing the plugin, running
its coroutines on an asyncio loop, and routing its logging to the host."""

import os
import sys
import threading
import traceback

from . import compat
from .compat import _install_plugins_alias, _narrow, _no_kwargs, _tool_result
from .context import _DISPATCH_DEPTH, PluginContext
from .engines import EngineHost
from . import providers
from .providers import ProviderHost
from .memory import MemoryHost
from .platforms import PlatformHost
from .rpc import PROTOCOL_VERSION, Endpoint, HostError

# The package, whose _BRIDGE the compat shims read.
_package = sys.modules[__package__]


class _LoopTask:
    """A coroutine running on a loop of its own, cancellable from another thread
    like the futures of the bridge's loop."""

    def __init__(self, loop, task):
        self.loop = loop
        self.task = task

    def cancel(self):
        try:
            self.loop.call_soon_threadsafe(self.task.cancel)
        except RuntimeError:
            pass  # the loop has already closed


async def _as_coroutine(awaitable):
    return await awaitable


class Bridge(Endpoint):
    """The plugin's end of the protocol: one per process, serving one plugin."""

    def __init__(self, rfile, wfile):
        Endpoint.__init__(self, rfile, wfile)
        # The compat shims (hermes_cli.profiles, ...) read what hermes told this
        # bridge (profile, plugin id) and reach ctx through it.
        _package._BRIDGE = self
        self.info = {}
        self.ctx = None
        self.module = None
        self.loop = None
        self.loop_lock = threading.Lock()
        self.loop_thread = None
        # How many calls to the host the loop's own thread is blocked in (a
        # coroutine calling ctx.dispatch_tool, get_config, ...): while it is, no
        # coroutine can run on the loop, so new ones get a loop of their own.
        self.loop_blocked = 0
        self.unload_callbacks = []
        self.methods = {
            "initialize": self.m_initialize,
            "register": self.m_register,
            "shutdown": self.m_shutdown,
            "ping": lambda p, rid: {"pong": True},
            "tool.call": self.m_tool_call,
            "hook.call": self.m_hook_call,
            "command.call": self.m_command_call,
            "check.call": self.m_check_call,
            "event.deliver": self.m_event,
            "cli.run": self.m_cli_run,
            "middleware.call": self.m_middleware_call,
            "prompt_section.render": self.m_prompt_section,
            "context_ref.expand": self.m_context_ref,
            "approval.present": self.m_approval_present,
        }
        # register_platform's entries by name, and the adapters they made.
        self.platforms = {}
        self.methods.update(PlatformHost(self).methods())
        # register_context_engine's engine by name (one per plugin).
        self.context_engines = {}
        self.methods.update(EngineHost(self).methods())
        # register_memory_provider's providers by name.
        self.memory_providers = {}
        self.methods.update(MemoryHost(self).methods())
        # register_provider's profiles by name (many at once).
        self.model_providers = {}
        self.methods.update(ProviderHost(self).methods())

    def call(self, method, params, wait=None):
        """Call the host and wait for its answer (from any thread): Endpoint._call,
        counted while it blocks the asyncio loop's own thread."""
        if self.loop_thread is not None and threading.get_ident() == self.loop_thread:
            with self.state_lock:
                self.loop_blocked += 1
            try:
                return self._call(method, params, wait)
            finally:
                with self.state_lock:
                    self.loop_blocked -= 1
        return self._call(method, params, wait)

    # ---- calling plugin code ----------------------------------------------------

    def run_maybe_async(self, value, rid):
        """Await coroutines on the bridge's asyncio loop; return plain values as they are."""
        if not hasattr(value, "__await__"):
            return value
        import asyncio

        loop = self.get_loop()
        if self.loop_blocked and threading.get_ident() != self.loop_thread:
            return self.run_on_own_loop(value, rid)
        fut = asyncio.run_coroutine_threadsafe(_as_coroutine(value), loop)
        if rid is not None:
            with self.state_lock:
                self.running[rid] = fut
        try:
            return fut.result()
        except Exception as exc:  # concurrent.futures.CancelledError included
            if type(exc).__name__ == "CancelledError":
                raise HostError(-32004, "cancelled by the host")
            raise
        finally:
            if rid is not None:
                with self.state_lock:
                    self.running.pop(rid, None)

    def run_on_own_loop(self, value, rid):
        """Run a coroutine to its end on a new loop in this thread: the bridge's loop
        is blocked by a coroutine waiting for this very call (an async tool
        dispatching another async tool, or firing an async hook)."""
        import asyncio

        loop = asyncio.new_event_loop()
        task = loop.create_task(_as_coroutine(value))
        if rid is not None:
            with self.state_lock:
                self.running[rid] = _LoopTask(loop, task)
        try:
            return loop.run_until_complete(task)
        except asyncio.CancelledError:
            raise HostError(-32004, "cancelled by the host")
        finally:
            if rid is not None:
                with self.state_lock:
                    self.running.pop(rid, None)
            loop.close()

    def get_loop(self):
        with self.loop_lock:
            if self.loop is None:
                import asyncio

                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def run():
                    self.loop_thread = threading.get_ident()
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    while True:
                        try:
                            loop.run_forever()
                            return
                        except (SystemExit, KeyboardInterrupt):
                            # A plugin coroutine called sys.exit(): asyncio lets that escape
                            # the loop (the caller still gets it through its future). Keep
                            # the loop running, or every later async call would hang.
                            continue

                threading.Thread(target=run, name="hermes-asyncio", daemon=True).start()
                ready.wait()
                self.loop = loop
            return self.loop

    # ---- host → plugin methods --------------------------------------------------

    def m_initialize(self, params, rid):
        version = params.get("protocol_version")
        if version != PROTOCOL_VERSION:
            raise HostError(-32600, "protocol version %r not supported (bridge speaks %d)"
                            % (version, PROTOCOL_VERSION))
        self.info = params
        os.environ.setdefault("HERMES_HOME", params.get("hermes_home") or "")
        return {
            "protocol_version": PROTOCOL_VERSION,
            "runtime": "python",
            "runtime_version": "%d.%d.%d" % sys.version_info[:3],
            "executable": sys.executable,
        }

    def m_register(self, params, rid):
        plugin = self.info.get("plugin") or {}
        if params.get("entry") == "tools":
            # A bundled platform plugin the gateway loads later: only its tools.py
            # runs now, through register_tools(ctx), as upstream does so that the
            # CLI sees the platform's client tools.
            module = self.import_plugin(plugin, submodule="tools")
            register = getattr(module, "register_tools", None)
            if register is None or not callable(register):
                raise HostError(-32005, "tools.py has no register_tools(ctx) function")
        else:
            module = self.import_plugin(plugin)
            register = getattr(module, "register", None)
            if (register is None or not callable(register)) and plugin.get("category") == "memory":
                from . import memory

                register = lambda ctx: memory.register_default(ctx, module)  # noqa: E731
            elif (register is None or not callable(register)) and plugin.get("category") == "context_engine":
                from . import engines

                register = lambda ctx: engines.register_default(ctx, module)  # noqa: E731
            elif (register is None or not callable(register)) and (plugin.get("category") == "model-providers"
                                                                 or plugin.get("kind") == "model-provider"):
                register = lambda ctx: None  # noqa: E731 - upstream's profiles register at import
            if register is None or not callable(register):
                raise HostError(-32005, "no register() function")
        self.ctx = PluginContext(self, plugin, self.info)
        _install_logging_if_used(self)
        self.run_maybe_async(register(self.ctx), rid)
        providers.flush(self.ctx)
        _install_logging_if_used(self)
        return {"ok": True}

    def import_plugin(self, plugin, submodule=None):
        """Import the plugin's package (its __init__.py), or with submodule only that
        file of it: the package is then a bare one whose __init__.py does not run."""
        import importlib

        source = plugin.get("source")
        if source == "entrypoint":
            target = plugin.get("module") or ""
            modname, _, attr = target.partition(":")
            module = importlib.import_module(modname)
            if attr:
                obj = module
                for part in attr.split("."):
                    obj = getattr(obj, part)
                if callable(obj) and not hasattr(obj, "register"):
                    holder = type(sys)("hermes_entrypoint_" + modname.replace(".", "_"))
                    holder.register = obj
                    return holder
                module = obj
            self.module = module
            return module
        import importlib.util

        directory = plugin.get("dir") or ""
        init = os.path.join(directory, "__init__.py")
        if submodule:
            init = os.path.join(directory, submodule + ".py")
            if not os.path.isfile(init):
                raise HostError(-32005, "No %s.py in %s" % (submodule, directory))
        elif not os.path.isfile(init):
            raise HostError(-32005, "No __init__.py in %s" % directory)
        if "hermes_plugins" not in sys.modules:
            pkg = type(sys)("hermes_plugins")
            pkg.__path__ = []
            sys.modules["hermes_plugins"] = pkg
        slug = (plugin.get("id") or plugin.get("name") or "plugin").replace("/", "__").replace("-", "_")
        name = "hermes_plugins." + slug
        compat._PLUGIN_PACKAGE = (name, directory)
        _install_plugins_alias(plugin, name, directory)
        if submodule:
            package = type(sys)(name)
            package.__path__ = [directory]
            package.__package__ = name
            sys.modules[name] = package
            name = name + "." + submodule
            spec = importlib.util.spec_from_file_location(name, init)
        else:
            spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[directory])
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(name, None)
            raise
        if submodule:
            setattr(sys.modules[name.rpartition(".")[0]], submodule, module)
        self.module = module
        return module

    def m_shutdown(self, params, rid):
        self.run_unload()
        threading.Timer(0.05, lambda: os._exit(0)).start()
        return {"ok": True}

    def run_unload(self):
        callbacks, self.unload_callbacks = self.unload_callbacks, []
        for cb in reversed(callbacks):
            try:
                self.run_maybe_async(cb(), None)
            except Exception:
                traceback.print_exc()
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:
            pass

    def m_tool_call(self, params, rid):
        fn = self.handles.get(params.get("handle"))
        if fn is None:
            raise HostError(-32005, "unknown handle %s" % params.get("handle"))
        args = params.get("args")
        if args is None:
            args = {}
        depth = params.get("dispatch_depth")
        token = _DISPATCH_DEPTH.set(depth) if depth else None
        try:
            kw = params.get("kwargs")
            if kw:
                result = fn(args, **_narrow(fn, kw, skip_first=True))
            else:
                extra = _no_kwargs(fn)
                result = fn(args, **extra) if extra else fn(args)
            if type(result) is str:
                return result  # the usual answer: no awaitable or contract checks
            if hasattr(result, "__await__"):
                # The coroutine's task copies this context: it sees the depth too.
                result = self.run_maybe_async(result, rid)
            return _tool_result(result)
        finally:
            if token is not None:
                _DISPATCH_DEPTH.reset(token)

    def m_hook_call(self, params, rid):
        fn = self.callable_for(params.get("handle"))
        kwargs = _narrow(fn, params.get("kwargs") or {}, skip_first=False, aliases=True)
        return self.run_maybe_async(fn(**kwargs), rid)

    def m_command_call(self, params, rid):
        fn = self.callable_for(params.get("handle"))
        return self.run_maybe_async(fn(params.get("raw_args") or ""), rid)

    def m_check_call(self, params, rid):
        fn = self.callable_for(params.get("handle"))
        return bool(self.run_maybe_async(fn(), rid))

    def m_event(self, params, rid):
        fn = self.callable_for(params.get("handle"))
        payload = params.get("payload") or {}
        kwargs = _narrow(fn, payload, skip_first=False)
        self.run_maybe_async(fn(**kwargs), rid)
        return None

    def m_middleware_call(self, params, rid):
        fn = self.callable_for(params.get("handle"))
        kwargs = dict(params.get("kwargs") or {})
        token = params.get("next_token")
        if token:
            used = []

            def next_call(payload=None):
                if used:
                    raise RuntimeError("next_call may be called only once per middleware invocation")
                used.append(True)
                return self.call("ctx.middleware_next", {"token": token, "payload": payload})

            kwargs["next_call"] = next_call
        return self.run_maybe_async(fn(**kwargs), rid)

    def m_prompt_section(self, params, rid):
        fn = self.callable_for(params.get("handle"))
        return self.run_maybe_async(fn(dict(params.get("info") or {})), rid)

    def m_context_ref(self, params, rid):
        fn = self.callable_for(params.get("handle"))
        return self.run_maybe_async(fn(str(params.get("target") or "")), rid)

    def m_approval_present(self, params, rid):
        from hermes_cli.approval_transport import ApprovalDecision, ApprovalRequest

        fn = self.callable_for(params.get("handle"))
        r = params.get("request") or {}
        request = ApprovalRequest(
            schema_version=int(r.get("schema_version") or 1), request_id=str(r.get("request_id") or ""),
            digest=str(r.get("digest") or ""), command=str(r.get("command") or ""),
            description=str(r.get("description") or ""), pattern_key=str(r.get("pattern_key") or ""),
            pattern_keys=tuple(str(k) for k in r.get("pattern_keys") or ()), surface=str(r.get("surface") or ""),
            timeout_seconds=r.get("timeout_seconds") or 300,
            allowed_choices=tuple(str(c) for c in r.get("allowed_choices") or ()))
        decision = self.run_maybe_async(fn(request), rid)
        if not isinstance(decision, ApprovalDecision):
            # A plain dict or anything else is not a decision the host gave out.
            return {"invalid": type(decision).__name__}
        return {"request_id": str(decision.request_id), "request_digest": str(decision.request_digest),
                "choice": str(decision.choice)}

    def m_cli_run(self, params, rid):
        # Imported when first needed: most plugin processes never run a CLI command
        # (the fork server imports it before forking, so its children need not).
        from . import cli_io

        return cli_io.run_command(self, params, rid)


# ---- logging -----------------------------------------------------------------------

_LOGGING_INSTALLED = False


def _install_logging_if_used(bridge):
    """Route the plugin's `logging` records to the host, if the plugin uses logging."""
    global _LOGGING_INSTALLED
    if _LOGGING_INSTALLED or "logging" not in sys.modules:
        return
    _LOGGING_INSTALLED = True
    import logging

    class HostHandler(logging.Handler):
        def emit(self, record):
            try:
                msg = self.format(record)
            except Exception:
                msg = str(record.msg)
            bridge.notify("log", {"level": record.levelname.lower(), "message": msg, "logger": record.name})

    handler = HostHandler()
    handler.setFormatter(logging.Formatter("%(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    debug = (os.environ.get("HERMES_PLUGINS_DEBUG") or "").lower() in ("1", "true", "yes", "on")
    root.setLevel(logging.DEBUG if debug else logging.INFO)
