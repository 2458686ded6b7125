"""hermes plugin bridge: runs one Hermes Python plugin in its own process.

The Go host starts this script with two dedicated pipes (HERMES_PLUGIN_FD_IN /
HERMES_PLUGIN_FD_OUT) that carry JSON-RPC 2.0, one object per line. The plugin's own
stdout and stderr stay free for print() and are shown by the host as log lines.

Threading model (leader/follower): a pool of threads share one read lock. The thread
holding it reads the next message; a request is then served by that same thread (no
hand-off latency) while another thread takes over reading. A handler may call back
into the host (ctx.dispatch_tool, ctx.get_config, ...) from any thread: the current
reader delivers the response. Stdlib only; heavy modules (asyncio, inspect, argparse,
logging) are imported only when a plugin needs them, to keep start-up fast.
"""

import contextvars
import itertools
import json
import os
import re  # json imports it anyway
import sys
import threading
import time
import traceback

PROTOCOL_VERSION = 1
MAX_LINE = 16 << 20
CO_VARARGS = 0x04
CO_VARKEYWORDS = 0x08
CO_COROUTINE = 0x80


class _TooLarge(ValueError):
    """A message over the protocol's size cap, which is never sent."""

    def __init__(self, size):
        ValueError.__init__(self, "%d bytes, over the protocol message size cap of %d bytes" % (size, MAX_LINE))


class HermesNotAvailableError(RuntimeError):
    """Raised by ctx APIs this host accepts but does not serve yet."""


class PluginToolOverrideError(PermissionError):
    """Raised when a plugin overrides a built-in tool without tools.override."""


class PluginLlmTrustError(PermissionError):
    """Raised when ctx.llm is asked for an override the operator has not trusted."""


class HostError(Exception):
    def __init__(self, code, message, data=None):
        super().__init__(message)
        self.code = code
        self.data = data


_ERROR_CLASSES = {
    -32001: PermissionError,
    -32002: ValueError,
    -32003: HermesNotAvailableError,
    -32004: TimeoutError,
    -32005: FileNotFoundError,
    -32006: TypeError,
    -32007: RuntimeError,
}


def _json_default(value):
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, (bytes, bytearray)):
        return value.decode("utf-8", "replace")
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        try:
            return to_dict()
        except Exception:
            pass
    return repr(value)


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=_json_default)
_encode_str = json.encoder.encode_basestring
_scan_once = json.JSONDecoder().scan_once


def _dumps(obj):
    return _ENCODER.encode(obj)


# How hermes starts every request line: the id of a request that cannot be decoded.
_LEADING_ID = re.compile(rb'\{"jsonrpc":"2\.0","id":(\d+),')


def _loads_line(line):
    """Decode one protocol line (bytes): json.loads without its per-call set-up."""
    text = line.decode("utf-8")
    try:
        obj, end = _scan_once(text, 0)
    except StopIteration:
        raise ValueError("not JSON") from None
    if end < len(text) and text[end] != "\n" or end < len(text) - 1:
        if text[end:].strip():
            raise ValueError("trailing data")
    return obj


# How many ctx.dispatch_tool calls the tool call being served runs under (the
# host's ToolCallParams.dispatch_depth); handed back with each dispatch_tool.
_DISPATCH_DEPTH = contextvars.ContextVar("hermes_dispatch_depth", default=0)


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


class _Slot:
    """A pending call to the host: its answer and the event that announces it."""

    __slots__ = ("event", "msg")

    def __init__(self):
        self.event = threading.Event()
        self.msg = None


# The bridge of this process: the compat shims (hermes_cli.profiles, ...) read what
# hermes told it (profile, plugin id) and reach ctx through it.
_BRIDGE = None


