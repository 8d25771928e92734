"""Recall served over HTTP (`kenomem serve`) against the same recall over stdio
(`kenomem mcp`), at 10,000 memories.

    python bench/serve.py                  # 10,000 memories, 200 calls each way
    python bench/serve.py --calls 100 --clients 4

Two working copies of the generated vault (`run.cached_vault`, which stays as generated),
one each way, are indexed, a read token made (in a configuration folder of its own) and `kenomem
serve` started on it. Then, with the MCP SDK's own clients and `--clients` sessions each
way (over stdio, each session its own `kenomem mcp` process; over HTTP, each its own
session with the one server), after a few warm-up calls each: `recall` `--calls` times
by one client each way, call by call in turn; then by all the clients at once, one way
then the other, round after round, `--calls` in all each way. Each call's latency is the
client's round trip (the JSON-RPC request, the search, the touch of the ten results);
median and p95 go to stdout as markdown, progress to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import StdioServerParameters
from mcp.client.session import ClientSession
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from run import QUERIES, cached_vault, log, working_copy  # noqa: E402

WARMUP = 5
PER_ROUND = 5  # calls of each concurrent client in one round


async def open_stdio(stack: AsyncExitStack, vault: Path) -> ClientSession:
    """A `kenomem mcp` of its own, and a session with it."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "kenomem", "mcp", "--vault", str(vault)]
    )
    err = stack.enter_context(open(os.devnull, "w"))  # noqa: SIM115 (closed by the stack)
    read, write = await stack.enter_async_context(stdio_client(params, errlog=err))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return session


async def open_http(stack: AsyncExitStack, url: str, token: str) -> ClientSession:
    """A session of its own with the one `kenomem serve`."""
    headers = {"Authorization": f"Bearer {token}"}
    http = await stack.enter_async_context(
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(120))
    )
    read, write = await stack.enter_async_context(streamable_http_client(url, http_client=http))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return session


async def recalls(session: ClientSession, calls: int, start: int, took: list[float]) -> None:
    for i in range(calls):
        query = QUERIES[(start + i) % len(QUERIES)]
        began = time.perf_counter()
        result = await session.call_tool("recall", {"query": query})
        took.append(time.perf_counter() - began)
        if result.is_error:
            raise SystemExit(f"recall failed: {result.content}")


async def measure(vault: Path, url: str, token: str, calls: int, clients: int) -> Any:
    """One client each way, call by call in turn; then `clients` at once each way, round
    by round in turn: what the machine does meanwhile falls on both."""
    took: dict[str, list[float]] = {}
    async with AsyncExitStack() as stack:
        log(f"  opening {clients} sessions each way ...")
        stdio = [await open_stdio(stack, vault) for _ in range(clients)]
        served = [await open_http(stack, url, token) for _ in range(clients)]
        for session in stdio + served:
            await recalls(session, WARMUP, 0, [])
        log("  one client each way ...")
        one_stdio, one_http = took["stdio, 1 client"], took["HTTP, 1 client"] = [], []
        for i in range(calls):
            await recalls(stdio[0], 1, i, one_stdio)
            await recalls(served[0], 1, i, one_http)
        log(f"  {clients} clients each way ...")
        many = {f"stdio, {clients} clients": stdio, f"HTTP, {clients} clients": served}
        for name in many:
            took[name] = []
        for r in range(max(1, calls // (clients * PER_ROUND))):
            for name, sessions in many.items():
                async with anyio.create_task_group() as group:
                    for n, session in enumerate(sessions):
                        group.start_soon(recalls, session, PER_ROUND, r + n, took[name])
    return took


def summary(took: list[float]) -> dict[str, float]:
    ordered = sorted(took)
    return {
        "n": len(ordered),
        "median_ms": statistics.median(ordered) * 1000,
        "p95_ms": ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))] * 1000,
    }


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument(
        "--cache-dir", type=Path, default=Path(tempfile.gettempdir()) / "kenomem-bench"
    )
    args = parser.parse_args()

    base = cached_vault(args.size, args.cache_dir, fresh=False)
    # A copy each way: each recall touches its results, and a server that sees another
    # process's writes syncs them first, which would charge one way for the other's work.
    works = {way: args.cache_dir / f"serve-{way}-{args.size}" for way in ("stdio", "http")}
    config = Path(tempfile.mkdtemp(prefix="kenomem-serve-bench-"))
    os.environ["XDG_CONFIG_HOME"] = str(config)  # the bench's token, not the user's
    kenomem = [sys.executable, "-m", "kenomem"]
    for work in works.values():
        working_copy(base, work)
        log(f"  indexing {work} ...")
        subprocess.run([*kenomem, "reindex", "--vault", str(work)], check=True, capture_output=True)
    create = [
        "token",
        "create",
        "bench",
        "--scope",
        "read",
        "--json",
        "--vault",
        str(works["http"]),
    ]
    made = subprocess.run([*kenomem, *create], check=True, capture_output=True, text=True)
    token = json.loads(made.stdout)["token"]

    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    server = subprocess.Popen(
        [*kenomem, "serve", "--port", str(port), "--vault", str(works["http"])],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx2.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                    break
            except httpx2.TransportError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit("kenomem serve did not start") from None
                time.sleep(0.2)
        took = anyio.run(measure, works["stdio"], url, token, args.calls, args.clients)
    finally:
        server.terminate()
        server.wait(30)
    results = {name: summary(values) for name, values in took.items()}

    print(f"\nrecall over MCP at {args.size:,} memories ({args.calls} calls each)\n")
    print("| transport | calls | median | p95 |")
    print("|---|---:|---:|---:|")
    for name, s in results.items():
        print(f"| {name} | {s['n']} | {s['median_ms']:.1f} ms | {s['p95_ms']:.1f} ms |")


if __name__ == "__main__":
    main()
