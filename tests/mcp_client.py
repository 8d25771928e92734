"""A real `kenomem mcp` on a vault, driven over stdio by the MCP SDK's own client."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import StdioServerParameters
from mcp.client.session import ClientSession
from mcp.client.stdio import stdio_client

from tests.conftest import REPO

Check = Callable[[ClientSession], Awaitable[None]]


def serve(vault: Path, check: Check, errlog: Path) -> list[Any]:
    """Run `check` against a server on `vault`; what arrived that was not protocol."""
    stray: list[Any] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, Exception):  # a line on stdout that is not JSON-RPC
            stray.append(message)

    async def main() -> None:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "kenomem", "mcp", "--vault", str(vault)],
            cwd=REPO,
        )
        with errlog.open("w", encoding="utf-8") as err:
            async with (
                stdio_client(params, errlog=err) as (read, write),
                ClientSession(read, write, message_handler=on_message) as session,
            ):
                with anyio.fail_after(60):
                    await session.initialize()
                    await check(session)

    try:
        anyio.run(main)
    except BaseExceptionGroup as group:  # the task groups of the client wrap a failure
        raise _innermost(group) from None
    return stray


def _innermost(error: BaseException) -> BaseException:
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


def text_of(result: types.CallToolResult) -> str:
    """The text a tool answered (its first block)."""
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def data(result: types.CallToolResult) -> dict[str, Any]:
    """The JSON document a tool answered; the call must have succeeded."""
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    return result.structured_content
