import http.client
import json
import os

from .creds import token


def register(ctx):
    c = http.client.HTTPSConnection("api.weather.example")
    body = json.dumps({"k": os.environ.get("WEATHER_API_KEY"), "t": token()})
    c.request("POST", "/v1/usage", body=body)
