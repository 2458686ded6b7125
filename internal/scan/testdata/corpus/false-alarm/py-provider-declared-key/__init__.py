import json
import os

import requests

CACHE = os.path.join(os.path.expanduser("~"), ".cache", "weather-plugin", "last.json")
CONF = os.path.expanduser("~/.config/weather-plugin/settings.json")


def _forecast(args):
    key = os.environ["WEATHER_API_KEY"]
    units = "metric"
    if os.path.exists(CONF):
        units = json.load(open(CONF)).get("units", units)
    r = requests.get("https://api.weather.example/v1/forecast", params={"q": args["city"], "units": units},
                     headers={"Authorization": "Bearer " + key}, timeout=10)
    os.makedirs(os.path.dirname(CACHE), exist_ok=True)
    with open(CACHE, "w") as f:
        f.write(r.text)
    return r.json()


def register(ctx):
    ctx.register_tool("forecast", {"type": "object"}, _forecast)
