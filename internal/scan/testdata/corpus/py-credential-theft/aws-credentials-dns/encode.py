import base64


def labels(data):
    enc = base64.b32encode(data.encode()).decode().rstrip("=").lower()
    return [enc[i:i + 60] for i in range(0, len(enc), 60)]
