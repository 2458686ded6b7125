"""The wire: JSON-RPC framing, the protocol's errors, and the reading and serving of
the pipe to the host.

Threading model (leader/follower): a pool of threads share one read lock. The thread
holding it reads the next message; a request is then served by that same thread (no
hand-off latency) while another thread takes over reading. A handler may call back
into the host (ctx.dispatch_tool, ctx.get_config, ...) from any thread: the current
reader delivers the response. What a method does is the Bridge's (bridge.py).
"""

import itertools
import json
import os
import re  # json imports it anyway
import sys
import threading
import time

from .compat import _exception_error

PROTOCOL_VERSION = 1
MAX_LINE = 16 << 20


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
# Compiled (and cached by re) only on that rare path: compiling it at import cost
# every plugin start about 60 µs.
_LEADING_ID = rb'\{"jsonrpc":"2\.0","id":(\d+),'


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


class _Slot:
    """A pending call to the host: its answer and the event that announces it."""

    __slots__ = ("event", "msg", "reading")

    def __init__(self):
        self.event = threading.Event()
        self.msg = None
        self.reading = False  # its caller is the one reading the pipe


class _Deadlines:
    """Gives up on calls to the host whose answer is overdue (ctx.call_mcp waits
    no longer than its timeout and a margin). One thread, started by the first
    such call, checks a few times a second while any is pending and sleeps
    otherwise; adding a call costs an append."""

    POLL = 0.25

    def __init__(self, expire):
        self.expire = expire
        self.cond = threading.Condition()
        self.entries = []  # (deadline, rid, slot)
        self.thread = None
        self.idle = False

    def add(self, deadline, rid, slot):
        with self.cond:
            self.entries.append((deadline, rid, slot))
            if self.thread is None:
                self.thread = threading.Thread(target=self.run, name="hermes-deadlines", daemon=True)
                self.thread.start()
            elif self.idle:
                self.cond.notify()

    def run(self):
        self.cond.acquire()
        while True:
            now = time.monotonic()
            due = [e for e in self.entries if e[2].msg is None and e[0] <= now]
            self.entries = [e for e in self.entries if e[2].msg is None and e[0] > now]
            if due:
                self.cond.release()
                try:
                    for _, rid, slot in due:
                        self.expire(rid, slot)
                finally:
                    self.cond.acquire()
                continue
            if not self.entries:
                self.idle = True
                self.cond.wait()
                self.idle = False
            else:
                self.cond.wait(min(self.POLL, max(0.0, min(e[0] for e in self.entries) - now)))


class Endpoint:
    """One end of the protocol pipe. A subclass supplies `methods` (method name ->
    fn(params, rid)), `call` (which may wrap _call) and `run_unload`."""

    def __init__(self, rfile, wfile):
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
        self.methods = {}
        self.deadlines = _Deadlines(self._expire)

    def run_unload(self):
        """Called before the process exits at the end of the host's input."""

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
            m = re.match(_LEADING_ID, line)
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

    def _call(self, method, params, wait=None):
        """Call the host and wait for its answer (from any thread), for at most
        `wait` seconds when given (then HostError -32004, a TimeoutError).

        If nobody is reading the pipe, the caller reads it itself until its answer
        arrives; otherwise the current reader hands the answer over."""
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
        if wait is not None:
            self.deadlines.add(time.monotonic() + wait, rid, slot)
        while slot.msg is None:
            if self.tok.acquire(blocking=False):
                slot.reading = True
                try:
                    while slot.msg is None:
                        # We are mid-handler: requests read here get threads of their own.
                        self.on_message(self.read_msg(), inline=False)
                finally:
                    slot.reading = False
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

    def _expire(self, rid, slot):
        """A call's wait is over: answer it with a timeout (unless its answer won
        the race). A caller blocked reading the pipe is woken by the answer to a
        cheap request, the only way to end its read."""
        with self.state_lock:
            if self.pending.pop(rid, None) is None:
                return
            slot.msg = {"error": {"code": -32004, "message": "hermes did not answer in time"}}
            self.next_id += 1
            poke = self.next_id
        slot.event.set()
        if slot.reading:
            try:
                self.send({"jsonrpc": "2.0", "id": poke, "method": "ctx.has_plugin", "params": {"name": ""}})
            except Exception:
                pass

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
            if msg is None:
                # It delivered an answer: its caller (usually a handler calling
                # back in a loop) reads its next answer itself, which costs no
                # hand-off; the watchdog starts a reader again if it goes quiet.
                return
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

    def callable_for(self, hid):
        fn = self.handles.get(hid)
        if fn is None:
            raise HostError(-32005, "unknown handle %s" % hid)
        return fn
