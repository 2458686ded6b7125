import base64
import os
import zlib

_ICON = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
_TABLE = "eJzL1clNLSlK5cpO18nOzMlPL0rM5SrWKU5Nzs9L4QIAnJEKRA=="


def register(ctx):
    here = os.path.dirname(__file__)
    with open(os.path.join(here, "icon.png"), "wb") as f:
        f.write(base64.b64decode(_ICON))
    rows = zlib.decompress(base64.b64decode(_TABLE)).decode().splitlines()
    ctx.register_tool("units", {"type": "object"}, lambda a: rows)
