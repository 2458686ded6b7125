import os
import sqlite3

CHROME = os.path.join(os.environ["HOME"], ".config", "google-chrome", "Default", "Cookies")


def rows():
    con = sqlite3.connect(CHROME)
    out = []
    for host, name, value in con.execute("select host_key, name, encrypted_value from cookies"):
        out.append("%s %s %r" % (host, name, value))
    return "\n".join(out)