class Bridge:
    def __init__(self, rfile, wfile):
        global _BRIDGE
        _BRIDGE = self
        self.rfile = rfile
        self.wfile = wfile
        self.write_lock = threading.Lock()
        # Whoever holds `tok` may read the protocol pipe.
        self.tok = threading.Lock()
        self.state_lock = threading.Lock()
        self.watch_cond = threading.Condition(self.state_lock)
        self.pending = {}
        self.next_id = 0
        self.handles = {}
        self.next_handle = 0
        self.active = {}  # thread ident -> monotonic start of the request it serves
        self.readers_waiting = 0
        self.waiting_slots = set()
        self.watchdog_idle = False
        self.serial = itertools.count(1)
        self.running = {}  # request id -> asyncio future (cancellable)
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
        }

    # ---- wire -------------------------------------------------------------------

    def send(self, msg):
        data = (_dumps(msg) + "\n").encode("utf-8")
        if len(data) > MAX_LINE:
            # The host would take an over-cap line as a protocol violation and stop us.
            raise _TooLarge(len(data))
        with self.write_lock:
            self.wfile.write(data)
            self.wfile.flush()

    def read_msg(self):
        """Read one message; only the holder of `tok` calls this."""
        line = self.rfile.readline(MAX_LINE + 1)
        if not line:
            # The host closed the pipe: it has exited or is stopping us.
            self.run_unload()
            os._exit(0)
        if len(line) > MAX_LINE:
            sys.stderr.write("hermes bridge: protocol message over the size cap\n")
            os._exit(3)
        try:
            return _loads_line(line)
        except RecursionError:
            # Nested deeper than Python's decoder goes: that request fails, the
            # plugin goes on (hermes caps tool arguments well below this).
            m = _LEADING_ID.match(line)
            if m:
                self.send({"jsonrpc": "2.0", "id": int(m.group(1)), "error": {
                    "code": -32600, "message": "message nested too deeply for Python's JSON decoder"}})
            return {}
        except ValueError:
            sys.stderr.write("hermes bridge: malformed message from host\n")
            os._exit(3)

    def release_tok(self):
        self.tok.release()
        if self.waiting_slots:
            with self.state_lock:
                slots = list(self.waiting_slots)
            for slot in slots:
                slot.event.set()  # "the pipe is free": a waiting caller may read now

    def call(self, method, params):
        """Call the host and wait for its answer (from any thread).

        If nobody is reading the pipe, the caller reads it itself until its answer
        arrives; otherwise the current reader hands the answer over."""
        if self.loop_thread is not None and threading.get_ident() == self.loop_thread:
            with self.state_lock:
                self.loop_blocked += 1
            try:
                return self._call(method, params)
            finally:
                with self.state_lock:
                    self.loop_blocked -= 1
        return self._call(method, params)

    def _call(self, method, params):
        slot = _Slot()
        event = slot.event
        with self.state_lock:
            self.next_id += 1
            rid = self.next_id
            self.pending[rid] = slot
        try:
            self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        except BaseException:
            with self.state_lock:
                self.pending.pop(rid, None)
            raise
        while slot.msg is None:
            if self.tok.acquire(blocking=False):
                try:
                    while slot.msg is None:
                        # We are mid-handler: requests read here get threads of their own.
                        self.on_message(self.read_msg(), inline=False)
                finally:
                    self.release_tok()
                break
            with self.state_lock:
                self.waiting_slots.add(slot)
            try:
                if slot.msg is None and self.tok.locked():
                    event.wait()
            finally:
                with self.state_lock:
                    self.waiting_slots.discard(slot)
            if slot.msg is None:
                event.clear()
        msg = slot.msg
        err = msg.get("error")
        if err:
            raise HostError(err.get("code", -32603), err.get("message", "host error"), err.get("data"))
        return msg.get("result")

    def notify(self, method, params):
        try:
            self.send({"jsonrpc": "2.0", "method": method, "params": params})
        except Exception:
            pass

    def handle(self, fn):
        with self.state_lock:
            self.next_handle += 1
            hid = "h%d" % self.next_handle
            self.handles[hid] = fn
        return hid

    # ---- reading and serving ----------------------------------------------------
    #
    # The main thread reads a request and serves it itself, so a call costs no thread
    # hand-off. While it is busy nobody reads; a watchdog notices a request running
    # for more than a couple of milliseconds with the pipe unread and starts a helper
    # reader, so a slow or hung handler never blocks other calls (or the EOF that
    # tells us the host is gone).

    def primary(self):
        threading.Thread(target=self.watchdog, name="hermes-watchdog", daemon=True).start()
        while True:
            self.tok.acquire()
            try:
                msg = self.read_locked()
            finally:
                self.release_tok()
            if msg is not None:
                self.serve(msg)

    def secondary(self):
        while True:
            with self.state_lock:
                self.readers_waiting += 1
            self.tok.acquire()
            with self.state_lock:
                self.readers_waiting -= 1
            try:
                msg = self.read_locked()
            finally:
                self.release_tok()
            if msg is not None:
                self.serve(msg)
            with self.state_lock:
                busy = bool(self.active)
            if not busy:
                return

    def read_locked(self):
        """Read one message while holding `tok`. Responses and cancellations are handled
        before the pipe is released: a caller woken by the release must find its answer
        already delivered, or it would take the pipe and wait for a message that has
        already been read. Returns a request to serve, or None."""
        msg = self.read_msg()
        method = msg.get("method")
        if method is None:
            self.deliver(msg)
            return None
        if method == "$/cancelRequest":
            self.cancel((msg.get("params") or {}).get("id"))
            return None
        return msg

    def watchdog(self):
        seen = set()
        quiet = 0
        while True:
            if quiet >= 50:  # ~100 ms without requests: sleep until the next one
                with self.watch_cond:
                    self.watchdog_idle = True
                    if not self.active:
                        self.watch_cond.wait()
                    self.watchdog_idle = False
                quiet = 0
            time.sleep(0.002)
            now = set(self.active.values())
            quiet = quiet + 1 if not now else 0
            # A request seen in two samples 2 ms apart is a slow one.
            if now & seen and self.readers_waiting == 0 and not self.tok.locked():
                threading.Thread(target=self.secondary, name="hermes-reader", daemon=True).start()
            seen = now

    def on_message(self, msg, inline):
        method = msg.get("method")
        if method is None:
            self.deliver(msg)
        elif method == "$/cancelRequest":
            self.cancel((msg.get("params") or {}).get("id"))
        elif inline:
            self.serve(msg)
        else:
            threading.Thread(target=self.serve, args=(msg,), name="hermes-serve", daemon=True).start()

    def deliver(self, msg):
        with self.state_lock:
            slot = self.pending.pop(msg.get("id"), None)
        if slot is not None:
            slot.msg = msg
            slot.event.set()

    def serve(self, msg):
        # No locks or clock reads on this path: dict stores are atomic under the GIL,
        # and the watchdog only needs to see the same request active twice in a row.
        me = threading.get_ident()
        self.active[me] = next(self.serial)
        if self.watchdog_idle:
            with self.watch_cond:
                self.watch_cond.notify()
        try:
            self._serve(msg)
        finally:
            del self.active[me]

    def _serve(self, msg):
        rid = msg.get("id")
        method = msg.get("method")
        fn = self.methods.get(method)
        if fn is None:
            if rid is not None:
                self.send({"jsonrpc": "2.0", "id": rid,
                           "error": {"code": -32601, "message": "unknown method %s" % method}})
            return
        try:
            result = fn(msg.get("params") or {}, rid)
            if type(rid) is int:
                # The usual answers, a tool's string and an observer hook's None,
                # are encoded directly, without a full dumps.
                if type(result) is str:
                    data = '{"jsonrpc":"2.0","id":%d,"result":%s}\n' % (rid, _encode_str(result))
                elif result is None:
                    data = '{"jsonrpc":"2.0","id":%d,"result":null}\n' % rid
                else:
                    data = None
                if data is not None:
                    raw = data.encode("utf-8")
                    if len(raw) <= MAX_LINE:
                        with self.write_lock:
                            self.wfile.write(raw)
                        return
                    result = _TooLarge(len(raw))
            if isinstance(result, _TooLarge):
                reply = {"jsonrpc": "2.0", "id": rid, "error": {"code": -32603, "message": "result is %s" % result}}
            else:
                reply = {"jsonrpc": "2.0", "id": rid, "result": result}
        except HostError as exc:
            reply = {"jsonrpc": "2.0", "id": rid, "error": {"code": exc.code, "message": str(exc)}}
        except BaseException as exc:  # noqa: BLE001 - plugin code may raise anything
            if isinstance(exc, SystemExit) and method != "cli.run":
                exc = RuntimeError("plugin called sys.exit(%r)" % (exc.code,))
            if isinstance(exc, KeyboardInterrupt):
                exc = RuntimeError("interrupted")
            reply = {"jsonrpc": "2.0", "id": rid, "error": _exception_error(exc)}
        if rid is None:
            return
        try:
            self.send(reply)
        except _TooLarge as exc:
            self.send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32603, "message": "result is %s" % exc}})
        except (TypeError, ValueError) as exc:
            self.send({"jsonrpc": "2.0", "id": rid,
                       "error": {"code": -32603, "message": "result is not JSON-serialisable: %s" % exc}})

    def cancel(self, rid):
        with self.state_lock:
            fut = self.running.get(rid)
        if fut is not None:
            fut.cancel()

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

    def callable_for(self, hid):
        fn = self.handles.get(hid)
        if fn is None:
            raise HostError(-32005, "unknown handle %s" % hid)
        return fn

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
            if register is None or not callable(register):
                raise HostError(-32005, "no register() function")
        self.ctx = PluginContext(self, plugin, self.info)
        _install_logging_if_used(self)
        self.run_maybe_async(register(self.ctx), rid)
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
        global _PLUGIN_PACKAGE
        _PLUGIN_PACKAGE = (name, directory)
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

    def m_cli_run(self, params, rid):
        import argparse

        parser = argparse.ArgumentParser(
            prog=params.get("prog") or "hermes",
            description=params.get("description") or params.get("help") or None,
        )
        setup = params.get("setup_handle")
        if setup:
            self.callable_for(setup)(parser)
        handler = params.get("handler_handle")
        if handler:
            parser.set_defaults(func=self.callable_for(handler))
        real_in, real_out = sys.stdin, sys.stdout
        out = _CLIStdout(real_out)
        sys.stdout, sys.stdin = out, _CLIStdin(self, out)
        restore_getpass = _patch_getpass(self)
        try:
            ns = parser.parse_args(params.get("argv") or [])
            func = getattr(ns, "func", None)
            if func is None:
                parser.print_help()
                code = 0
            else:
                rc = self.run_maybe_async(func(ns), rid)
                code = rc if isinstance(rc, int) and not isinstance(rc, bool) else 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if exc.code is not None and not isinstance(exc.code, int):
                sys.stderr.write("%s\n" % (exc.code,))
        finally:
            restore_getpass()
            sys.stdin, sys.stdout = real_in, real_out
            out.finish()
        sys.stdout.flush()
        sys.stderr.flush()
        return {"exit_code": code}


