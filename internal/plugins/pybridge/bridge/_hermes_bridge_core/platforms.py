"""Platform plugins: ctx.register_platform and the host's platform.* calls. The adapter
object lives here, in the plugin's process; hermes' gateway holds a proxy that asks this
bridge to create and connect it (platform.start), to send (platform.send, ...) and to
disconnect it (platform.stop). The adapter's handle_message(event) becomes a
ctx.platform_event call to the host, its connection changes ctx.platform_status
notifications. Its imports are made when first needed: every plugin process loads
this module, few serve a platform (asyncio alone costs a plugin's start ~20 ms)."""

from .rpc import _ERROR_CLASSES, HostError

# The PlatformEntry fields register_platform takes as keywords besides its named
# parameters (upstream's gateway/platform_registry.py); any other is a TypeError there.
ENTRY_KWARGS = frozenset({
    "setup_fn", "emoji", "allowed_users_env", "allow_all_env", "platform_hint", "ensure_deps_fn",
    "env_enablement_fn", "cron_deliver_env_var", "is_connected", "max_message_length", "pii_safe",
    "allow_update_command", "apply_yaml_config_fn", "parse_target_ref_fn", "validate_target_ref_fn",
    "send_message_handler", "standalone_sender_fn",
})

# What the host reads of an entry (the rest stays here, for the adapter's own use).
_STRING_DETAILS = ("allowed_users_env", "allow_all_env", "emoji", "platform_hint", "cron_deliver_env_var")


def register(ctx, name, label, adapter_factory, check_fn, validate_config, required_env, install_hint, extra):
    unknown = sorted(set(extra) - ENTRY_KWARGS)
    if unknown:
        raise TypeError("register_platform() got an unexpected keyword argument %r" % unknown[0])
    if not isinstance(name, str) or not name.strip():
        raise ValueError("register_platform: name must be a non-empty string (the platforms.<name> config id)")
    if not callable(adapter_factory):
        raise TypeError("register_platform: adapter_factory must be callable (the adapter class, or a function "
                        "taking a PlatformConfig)")
    if check_fn is not None and not callable(check_fn):
        raise TypeError("register_platform: check_fn must be callable or None")
    if validate_config is not None and not callable(validate_config):
        raise TypeError("register_platform: validate_config must be callable or None")
    if isinstance(required_env, str):
        required_env = [required_env]
    required = [str(v) for v in (required_env or [])]
    name = name.strip().lower()
    bridge = ctx._bridge
    entry = dict(extra)
    entry.update(name=name, label=str(label or name), adapter_factory=adapter_factory, check_fn=check_fn,
                 validate_config=validate_config, required_env=required, install_hint=str(install_hint or ""))
    table = bridge.platforms
    old = table.get(name)
    if old is not None:
        bridge.notify("log", {"level": "warning", "message": "Platform '%s' re-registered (was %s, now %s)" % (
            name, old.get("label"), entry["label"])})
    table[name] = entry
    details = {"label": entry["label"], "required_env": required, "install_hint": entry["install_hint"]}
    for key in _STRING_DETAILS:
        if isinstance(extra.get(key), str):
            details[key] = extra[key]
    mml = extra.get("max_message_length")
    if isinstance(mml, int) and not isinstance(mml, bool):
        details["max_message_length"] = mml
    if check_fn is not None:
        details["check_handle"] = ctx._handle(check_fn)
    ctx._call("ctx.register_other", {"registrar": "register_platform", "name": name,
                                     "handle": ctx._handle(adapter_factory), "details": details})
    from .context import PluginRegistration

    return PluginRegistration(ctx, "platform", name)


def _text(value):
    if value is None:
        return ""
    value = getattr(value, "value", value)
    return value if isinstance(value, str) else str(value)


def event_params(name, event):
    """The wire form of a MessageEvent (or a dict shaped like one)."""
    get = event.get if isinstance(event, dict) else (lambda k, d=None: getattr(event, k, d))
    src = get("source")
    if hasattr(src, "to_dict"):
        src = src.to_dict()
    src = dict(src or {}) if isinstance(src, dict) else {}
    source = {}
    for key in ("chat_id", "chat_name", "chat_type", "user_id", "user_name", "thread_id", "chat_topic",
                "user_id_alt", "chat_id_alt", "scope_id"):
        if src.get(key) not in (None, ""):
            source[key] = _text(src.get(key))
    if not source.get("scope_id") and src.get("guild_id"):
        source["scope_id"] = _text(src["guild_id"])
    if src.get("is_bot"):
        source["is_bot"] = True
    ts = get("timestamp")
    import datetime

    if isinstance(ts, datetime.datetime):
        ts = ts.timestamp()
    params = {
        "platform": name, "text": _text(get("text")), "message_type": _text(get("message_type")) or "text",
        "source": source, "message_id": _text(get("message_id")),
        "reply_to_message_id": _text(get("reply_to_message_id")), "internal": bool(get("internal", False)),
    }
    if isinstance(ts, (int, float)) and not isinstance(ts, bool):
        params["timestamp"] = float(ts)
    return params


