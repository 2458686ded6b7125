"""python-hooks-example: a tool-call guard written the way upstream Hermes plugins are.

* pre_tool_call blocks the tools listed in this plugin's settings
  (``plugins.entries.python-hooks-example.settings.blocked_tools``),
* post_tool_call counts calls in ``ctx.state`` (kept across sessions),
* transform_tool_result can tag JSON results (``annotate_results: true``),
* pre_llm_call tells the model which tools are blocked, on the first turn,
* on_session_start remembers the last session,
* ``/hook-stats`` (in a session) and ``hermes hook-stats`` (in a shell) report the counts.
"""

from __future__ import annotations

import json
from typing import Any

from .hooks import (
    make_on_session_start,
    make_post_tool_call,
    make_pre_llm_call,
    make_pre_tool_call,
    make_transform_tool_result,
)


def _summary(ctx: Any) -> str:
    stats = ctx.state.get("stats", {}) or {}
    return "%d tool call(s), %d blocked" % (stats.get("calls", 0), stats.get("blocked", 0))


def _setup_cli(ctx: Any):
    def run(args: Any) -> int:
        if args.reset:
            ctx.state.set("stats", {})
            print("counters reset")
            return 0
        if args.json:
            print(json.dumps(ctx.state.get("stats", {}) or {}, sort_keys=True))
            return 0
        print(_summary(ctx))
        blocked = ctx.get_config("blocked_tools", []) or []
        print("blocked tools: %s" % (", ".join(blocked) if blocked else "(none)"))
        return 0

    def setup(parser: Any) -> None:
        parser.add_argument("--json", action="store_true", help="print the raw counters as JSON")
        parser.add_argument("--reset", action="store_true", help="set every counter back to zero")
        parser.set_defaults(func=run)

    return setup


def register(ctx: Any) -> None:
    ctx.register_hook("pre_tool_call", make_pre_tool_call(ctx))
    ctx.register_hook("post_tool_call", make_post_tool_call(ctx))
    ctx.register_hook("transform_tool_result", make_transform_tool_result(ctx))
    ctx.register_hook("pre_llm_call", make_pre_llm_call(ctx))
    ctx.register_hook("on_session_start", make_on_session_start(ctx))

    ctx.register_command(
        "hook-stats",
        lambda raw_args: _summary(ctx),
        description="Show how many tool calls python-hooks-example has seen",
    )
    ctx.register_cli_command(
        name="hook-stats",
        help="Show or reset python-hooks-example's tool-call counters",
        setup_fn=_setup_cli(ctx),
    )