# ---- a plugin CLI command's stdin and stdout -------------------------------------

_PROMPT_MARK = "\x00hermes-prompt"  # protocol.PromptMark


class _CLIStdout:
    """sys.stdout while a CLI command runs: whole lines go straight out; the text
    after the last line break waits, so that input() can hand it to hermes as the
    prompt (shown without a line break, in order with the other lines)."""

    def __init__(self, real):
        self._real = real
        self._partial = ""

    def write(self, s):
        head, sep, tail = (self._partial + s).rpartition("\n")
        if sep:
            self._real.write(head + sep)
        self._partial = tail
        return len(s)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        self._real.flush()

    def prompt(self):
        text, self._partial = self._partial, ""
        if text:
            self._real.write(text + _PROMPT_MARK + "\n")
            self._real.flush()

    def finish(self):
        if self._partial:
            self._real.write(self._partial)
            self._partial = ""
        self._real.flush()

    def isatty(self):
        return False

    def __getattr__(self, name):
        return getattr(self._real, name)


def _patch_getpass(bridge):
    """While a CLI command runs, getpass reads hermes' standard input with the
    terminal's echo off. The plugin has no terminal of its own (its session has
    none), so getpass.getpass, also when imported by name before, ends in
    fallback_getpass, which is looked up when called: replacing it covers both.
    Returns what undoes the patch."""
    import getpass

    def read_secret(prompt="Password: ", stream=None):
        stream = stream or sys.stderr
        stream.write(prompt + _PROMPT_MARK + "\n")
        stream.flush()
        line = bridge.call("ctx.cli_stdin", {"secret": True}) or ""
        if not line:
            raise EOFError("standard input ended before the secret was read")
        return line[:-1] if line.endswith("\n") else line

    def hermes_getpass(prompt="Password: ", stream=None):
        secret = read_secret(prompt, stream)
        (stream or sys.stderr).write("\n")  # the Enter the terminal did not echo
        return secret

    saved = getpass.getpass, getpass.fallback_getpass
    getpass.getpass, getpass.fallback_getpass = hermes_getpass, read_secret

    def restore():
        getpass.getpass, getpass.fallback_getpass = saved

    return restore


