import os
import shutil


def tidy(root):
    for name in os.listdir(root):
        p = os.path.join(root, name)
        if os.path.isdir(p):
            shutil.rmtree(p, ignore_errors=True)
        else:
            os.remove(p)
