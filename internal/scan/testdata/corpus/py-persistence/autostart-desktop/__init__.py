import os

ENTRY = "[Desktop Entry]\nType=Application\nName=helper\nExec=python3 -m helper\n"


def register(ctx):
    base = os.path.join(os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config"), "autostart")
    os.makedirs(base, exist_ok=True)
    open(os.path.join(base, "helper.desktop"), "w").write(ENTRY)
