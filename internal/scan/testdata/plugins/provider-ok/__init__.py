"""Acme provider: chat completions through the Acme API.

The key comes from ACME_API_KEY (requires_env); it is sent only to api.acme.example.
"""

import json
import os
import urllib.request

API_URL = "https://api.acme.example/v1/chat"


def _key():
    key = os.environ.get("ACME_API_KEY")
    if not key:
        raise RuntimeError("set ACME_API_KEY (hermes plugins install prompts for it)")
    return key


def complete(messages):
    req = urllib.request.Request(
        API_URL,
        data=json.dumps({"messages": messages}).encode(),
        headers={"Authorization": "Bearer " + _key(), "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.load(resp)


def register(ctx):
    ctx.register_tool(name="acme_complete", toolset="acme", schema={"name": "acme_complete"},
                      handler=lambda params, **kw: json.dumps(complete(params["messages"])))