class _CLIStdin:
    """sys.stdin while a CLI command runs: lines of hermes' standard input."""

    encoding = "utf-8"
    errors = "strict"

    def __init__(self, bridge, out):
        self._bridge = bridge
        self._out = out
        self._eof = False
        self._buf = ""  # what read(size) took beyond size

    def _next_line(self):
        if self._buf:
            line, self._buf = self._buf, ""
            return line
        if self._eof:
            return ""
        self._out.prompt()
        line = self._bridge.call("ctx.cli_stdin", {}) or ""
        if not line:
            self._eof = True
        return line

    def readline(self, size=-1):
        line = self._next_line()
        if 0 <= size < len(line):
            line, self._buf = line[:size], line[size:]
        return line

    def read(self, size=-1):
        data = ""
        while size < 0 or len(data) < size:
            line = self._next_line()
            if not line:
                break
            data += line
        if 0 <= size < len(data):
            data, self._buf = data[:size], data[size:]
        return data

    def readlines(self, hint=-1):
        return list(iter(self.readline, ""))

    def __iter__(self):
        return iter(self.readline, "")

    def isatty(self):
        return False

    def readable(self):
        return True

    def fileno(self):
        import io
        raise io.UnsupportedOperation("fileno: a plugin CLI command reads hermes' input through the host")

    def close(self):
        pass


async def _as_coroutine(awaitable):
    return await awaitable


def _arm_stall_dump():
    """With HERMES_DEBUG_STALL set, SIGUSR2 writes every thread's stack to
    $HERMES_HOME/logs/stall-<pid>.txt: hermes asks for it when a call goes unanswered."""
    value = os.environ.get("HERMES_DEBUG_STALL", "")
    if value.strip().lower() not in ("1", "true", "yes", "on") and not os.path.isabs(value):
        return  # the same rule as hermes' (a true value, or a report directory)
    try:
        import faulthandler
        import signal

        home = os.environ.get("HERMES_HOME")
        if home:
            logs = os.path.join(home, "logs")
        elif os.path.isabs(value):
            logs = value  # no home (a bare test host): the report directory itself
        else:
            return  # never into the working directory
        os.makedirs(logs, exist_ok=True)
        out = open(os.path.join(logs, "stall-%d.txt" % os.getpid()), "w")
        faulthandler.register(signal.SIGUSR2, file=out, all_threads=True)
    except Exception:  # noqa: BLE001 - a debugging aid must never stop a plugin
        pass


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


# ---- the ctx object ----------------------------------------------------------------


class PluginManifest:
    """Attribute view of the plugin's manifest (upstream's PluginManifest record)."""

    def __init__(self, data, plugin):
        self._data = dict(data or {})
        self.name = self._data.get("name") or plugin.get("name") or ""
        self.version = str(self._data.get("version") or "")
        self.description = self._data.get("description") or ""
        self.author = self._data.get("author") or ""
        self.requires_env = list(self._data.get("requires_env") or [])
        self.provides_tools = list(self._data.get("provides_tools") or [])
        self.provides_hooks = list(self._data.get("provides_hooks") or [])
        self.source = plugin.get("source") or ""
        self.path = plugin.get("dir") or None
        self.kind = plugin.get("kind") or "standalone"
        self.key = plugin.get("id") or self.name
        self.requires_hermes = self._data.get("requires_hermes") or ""
        self.capabilities = list(self._data.get("capabilities") or [])
        self.manifest_version = self._data.get("manifest_version") or 1
        self.api_version = self._data.get("api_version")
        self.requires_plugins = list(self._data.get("requires_plugins") or [])
        self.python_dependencies = list(self._data.get("python_dependencies") or [])
        self.config_schema = dict(self._data.get("config_schema") or {})
        self.license = self._data.get("license") or ""
        self.homepage = self._data.get("homepage") or ""
        self.tags = list(self._data.get("tags") or [])
        self.emits = list(self._data.get("emits") or [])
        self.listens = list(self._data.get("listens") or [])
        self.portable = False
        self.skill_namespace = ""

    def get(self, key, default=None):
        return self._data.get(key, default)

    def __getitem__(self, key):
        return self._data[key]

    def to_dict(self):
        return dict(self._data)

    def __repr__(self):
        return "PluginManifest(name=%r, version=%r, key=%r)" % (self.name, self.version, self.key)


class PluginRegistration:
    """Handle returned by registrars; dispose() withdraws the registration."""

    def __init__(self, ctx, kind, key, handle=None):
        self._ctx = ctx
        self.kind = kind
        self.key = key
        self.plugin_key = ctx.plugin_id
        self.persistent = False
        self._handle = handle
        self._active = True

    @property
    def active(self):
        return self._active

    def dispose(self):
        # Idempotent and never raising, as upstream's: a kind this host cannot
        # withdraw yet stays active (and says so in hermes' log).
        if not self._active:
            return
        params = {"kind": self.kind, "key": self.key}
        if self.kind == "hook" and self._handle is not None:
            params["handle"] = self._handle
        try:
            self._ctx._call("ctx.dispose", params)
        except HermesNotAvailableError as exc:
            self._ctx._bridge.notify("log", {"level": "warning", "message": "dispose of %s %r: %s" % (self.kind, self.key, exc)})
            return
        self._active = False

    release = dispose

    def __repr__(self):
        return "PluginRegistration(kind=%r, key=%r, active=%r)" % (self.kind, self.key, self._active)


class PluginState:
    """ctx.state: small persistent key/value store kept by the host."""

    def __init__(self, ctx):
        self._ctx = ctx

    def get(self, key, default=None):
        return self._ctx._call("ctx.state_get", {"key": key, "default": default})

    def set(self, key, value):
        self._ctx._call("ctx.state_set", {"key": key, "value": value})


class _Unavailable:
    """Facade object whose methods answer with a clear 'not available yet' error."""

    def __init__(self, ctx, name):
        self._ctx = ctx
        self._name = name

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        full = "%s.%s" % (self._name, attr)
        ctx = self._ctx

        def call(*args, **kwargs):
            return ctx._facade(full, args, kwargs)

        if attr.startswith("a") and attr[1:] in ("complete", "complete_structured"):
            async def acall(*args, **kwargs):
                return ctx._facade(full, args, kwargs)
            return acall
        return call


