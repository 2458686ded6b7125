"""The `ctx` a plugin's register(ctx) receives, with upstream's method signatures:
PluginContext and what it hands out (manifest, registrations, state, the ctx.llm
facade, platform actions, facades this host does not serve yet)."""

import contextvars
import os
import re
import threading

from .compat import CO_COROUTINE
from .rpc import _ERROR_CLASSES, HermesNotAvailableError, HostError, PluginLlmTrustError, PluginToolOverrideError

# How many ctx.dispatch_tool calls the tool call being served runs under (the
# host's ToolCallParams.dispatch_depth); handed back with each dispatch_tool.
_DISPATCH_DEPTH = contextvars.ContextVar("hermes_dispatch_depth", default=0)

# How long past its timeout ctx.call_mcp waits for the host (pluginsdk's mcpAnswerGrace).
_MCP_ANSWER_GRACE = 5.0


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


_TRANSPORT_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")

_OTHER_REGISTRARS = (
    "register_platform_handler", "register_telegram_handler",
    "register_slack_action_handler", "register_system_prompt_section",
    "register_dashboard_auth_provider", "register_image_gen_provider",
    "register_video_gen_provider", "register_web_search_provider", "register_browser_provider",
    "register_terminal_environment_provider", "register_secret_source", "register_tts_provider",
    "register_transcription_provider",
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
    def _call(self, method, params, wait=None):
        try:
            return self._bridge.call(method, params, wait)
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
        # Never raises (upstream): the host skips, with a warning, what it refuses.
        try:
            items = [p if isinstance(p, str) else None for p in (patterns or [])]
            res = self._call("ctx.register_other", {
                "registrar": "register_redaction_patterns",
                "details": {"patterns": items},
            })
            return int((res or {}).get("accepted", 0))
        except Exception:
            return 0

    def register_context_reference(self, provider):
        """`@<provider.prefix>:<target>` in a user message becomes provider.expand(target)."""
        prefix = getattr(provider, "prefix", None)
        expand = getattr(provider, "expand", None)
        details = {"prefix": prefix if isinstance(prefix, str) else "",
                   "description": str(getattr(provider, "description", "") or "")}
        handle = self._handle(expand) if callable(expand) else None
        self._call("ctx.register_other", {"registrar": "register_context_reference",
                                          "name": details["prefix"], "handle": handle, "details": details})
        return None

    def register_auxiliary_task(self, key, *, display_name, description, defaults=None):
        if defaults is not None and not isinstance(defaults, dict):
            raise ValueError("register_auxiliary_task: defaults must be a dict or None")
        details = {"key": key if isinstance(key, str) else None, "display_name": str(display_name),
                   "description": str(description), "defaults": dict(defaults) if defaults is not None else None}
        self._call("ctx.register_other", {"registrar": "register_auxiliary_task",
                                          "name": str(key or ""), "details": details})
        return PluginRegistration(self, "auxiliary_task", str(key))

    def register_approval_transport(self, name, present_fn):
        """Offer present_fn(request) as approval transport `name` (inactive until
        security.approval.transport selects it). Upstream's checks and errors."""
        clean = str(name).strip().lower()
        if clean == "builtin":
            raise ValueError("approval transport name 'builtin' is reserved")
        if not _TRANSPORT_NAME.fullmatch(clean):
            raise ValueError("approval transport name %r must match [a-z0-9][a-z0-9_-]{0,63}" % (name,))
        if not callable(present_fn):
            raise TypeError("approval transport present_fn must be callable")
        handle = self._handle(present_fn)
        self._call("ctx.register_other", {"registrar": "register_approval_transport", "name": clean, "handle": handle})
        return PluginRegistration(self, "approval_transport", clean, handle)

    def register_platform(self, name, label, adapter_factory, check_fn, validate_config=None, required_env=None,
                          install_hint="", **entry_kwargs):
        from . import platforms

        return platforms.register(self, name, label, adapter_factory, check_fn, validate_config, required_env,
                                  install_hint, entry_kwargs)

    def register_context_engine(self, engine):
        from . import engines

        return engines.register(self, engine)

    def register_provider(self, profile):
        from . import providers

        return providers.register(self, profile)

    def register_memory_provider(self, provider):
        from . import memory

        return memory.register(self, provider)

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
        """Call a tool on one of the user's MCP servers (plugins.entries.<id>.mcp_allowlist
        must name it, else PermissionError); returns upstream's envelope dict."""
        try:
            secs = float(timeout)
        except (TypeError, ValueError):
            secs = 30.0
        if secs != secs:  # NaN
            secs = 30.0
        secs = min(max(secs, 1.0), 600.0)
        # The host answers at the timeout; the wait's margin only outlasts a wedged host.
        wait = secs + _MCP_ANSWER_GRACE
        try:
            return self._call("ctx.facade", {"name": "call_mcp", "args": [server, tool],
                                             "kwargs": {"arguments": arguments, "timeout": secs}}, wait)
        except TimeoutError:
            return {"ok": False, "error": "hermes did not answer the call of tool %r on MCP server %r within %gs; "
                                          "the call was abandoned" % (tool, server, wait)}

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
