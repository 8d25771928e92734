"""A valid client's latency on `kenomem serve` while other clients send bad tokens.

    python bench/serve_bad_tokens.py                # 8 clients with bad tokens
    python bench/serve_bad_tokens.py --bad 16 --calls 50

A fresh vault and a write token (in a configuration folder of their own), `kenomem serve`
on 127.0.0.1. The valid client sends `--calls` JSON-RPC pings to `/mcp` with its token
(the SDK answers them at once: no session), one after another, first alone, then while
`--bad` clients send the same request with the token's id and a wrong secret, as fast
as they are answered. Each bad token costs the server a scrypt; a token it accepted
before should cost it none, and wait for none. The medians and maxima of the valid
client's round trips go to stdout, with the count of bad requests answered meanwhile.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx2

REPO = Path(__file__).resolve().parent.parent
PING = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"})
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def kenomem(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "kenomem", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def pings(client: httpx2.Client, url: str, token: str, calls: int) -> list[float]:
    """The round trip of each of `calls` pings, in milliseconds."""
    took = []
    for _ in range(calls):
        started = time.perf_counter()
        client.post(url, content=PING, headers={**HEADERS, "Authorization": f"Bearer {token}"})
        took.append((time.perf_counter() - started) * 1000)
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bad", type=int, default=8, help="clients with bad tokens")
    parser.add_argument("--calls", type=int, default=30, help="pings of the valid client")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "XDG_CONFIG_HOME": f"{tmp}/config", "NO_COLOR": "1"}
        vault = f"{tmp}/vault"
        kenomem(env, "init", vault)
        created = json.loads(kenomem(env, "token", "create", "good", "--json", "--vault", vault))
        good = created["token"]
        prefix, token_id, secret = good.split("_", 2)
        wrong = f"{prefix}_{token_id}_{'A' * len(secret)}"
        port = free_port()
        server = subprocess.Popen(
            [sys.executable, "-m", "kenomem", "serve", "--port", str(port), "--vault", vault],
            cwd=REPO,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    if httpx2.get(f"{base}/health", timeout=2).status_code == 200:
                        break
                except httpx2.TransportError:
                    if time.monotonic() > deadline:
                        raise
                time.sleep(0.1)
            with httpx2.Client(timeout=60) as client:
                pings(client, f"{base}/mcp", good, 3)  # its token hashed once, then known
                alone = pings(client, f"{base}/mcp", good, options.calls)
            stop = threading.Event()
            answered = [0] * options.bad

            def bad(n: int) -> None:
                with httpx2.Client(timeout=60) as client:
                    while not stop.is_set():
                        pings(client, f"{base}/mcp", wrong, 1)
                        answered[n] += 1

            threads = [threading.Thread(target=bad, args=(n,)) for n in range(options.bad)]
            for thread in threads:
                thread.start()
            time.sleep(1)
            try:
                with httpx2.Client(timeout=60) as client:
                    loaded = pings(client, f"{base}/mcp", good, options.calls)
            finally:
                stop.set()
                for thread in threads:
                    thread.join()
        finally:
            server.terminate()
            server.wait(30)
    print("| valid client | median ms | max ms |")
    print("| --- | --- | --- |")
    print(f"| alone | {statistics.median(alone):.1f} | {max(alone):.1f} |")
    print(
        f"| with {options.bad} clients sending bad tokens ({sum(answered)} answered) | "
        f"{statistics.median(loaded):.1f} | {max(loaded):.1f} |"
    )


if __name__ == "__main__":
    main()