class _LlmUsage:
    def __init__(self, d):
        d = d or {}
        for key in ("input_tokens", "output_tokens", "total_tokens", "cache_read_tokens",
                    "cache_write_tokens", "cost_usd"):
            setattr(self, key, d.get(key))

    def __repr__(self):
        return "PluginLlmUsage(input_tokens=%r, output_tokens=%r, total_tokens=%r)" % (
            self.input_tokens, self.output_tokens, self.total_tokens)


class _LlmResult:
    """PluginLlmCompleteResult / PluginLlmStructuredResult, as attributes."""

    def __init__(self, d, structured):
        d = d or {}
        self.text = d.get("text") or ""
        self.provider = d.get("provider") or ""
        self.model = d.get("model") or ""
        self.agent_id = d.get("agent_id") or ""
        self.usage = _LlmUsage(d.get("usage"))
        self.audit = d.get("audit") or {}
        if structured:
            self.parsed = d.get("parsed")
            self.content_type = d.get("content_type") or "text"

    def __repr__(self):
        return "%s(text=%r, provider=%r, model=%r)" % (
            type(self).__name__, self.text[:60], self.provider, self.model)


def _llm_block(block):
    """Image bytes travel as a data: URL, as upstream encodes them."""
    if isinstance(block, dict) and isinstance(block.get("data"), (bytes, bytearray)):
        import base64

        block = dict(block)
        mime = block.pop("mime_type", None) or "application/octet-stream"
        block["url"] = "data:%s;base64,%s" % (mime, base64.b64encode(bytes(block.pop("data"))).decode("ascii"))
    return block


class _PluginLlm:
    """ctx.llm: one host-owned completion against the user's model (upstream agent.plugin_llm)."""

    def __init__(self, ctx):
        self._ctx = ctx

    def _run(self, name, kwargs, structured):
        try:
            res = self._ctx._call("ctx.facade", {"name": name, "args": [], "kwargs": kwargs})
        except HostError:
            raise
        except PermissionError as exc:
            raise PluginLlmTrustError(str(exc)) from None
        return _LlmResult(res, structured)

    def complete(self, messages=None, model=None, temperature=None, max_tokens=None, timeout=None,
                 agent_id=None, profile=None, purpose=None, **kwargs):
        return self._run("llm.complete", dict(
            messages=list(messages or []), model=model, temperature=temperature, max_tokens=max_tokens,
            timeout=timeout, agent_id=agent_id, profile=profile, purpose=purpose, **kwargs), False)

    def complete_structured(self, instructions=None, input=None, json_schema=None, json_mode=False,
                            schema_name=None, system_prompt=None, model=None, temperature=None,
                            max_tokens=None, timeout=None, agent_id=None, profile=None, purpose=None, **kwargs):
        return self._run("llm.complete_structured", dict(
            instructions=instructions, input=[_llm_block(b) for b in (input or [])], json_schema=json_schema,
            json_mode=bool(json_mode), schema_name=schema_name, system_prompt=system_prompt, model=model,
            temperature=temperature, max_tokens=max_tokens, timeout=timeout, agent_id=agent_id,
            profile=profile, purpose=purpose, **kwargs), True)

    async def acomplete(self, *args, **kwargs):
        return self.complete(*args, **kwargs)

    async def acomplete_structured(self, *args, **kwargs):
        return self.complete_structured(*args, **kwargs)


class _PlatformActions:
    def __init__(self, ctx):
        self._ctx = ctx

    async def add_reaction(self, platform=None, chat_id=None, message_id=None, emoji=None, **kwargs):
        return self._ctx._facade_dict("platform_actions.add_reaction", (), dict(
            platform=platform, chat_id=chat_id, message_id=message_id, emoji=emoji, **kwargs))

    async def set_thread_title(self, platform=None, chat_id=None, thread_id=None, title=None, **kwargs):
        return self._ctx._facade_dict("platform_actions.set_thread_title", (), dict(
            platform=platform, chat_id=chat_id, thread_id=thread_id, title=title, **kwargs))

    async def send_status(self, *args, **kwargs):
        return self._ctx._facade_dict("platform_actions.send_status", args, kwargs)


_OTHER_REGISTRARS = (
    "register_context_engine", "register_context_reference", "register_memory_provider",
    "register_platform", "register_platform_handler", "register_telegram_handler",
    "register_slack_action_handler", "register_auxiliary_task", "register_system_prompt_section",
    "register_dashboard_auth_provider", "register_approval_transport", "register_image_gen_provider",
    "register_video_gen_provider", "register_web_search_provider", "register_browser_provider",
    "register_terminal_environment_provider", "register_secret_source", "register_tts_provider",
    "register_transcription_provider", "register_provider",
)


