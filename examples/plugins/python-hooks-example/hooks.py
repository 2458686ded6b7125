"""Hook callbacks for python-hooks-example.

Each factory takes the plugin's ctx and returns a callback. Callbacks declare the
payload fields they use and take the rest as **kwargs, so new fields added by the
host never break them.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Callable, Dict, Optional

logger = logging.getLogger(__name__)

PLUGIN = "python-hooks-example"


def make_pre_tool_call(ctx: Any) -> Callable[..., Optional[Dict[str, str]]]:
    def pre_tool_call(tool_name: str, args: Dict[str, Any], **kwargs: Any) -> Optional[Dict[str, str]]:
        blocked = ctx.get_config("blocked_tools", []) or []
        if tool_name in blocked:
            stats = ctx.state.get("stats", {}) or {}
            stats["blocked"] = stats.get("blocked", 0) + 1
            ctx.state.set("stats", stats)
            return {
                "action": "block",
                "message": "%s is blocked by %s (remove it from plugins.entries.%s.settings.blocked_tools to allow it)"
                % (tool_name, PLUGIN, ctx.plugin_id),
            }
        return None

    return pre_tool_call


def make_post_tool_call(ctx: Any) -> Callable[..., None]:
    def post_tool_call(tool_name: str, status: str, duration_ms: int = 0, **kwargs: Any) -> None:
        stats = ctx.state.get("stats", {}) or {}
        stats["calls"] = stats.get("calls", 0) + 1
        per_tool = stats.setdefault("by_tool", {})
        per_tool[tool_name] = per_tool.get(tool_name, 0) + 1
        ctx.state.set("stats", stats)
        logger.info("%s: %s finished with status %s in %d ms", PLUGIN, tool_name, status, duration_ms or 0)

    return post_tool_call


def make_transform_tool_result(ctx: Any) -> Callable[..., Optional[str]]:
    def transform_tool_result(tool_name: str, result: str, status: str, **kwargs: Any) -> Optional[str]:
        if status != "ok" or not ctx.get_config("annotate_results", False):
            return None  # no opinion: the result goes on unchanged
        try:
            data = json.loads(result)
        except (TypeError, ValueError):
            return None
        if not isinstance(data, dict):
            return None
        data["checked_by"] = PLUGIN
        return json.dumps(data)

    return transform_tool_result


def make_pre_llm_call(ctx: Any) -> Callable[..., Optional[Dict[str, str]]]:
    def pre_llm_call(is_first_turn: bool = False, **kwargs: Any) -> Optional[Dict[str, str]]:
        blocked = ctx.get_config("blocked_tools", []) or []
        if not is_first_turn or not blocked:
            return None
        return {"context": "These tools are blocked by policy; do not call them: %s." % ", ".join(blocked)}

    return pre_llm_call


def make_on_session_start(ctx: Any) -> Callable[..., None]:
    def on_session_start(session_id: str, model: str = "", platform: str = "", **kwargs: Any) -> None:
        ctx.state.set("last_session", {"id": session_id, "model": model, "platform": platform})
        logger.info("%s: session %s started (%s on %s)", PLUGIN, session_id, model, platform)

    return on_session_start
