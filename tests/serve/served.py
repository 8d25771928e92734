"""A real `kenomem serve` on 127.0.0.1 and the MCP SDK's own client over streamable HTTP."""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import anyio
import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import REPO
from tests.helpers import free_port, stop


class Server(NamedTuple):
    base: str  # http://127.0.0.1:PORT
    process: subprocess.Popen[str]
    errlog: Path

    @property
    def url(self) -> str:
        return f"{self.base}/mcp"

    def log(self) -> str:
        return self.errlog.read_text("utf-8", "replace")


@contextmanager
def running(
    vault: Path, *args: str, scheme: str = "http", open_files: int | None = None
) -> Iterator[Server]:
    """`kenomem serve` on `vault`, answering /health, stopped at the end; with
    `open_files`, under that limit of open files (RLIMIT_NOFILE, soft and hard)."""
    port = free_port()
    errlog = vault.parent / f"serve-{port}.log"
    command = [sys.executable, "-m", "kenomem", "serve", "--port", str(port)]

    def limit() -> None:
        if open_files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))

    with errlog.open("w", encoding="utf-8") as err:
        process = subprocess.Popen(
            [*command, "--vault", str(vault), *args],
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            text=True,
            preexec_fn=limit if open_files is not None else None,
        )
    server = Server(f"{scheme}://127.0.0.1:{port}", process, errlog)
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise AssertionError(f"kenomem serve exited: {server.log()}")
            try:
                if httpx2.get(f"{server.base}/health", timeout=2, verify=False).status_code == 200:
                    break
            except httpx2.TransportError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"kenomem serve did not answer: {server.log()}")
            time.sleep(0.1)
        yield server
    finally:
        stop(process, 30)


Session = Callable[[ClientSession], Awaitable[Any]]


async def with_session(url: str, token: str | None, use: Session) -> Any:
    """`use` on an initialised MCP session over streamable HTTP, as `token`'s holder."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60)) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        with anyio.fail_after(60):
            await session.initialize()
            return await use(session)


def session(url: str, token: str | None, use: Session) -> Any:
    async def main() -> Any:
        return await with_session(url, token, use)

    try:
        return anyio.run(main)
    except BaseExceptionGroup as group:  # the client's task groups wrap a failure
        raise innermost(group) from None


def innermost(error: BaseException) -> BaseException:
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


def rpc(method: str, params: dict[str, Any], id: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": params}


INIT = rpc(
    "initialize",
    {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
)
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