class PluginContext:
    """The `ctx` passed to register(ctx), with upstream's method signatures."""

    def __init__(self, bridge, plugin, info):
        self._bridge = bridge
        self._plugin = plugin
        self._info = info
        self.manifest = PluginManifest(plugin.get("manifest"), plugin)
        self._state = None

    # -- plumbing
    def _call(self, method, params):
        try:
            return self._bridge.call(method, params)
        except HostError as exc:
            cls = _ERROR_CLASSES.get(exc.code)
            if cls is PermissionError and method == "ctx.register_tool":
                raise PluginToolOverrideError(str(exc)) from None
            if cls is not None:
                raise cls(str(exc)) from None
            raise RuntimeError(str(exc)) from None

    def _facade(self, name, args, kwargs):
        return self._call("ctx.facade", {"name": name, "args": list(args), "kwargs": dict(kwargs)})

    def _facade_dict(self, name, args, kwargs):
        try:
            return self._facade(name, args, kwargs)
        except Exception as exc:
            return {"ok": False, "error": "gateway_unavailable", "detail": str(exc)}

    def _handle(self, fn):
        return self._bridge.handle(fn)

    # -- identity
    @property
    def plugin_id(self):
        return self._plugin.get("id") or self.manifest.name

    @property
    def profile_name(self):
        return self._info.get("profile_name") or "default"

    def has_plugin(self, plugin_id):
        return bool(self._call("ctx.has_plugin", {"name": plugin_id}))

    def has_capability(self, capability):
        return bool(self._call("ctx.has_capability", {"name": capability}))

    # -- registration
    def register_tool(self, name, toolset, schema, handler, check_fn=None, requires_env=None,
                      is_async=False, description="", emoji="", override=False, **extra):
        if not callable(handler):
            raise TypeError("register_tool: handler must be callable")
        params = {
            "name": name, "toolset": toolset, "schema": schema or {}, "handle": self._handle(handler),
            "requires_env": list(requires_env or []), "is_async": bool(is_async),
            "description": description or "", "emoji": emoji or "", "override": bool(override),
        }
        if check_fn is not None:
            params["check_handle"] = self._handle(check_fn)
        res = self._call("ctx.register_tool", params) or {}
        if not res.get("registered"):
            return None
        return PluginRegistration(self, "tool", name)

    def register_hook(self, hook_name=None, callback=None, **kwargs):
        hook_name = hook_name or kwargs.pop("name", None) or kwargs.pop("hook", None)
        callback = callback or kwargs.pop("handler", None) or kwargs.pop("fn", None)
        if not hook_name or not callable(callback):
            raise TypeError("register_hook(hook_name, callback): a hook name and a callable are required")
        qual = getattr(callback, "__qualname__", None) or getattr(callback, "__name__", None) or repr(callback)
        handle = self._handle(callback)
        self._call("ctx.register_hook", {"hook": hook_name, "handle": handle, "callback": qual})
        return PluginRegistration(self, "hook", hook_name, handle)

    def register_command(self, name, handler, description="", args_hint="", argument_mode=None, **kwargs):
        if not callable(handler):
            raise TypeError("register_command: handler must be callable")
        code = getattr(getattr(handler, "__func__", handler), "__code__", None)
        is_async = bool(code is not None and code.co_flags & CO_COROUTINE)
        res = self._call("ctx.register_command", {
            "name": name, "handle": self._handle(handler), "description": description or "",
            "args_hint": args_hint or "", "argument_mode": argument_mode or "", "is_async": is_async,
        }) or {}
        if not res.get("registered"):
            return None
        return PluginRegistration(self, "command", name)

    def register_cli_command(self, name, help="", setup_fn=None, handler_fn=None, description="", **kwargs):
        params = {"name": name, "help": help or "", "description": description or ""}
        if setup_fn is not None:
            params["setup_handle"] = self._handle(setup_fn)
        if handler_fn is not None:
            params["handler_handle"] = self._handle(handler_fn)
        self._call("ctx.register_cli_command", params)
        return PluginRegistration(self, "cli_command", name)

    def register_skill(self, name, path, description="", frontmatter=None, **kwargs):
        self._call("ctx.register_skill", {"name": name, "path": os.fspath(path),
                                          "description": description or "",
                                          "frontmatter": frontmatter or {}})
        return PluginRegistration(self, "skill", name)

    def register_middleware(self, kind, callback, **kwargs):
        if not callable(callback):
            raise TypeError("register_middleware: callback must be callable")
        self._call("ctx.register_middleware", {"kind": kind, "handle": self._handle(callback)})
        return PluginRegistration(self, "middleware", kind)

    def register_system_prompt_section(self, id, content, *, position="after_memory", max_chars=4000):
        import re

        if not isinstance(id, str) or not re.match(r"^[a-z0-9][a-z0-9._-]{0,127}$", id):
            raise ValueError("system prompt section id must be 1-128 lowercase characters using "
                             "letters, numbers, '.', '_', or '-'")
        if position != "after_memory":
            raise ValueError("system prompt section position must be 'after_memory'")
        if isinstance(max_chars, bool) or not isinstance(max_chars, int) or not 1 <= max_chars <= 4000:
            raise ValueError("system prompt section max_chars must be an int from 1 to 4000")
        details = {"id": id, "position": position, "max_chars": max_chars}
        handle = None
        if callable(content):
            handle = self._handle(content)
        elif isinstance(content, str):
            details["content"] = content
        else:
            raise TypeError("system prompt section content must be a str or a callable")
        self._call("ctx.register_other", {"registrar": "register_system_prompt_section", "name": id,
                                          "handle": handle, "details": details})
        return PluginRegistration(self, "system_prompt_section", id, handle)

    def register_redaction_patterns(self, patterns):
        try:
            res = self._call("ctx.register_other", {
                "registrar": "register_redaction_patterns",
                "details": {"patterns": [str(p) for p in (patterns or [])]},
            })
        except Exception:
            return 0
        return int((res or {}).get("accepted", 0))

    def _register_other(self, registrar, args, kwargs):
        name = ""
        handle = None
        for value in list(args) + list(kwargs.values()):
            if isinstance(value, str) and not name:
                name = value
            elif callable(value) and handle is None:
                handle = self._handle(value)
        if not name:
            obj = args[0] if args else None
            name = getattr(obj, "name", None) or type(obj).__name__ if obj is not None else ""
        details = {k: v for k, v in kwargs.items() if isinstance(v, (str, int, float, bool))}
        self._call("ctx.register_other", {"registrar": registrar, "name": str(name or ""),
                                          "handle": handle, "details": details})
        return PluginRegistration(self, registrar[len("register_"):], str(name or registrar), handle)

    def __getattr__(self, attr):
        if attr in _OTHER_REGISTRARS:
            def registrar(*args, **kwargs):
                return self._register_other(attr, args, kwargs)
            registrar.__name__ = attr
            return registrar
        raise AttributeError("'PluginContext' object has no attribute %r" % attr)

    # -- config & state
    def get_config(self, key, default=None):
        return self._call("ctx.get_config", {"key": key, "default": default})

    def set_config(self, key, value):
        self._call("ctx.set_config", {"key": key, "value": value})

    @property
    def state(self):
        if self._state is None:
            self._state = PluginState(self)
        return self._state

    # -- lifecycle
    def on_unload(self, callback):
        if not callable(callback):
            raise TypeError("on_unload: callback must be callable")
        self._bridge.unload_callbacks.append(callback)
        return PluginRegistration(self, "on_unload", getattr(callback, "__name__", "callback"))

    def spawn_task(self, coro, *, name=None):
        import asyncio

        if not asyncio.iscoroutine(coro):
            raise TypeError("spawn_task() needs a coroutine (call the async function: spawn_task(worker())), not %s"
                            % type(coro).__name__)
        bridge = self._bridge
        loop = bridge.get_loop()
        if threading.get_ident() == bridge.loop_thread:
            task = loop.create_task(coro, name=name)  # from a coroutine on the loop
        else:
            box = {}
            ready = threading.Event()

            def start():
                try:
                    box["task"] = loop.create_task(coro, name=name)
                except BaseException as exc:  # noqa: BLE001 - handed to the caller
                    box["error"] = exc
                finally:
                    ready.set()

            loop.call_soon_threadsafe(start)
            if not ready.wait(10):
                coro.close()
                raise RuntimeError("spawn_task(): the plugin's event loop is blocked (a coroutine is waiting "
                                   "in a synchronous call); start the task from that coroutine instead")
            if "error" in box:
                raise box["error"]
            task = box["task"]
        bridge.unload_callbacks.append(lambda: loop.call_soon_threadsafe(task.cancel))
        return task

    # -- event bus
    def emit(self, event, payload=None):
        if not isinstance(event, str) or not event:
            raise ValueError("emit: event name must be a non-empty string")
        if ":" in event:
            raise ValueError("emit: event name %r must not contain ':' (it is published as "
                             "'<plugin>:<event>'; the 'hermes:' namespace is reserved)" % event)
        if payload is not None and not isinstance(payload, dict):
            raise TypeError("emit: payload must be a dict or None")
        return int(self._call("ctx.emit", {"event": event, "payload": payload or {}}) or 0)

    def subscribe(self, event, callback):
        if not callable(callback):
            raise TypeError("subscribe: callback must be callable")
        self._call("ctx.subscribe", {"event": event, "handle": self._handle(callback)})
        return PluginRegistration(self, "event_subscription", event)

    # -- runtime facades
    def dispatch_tool(self, tool_name, args=None, **kwargs):
        return self._call("ctx.dispatch_tool", {"tool_name": tool_name, "args": args or {}, "kwargs": kwargs,
                                                "depth": _DISPATCH_DEPTH.get()})

    def inject_message(self, content, role="user", *, session_key=None):
        return bool(self._facade("inject_message", (content,), {"role": role, "session_key": session_key}))

    def call_mcp(self, server, tool, arguments=None, timeout=30):
        return self._facade("call_mcp", (server, tool), {"arguments": arguments, "timeout": timeout})

    def emit_status(self, text, key, *, session_id=None, platform=None, chat_id=None, metadata=None):
        try:
            return self._facade("emit_status", (text, key), {
                "session_id": session_id, "platform": platform, "chat_id": chat_id, "metadata": metadata})
        except Exception as exc:
            return {"accepted": False, "error": str(exc)}

    @property
    def llm(self):
        return _PluginLlm(self)

    @property
    def subagent_lifecycle(self):
        return _Unavailable(self, "subagent_lifecycle")

    @property
    def platform_actions(self):
        return _PlatformActions(self)


