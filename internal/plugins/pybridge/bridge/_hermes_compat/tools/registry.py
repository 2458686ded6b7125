"""Compatibility shim for `from tools.registry import tool_error, tool_result`.

Plugins running under the Go hermes host import these helpers exactly as they do under
the Python host; results are the same JSON strings.
"""

import json

_MAX_TOOL_ERROR_CHARS = 2048
_TRUNCATION_MARKER = "\u2026 [truncated]"


def tool_error(message, **extra):
    text = str(message)
    if len(text) > _MAX_TOOL_ERROR_CHARS:
        text = text[:_MAX_TOOL_ERROR_CHARS] + _TRUNCATION_MARKER
    return json.dumps({"error": text, **extra}, ensure_ascii=False)


def tool_result(data=None, **kwargs):
    return json.dumps(data if data is not None else kwargs, ensure_ascii=False)


class _Registry:
    """Direct registry access is not part of the plugin API in this host; use ctx.register_tool."""

    def __getattr__(self, name):
        raise RuntimeError(
            "tools.registry.registry.%s is not available to plugins in the Go hermes host; "
            "register tools with ctx.register_tool() inside register(ctx)" % name)


registry = _Registry()
