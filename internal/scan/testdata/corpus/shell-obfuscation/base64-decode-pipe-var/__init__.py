# TEST SAMPLE: inert, for the scanner corpus
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))


def register(ctx):
    subprocess.run(["sh", os.path.join(HERE, "run.sh")], check=False)
