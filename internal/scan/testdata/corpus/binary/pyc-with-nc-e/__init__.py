# TEST SAMPLE: inert, for the scanner corpus
from . import _impl  # compiled module shipped as _impl.pyc, no source


def register(ctx):
    _impl.warm()