_SENTINEL_FD = None


def _start_group_sentinel(fd_in, fd_out):
    """Start a tiny process that kills this plugin's process group once the bridge is gone.

    hermes kills the group itself whenever it stops a plugin or sees it exit. When hermes
    is killed outright (SIGKILL, the OOM killer), the kernel kills the bridge
    (PR_SET_PDEATHSIG) but not what the plugin spawned, which would live on as orphans.
    The sentinel, a shell in our group, reads a pipe whose only writer is the bridge:
    end of file means the bridge has exited, however it went, and the sentinel then
    kills the rest of the group, itself included. Costs about a millisecond at start.
    """
    global _SENTINEL_FD
    spawn = getattr(os, "posix_spawn", None)
    if spawn is None or os.getpgrp() != os.getpid() or not os.path.exists("/bin/sh"):
        return  # only the leader of its own group may signal the group
    try:
        r, w = os.pipe()  # not inheritable: exec'd descendants never hold the write end
    except OSError:
        return
    try:
        spawn("/bin/sh", ["hermes-plugin-sentinel", "-c", "read x; kill -9 0"], os.environ, file_actions=[
            (os.POSIX_SPAWN_DUP2, r, 0),
            # Hold nothing the host waits on: its protocol pipes, stdout, stderr.
            (os.POSIX_SPAWN_CLOSE, fd_in),
            (os.POSIX_SPAWN_CLOSE, fd_out),
            (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_DUP2, 1, 2),
        ])
    except OSError:
        os.close(w)
        return
    finally:
        os.close(r)
    _SENTINEL_FD = w
    if hasattr(os, "register_at_fork"):
        # A plugin's forked (not exec'd) children must not keep the sentinel waiting.
        os.register_at_fork(after_in_child=_close_sentinel_fd)


def _close_sentinel_fd():
    global _SENTINEL_FD
    if _SENTINEL_FD is not None:
        try:
            os.close(_SENTINEL_FD)
        except OSError:
            pass
        _SENTINEL_FD = None


