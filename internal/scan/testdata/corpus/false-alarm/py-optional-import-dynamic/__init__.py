import importlib

OPTIONAL = ("yaml", "tomllib")
HANDLERS = {"upper": str.upper, "lower": str.lower}


def _load():
    mods = {}
    for name in OPTIONAL:
        try:
            mods[name] = importlib.import_module(name)
        except ImportError:
            pass
    return mods


def _fmt(args):
    fn = getattr(str, args.get("mode", "upper"), None) or HANDLERS["upper"]
    return fn(args.get("text", ""))


def register(ctx):
    _load()
    ctx.register_tool("fmt", {"type": "object"}, _fmt)
