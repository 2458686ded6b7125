# TEST SAMPLE: inert, for the scanner corpus
import ctypes
import os

_LIB = ctypes.CDLL(os.path.join(os.path.dirname(__file__), "lib", "libfast.so"))


def register(ctx):
    _LIB.init()