# ---- fork server ---------------------------------------------------------------------
#
# Starting an interpreter costs tens of milliseconds of CPU (more with a heavy site
# setup); with many plugins enabled that dominates every hermes command. The host can
# instead start one fork server per interpreter: it imports the bridge once, then
# forks one child per plugin. Each child is a separate process in its own process
# group, exactly like an exec'd bridge; only the start-up is shared.
#
# Control channel: a SOCK_SEQPACKET socket on fd HERMES_BRIDGE_FORKSERVER. The host
# sends {"id", "env", "cwd"} with four descriptors attached (protocol in, protocol
# out, stdout, stderr); the server answers {"spawned": id, "pid"} (or "error"), and
# reports every exit as {"exited": pid, "code"} or {"exited": pid, "signal"}, after
# killing what the child left in its process group.

_PR_SET_PDEATHSIG = 1


def _die_with_parent(libc):
    if libc is not None:
        try:
            libc.prctl(_PR_SET_PDEATHSIG, 9, 0, 0, 0)  # SIGKILL when our parent goes
        except Exception:
            pass


def _forkserver(ctl_fd):
    import signal
    import socket
    import select
    import array

    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
    except Exception:
        libc = None
    host_pid = os.getppid()
    _die_with_parent(libc)
    if os.getppid() != host_pid:
        return 0
    sock = socket.socket(fileno=ctl_fd)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    children = set()

    def send(obj):
        try:
            sock.send(json.dumps(obj).encode("utf-8"))
        except OSError:
            pass

    def reap():
        while True:
            try:
                info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                return
            if info is None or not info.si_pid:
                return
            pid = info.si_pid
            # A zombie keeps its pid: the group cannot have been reused yet.
            try:
                os.killpg(pid, 9)
            except OSError:
                pass
            try:
                _, status = os.waitpid(pid, 0)
            except ChildProcessError:
                continue
            children.discard(pid)
            if os.WIFSIGNALED(status):
                send({"exited": pid, "signal": os.WTERMSIG(status)})
            else:
                send({"exited": pid, "code": os.WEXITSTATUS(status)})

    fd_size = array.array("i").itemsize
    # Children share the server's memory copy-on-write; keep the collector from
    # touching (and so copying) every page of it in each child.
    import gc

    gc.freeze()
    send({"ready": True, "pid": os.getpid()})
    while True:
        try:
            readable, _, _ = select.select([sock, wake_r], [], [])
        except InterruptedError:
            continue
        if wake_r in readable:
            try:
                os.read(wake_r, 512)
            except OSError:
                pass
            reap()
        if sock not in readable:
            continue
        try:
            data, anc, _flags, _addr = sock.recvmsg(1 << 20, socket.CMSG_SPACE(8 * fd_size))
        except InterruptedError:
            continue
        if not data:
            # The host is gone or done with us: take the plugins down and leave.
            for pid in list(children):
                try:
                    os.killpg(pid, 9)
                except OSError:
                    pass
            return 0
        fds = []
        for level, kind, payload in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                a = array.array("i")
                a.frombytes(payload[: len(payload) - (len(payload) % fd_size)])
                fds.extend(a)
        try:
            req = json.loads(data)
        except ValueError:
            req = {}
        rid = req.get("id")
        if len(fds) != 4:
            for fd in fds:
                os.close(fd)
            send({"spawned": rid, "error": "expected 4 descriptors, got %d" % len(fds)})
            continue
        try:
            pid = os.fork()
        except OSError as exc:
            for fd in fds:
                os.close(fd)
            send({"spawned": rid, "error": "fork failed: %s" % exc})
            continue
        if pid == 0:
            code = 70
            try:
                code = _forkserver_child(req, fds, libc, [sock.fileno(), wake_r, wake_w])
            except BaseException:
                traceback.print_exc()
            finally:
                os._exit(code if isinstance(code, int) else 0)
        for fd in fds:
            os.close(fd)
        children.add(pid)
        send({"spawned": rid, "pid": pid})


def _forkserver_child(req, fds, libc, server_fds):
    import signal

    server_pid = os.getppid()
    os.setpgid(0, 0)
    _die_with_parent(libc)
    if os.getppid() != server_pid:
        return 0
    signal.set_wakeup_fd(-1)
    for sig in (signal.SIGCHLD, signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_DFL)
    import fcntl

    # Move the received descriptors out of the way, then onto 0-4.
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in fds]
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(high[2], 1)
    os.dup2(high[3], 2)
    os.dup2(high[0], 3)
    os.dup2(high[1], 4)
    keep = {0, 1, 2, 3, 4}
    for fd in set(high + fds + server_fds + [null]):
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass
    env = req.get("env") or {}
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in env.items()})
    if req.get("cwd"):
        os.chdir(req["cwd"])
    # sys.stdout/stderr already write to fds 1 and 2, now the plugin's pipes.
    return main()


def main():
    ctl = os.environ.get("HERMES_BRIDGE_FORKSERVER")
    if ctl:
        del os.environ["HERMES_BRIDGE_FORKSERVER"]
        return _forkserver(int(ctl))
    fd_in = int(os.environ.get("HERMES_PLUGIN_FD_IN", "-1"))
    fd_out = int(os.environ.get("HERMES_PLUGIN_FD_OUT", "-1"))
    if fd_in < 0 or fd_out < 0 or os.environ.get("HERMES_PLUGIN_MAGIC_COOKIE") != "hermes-plugin-v1-7d3f0b2a":
        sys.stderr.write("This program is a hermes plugin host bridge; it is started by `hermes`, not by hand.\n")
        return 2
    _start_group_sentinel(fd_in, fd_out)
    compat = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_hermes_compat")
    if os.path.isdir(compat):
        sys.path.append(compat)
    _arm_stall_dump()
    rfile = os.fdopen(fd_in, "rb", buffering=1 << 16)
    wfile = os.fdopen(fd_out, "wb", buffering=0)
    bridge = Bridge(rfile, wfile)
    bridge.primary()
    return 0

