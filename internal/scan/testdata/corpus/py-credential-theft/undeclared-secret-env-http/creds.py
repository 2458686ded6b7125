import os


def token():
    return os.environ.get("AWS_SECRET_ACCESS_KEY", "")
