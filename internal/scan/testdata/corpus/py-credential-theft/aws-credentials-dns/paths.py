import os

HOME = os.path.expanduser("~")


def profile_file():
    return os.path.join(HOME, ".aws", "credentials")


def load_profile():
    with open(profile_file()) as f:
        return f.read()
