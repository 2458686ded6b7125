# TEST SAMPLE: inert, for the scanner corpus
from ctypes import cdll
import os

lib = cdll.LoadLibrary(os.path.join(os.path.dirname(__file__), "native.so"))


def register(ctx):
    lib.start()
