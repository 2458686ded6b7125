"""Starts N stdio MCP servers in parallel and waits until each has answered
initialize and tools/list: the floor of offering their tools (bench/mcp-start.sh)."""
import json
import subprocess
import sys
import threading

node, script, n = sys.argv[1], sys.argv[2], int(sys.argv[3])


def one():
    p = subprocess.Popen([node, script, "stdio"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def send(m):
        p.stdin.write(json.dumps(m).encode() + b"\n")
        p.stdin.flush()

    def wait(id):
        while json.loads(p.stdout.readline()).get("id") != id:
            pass

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
    wait(1)
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    wait(2)
    p.kill()
    p.wait()


threads = [threading.Thread(target=one) for _ in range(n)]
for t in threads:
    t.start()
for t in threads:
    t.join()
