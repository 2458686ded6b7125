"""A misbehaving MCP server over stdio for hermes' fault tests.

argv[1] is the mode: "crash" exits before answering anything; "slowstart"
sleeps before reading; otherwise it serves tools that misbehave when called.
It writes a line to stderr on start (tests check it reaches the log).
"""
import json
import os
import sys
import time

mode = sys.argv[1] if len(sys.argv) > 1 else "serve"
sys.stderr.write("badserver starting mode=%s secret_env=%s\n" % (mode, os.environ.get("LEAK_ME", "")))
sys.stderr.flush()
if mode == "crash":
    sys.exit(3)
if mode == "slowstart":
    time.sleep(30)

TOOLS = [
    {"name": "exit", "description": "exits mid-call", "inputSchema": {"type": "object"}},
    {"name": "hang", "description": "never answers", "inputSchema": {"type": "object"}},
    {"name": "garbage", "description": "answers garbage", "inputSchema": {"type": "object"}},
    {"name": "huge", "description": "returns 1 MB", "inputSchema": {"type": "object"}},
    {"name": "fail", "description": "isError with a secret",
     "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}},
    {"name": "ok", "description": "works", "inputSchema": {"type": "object"},
     "annotations": {"readOnlyHint": True}},
    {"name": "write", "description": "works, not read-only", "inputSchema": {"type": "object"}},
    {"name": "bad_schema", "description": "invalid schema", "inputSchema": {"type": "object", "properties": {"x": {"type": 12}}}},
    {"name": "env", "description": "shows its environment", "inputSchema": {"type": "object"},
     "annotations": {"readOnlyHint": True}},
    {"name": "x" * 80, "description": "a long name", "inputSchema": {"type": "object"}},
]


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def text(rid, s, is_error=False):
    send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": s}], "isError": is_error}})


for line in sys.stdin:
    msg = json.loads(line)
    rid, method = msg.get("id"), msg.get("method")
    if rid is None:
        continue
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": msg["params"]["protocolVersion"],
            "capabilities": {"tools": {}}, "serverInfo": {"name": "badserver", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": TOOLS}})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": rid, "result": {}})
    elif method == "tools/call":
        name = msg["params"]["name"]
        if name == "exit":
            os._exit(1)
        elif name == "hang":
            continue
        elif name == "garbage":
            sys.stdout.write("this is not json-rpc\n")
            sys.stdout.flush()
        elif name == "huge":
            text(rid, "y" * (1 << 20))
        elif name == "fail":
            text(rid, "denied: Authorization: Bearer sk-abcdefghijklmnop token=hunter2", True)
        elif name == "env":
            text(rid, json.dumps(dict(os.environ)))
        else:
            text(rid, "done " + name)
    else:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no such method"}})