def _send_result(res):
    if res is None:
        return {"success": True}
    get = res.get if isinstance(res, dict) else (lambda k, d=None: getattr(res, k, d))
    out = {"success": bool(get("success", False)), "retryable": bool(get("retryable", False))}
    for key in ("message_id", "error"):
        if get(key) is not None:
            out[key] = _text(get(key))
    ra = get("retry_after")
    if isinstance(ra, (int, float)) and not isinstance(ra, bool):
        out["retry_after"] = float(ra)
    return out


class PlatformHost:
    """The live adapters of this plugin's platforms, one per registered name."""

    def __init__(self, bridge):
        self.bridge = bridge
        self.live = {}

    def methods(self):
        return {
            "platform.start": self.m_start,
            "platform.send": self.m_send,
            "platform.edit": self.m_edit,
            "platform.typing": self.m_typing,
            "platform.stop": self.m_stop,
        }

    def _entry(self, params):
        name = params.get("name") or ""
        entry = self.bridge.platforms.get(name)
        if entry is None:
            raise HostError(-32005, "this plugin registered no platform %r" % name)
        return name, entry

    def _adapter(self, params):
        name = params.get("name") or ""
        adapter = self.live.get(name)
        if adapter is None:
            raise HostError(-32003, "platform %r is not connected in this plugin process" % name)
        return adapter

    def m_start(self, params, rid):
        name, entry = self._entry(params)
        return self.bridge.run_maybe_async(self._start(name, entry, params), rid)

    async def _start(self, name, entry, params):
        from gateway.config import PlatformConfig

        old = self.live.pop(name, None)
        if old is not None:
            await _quietly(old.disconnect())
        extra = dict(params.get("extra") or {})
        seed = entry.get("env_enablement_fn")
        if params.get("from_env") and callable(seed):
            seeded = await _maybe_await(seed())
            if isinstance(seeded, dict):
                extra = dict(seeded, **extra)  # config.yaml's extra over what env seeded
        cfg = PlatformConfig(enabled=True, token=params.get("token") or None, api_key=params.get("api_key") or None,
                             extra=extra)
        validate = entry.get("validate_config")
        if validate is not None and not await _maybe_await(validate(cfg)):
            return {"connected": False, "error_code": "config_invalid", "retryable": False,
                    "error": "validate_config refused platforms.%s (see the plugin's documentation for the keys "
                             "it needs)" % name}
        adapter = entry["adapter_factory"](cfg)
        if adapter is None:
            return {"connected": False, "error_code": "no_adapter", "retryable": False,
                    "error": "adapter_factory returned None"}
        bridge = self.bridge

        def deliver(params):
            try:
                return bridge.call("ctx.platform_event", params)
            except HostError as exc:
                cls = _ERROR_CLASSES.get(exc.code)
                if cls is None:
                    raise
                raise cls(str(exc)) from None

        import asyncio
        import inspect

        async def handler(event):
            # Off the loop: the host's answer must not stall the adapter's other coroutines.
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(None, deliver, event_params(name, event))

        def status(fields):
            fields = dict(fields)
            fields["platform"] = name
            bridge.notify("ctx.platform_status", fields)

        if hasattr(adapter, "set_message_handler"):
            adapter.set_message_handler(handler)
        else:
            adapter._message_handler = handler
        adapter._hermes_status = status
        connect = adapter.connect
        try:
            takes = "is_reconnect" in inspect.signature(connect).parameters
        except (TypeError, ValueError):
            takes = False
        ok = await (connect(is_reconnect=bool(params.get("is_reconnect"))) if takes else connect())
        if not ok:
            return {"connected": False, "error_code": _text(getattr(adapter, "fatal_error_code", "")) or "connect_failed",
                    "error": _text(getattr(adapter, "fatal_error_message", "")) or "connect() returned False",
                    "retryable": bool(getattr(adapter, "fatal_error_retryable", True))}
        self.live[name] = adapter
        return {"connected": True}

    def m_send(self, params, rid):
        adapter = self._adapter(params)

        async def send():
            return _send_result(await adapter.send(params.get("chat_id") or "", params.get("content") or "",
                                                   reply_to=params.get("reply_to") or None,
                                                   metadata=params.get("metadata") or None))
        return self.bridge.run_maybe_async(send(), rid)

    def m_edit(self, params, rid):
        adapter = self._adapter(params)

        async def edit():
            return _send_result(await adapter.edit_message(params.get("chat_id") or "", params.get("message_id") or "",
                                                           params.get("content") or ""))
        return self.bridge.run_maybe_async(edit(), rid)

    def m_typing(self, params, rid):
        adapter = self._adapter(params)
        fn = getattr(adapter, "send_typing", None)
        if fn is None:
            return None

        async def typing():
            await fn(params.get("chat_id") or "", metadata=params.get("metadata") or None)
        return self.bridge.run_maybe_async(typing(), rid)

    def m_stop(self, params, rid):
        adapter = self.live.pop(params.get("name") or "", None)
        if adapter is None:
            return {"ok": True}

        async def stop():
            await adapter.disconnect()
            return {"ok": True}
        return self.bridge.run_maybe_async(stop(), rid)


async def _maybe_await(value):
    if hasattr(value, "__await__"):
        return await value
    return value


async def _quietly(coro):
    try:
        await coro
    except Exception:  # noqa: BLE001 - an old adapter's disconnect failing does not stop a new start
        pass
