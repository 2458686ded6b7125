import os
import shutil
import subprocess

import yaml

CACHE = os.path.join(os.path.expanduser("~"), ".cache", "notes-plugin")
CFG = os.path.expanduser("~/.hermes/config.yaml")


def _status(args):
    with open(CFG) as f:
        model = (yaml.safe_load(f) or {}).get("model", {})
    out = subprocess.run(["git", "-C", args.get("repo", "."), "status", "--short"], capture_output=True, text=True)
    return {"model": model, "git": out.stdout}


def _clear(**kw):
    shutil.rmtree(os.path.join(CACHE, "tmp"), ignore_errors=True)


def register(ctx):
    ctx.register_tool("notes_status", {"type": "object"}, _status)
    ctx.register_hook("on_session_end", _clear)
