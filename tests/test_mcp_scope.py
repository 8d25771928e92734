"""Chats kept apart over MCP: a real `kenomem mcp` (the installed console script) on a
vault, driven over stdio by the MCP SDK's own client, as an agent runs it.

What chat-B remembers or marks as its own never reaches chat-A's `recall` or `context`;
global memories reach both.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import StdioServerParameters
from mcp.client.session import ClientSession
from mcp.client.stdio import stdio_client

from tests.helpers import KENOMEM

pytestmark = pytest.mark.slow  # a real MCP server process


def _serve(vault: Path, check: Callable[[ClientSession], Awaitable[None]], errlog: Path) -> None:
    async def main() -> None:
        params = StdioServerParameters(
            command=KENOMEM,
            args=["mcp", "--vault", str(vault)],
            env=dict(os.environ),  # the same code as the tests (PYTHONPATH), no colour
        )
        with errlog.open("w", encoding="utf-8") as err:
            async with (
                stdio_client(params, errlog=err) as (read, write),
                ClientSession(read, write) as session,
            ):
                with anyio.fail_after(90):
                    await session.initialize()
                    await check(session)

    anyio.run(main)


def _data(result: types.CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


def _text(result: types.CallToolResult) -> str:
    assert not result.is_error, result.content
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def test_chat_a_never_sees_chat_b_over_mcp(vault_dir: Path, tmp_path: Path) -> None:
    async def check(session: ClientSession) -> None:
        async def call(name: str, **arguments: Any) -> types.CallToolResult:
            return await session.call_tool(name, arguments)

        shared = _data(await call("remember", text="The launch is on the first of May"))
        mine = _data(
            await call("remember", text="The launch venue is the old boathouse", scope="chat-A")
        )
        theirs = _data(
            await call(
                "remember",
                text="The launch surprise is a brass band",
                type="episodic",
                scope="chat-B",
            )
        )
        await call("log", text="we talked about the launch band", session="chat-B")

        async def recalled(chat: str | None) -> set[str]:
            args: dict[str, Any] = {"query": "launch"}
            if chat:
                args["session"] = chat
            found = _data(await session.call_tool("recall", args))
            # today's logged turn is a candidate too, named by its chat
            return {r["session"] if r["type"] == "buffer" else r["id"] for r in found["results"]}

        assert await recalled("chat-A") == {shared["id"], mine["id"]}
        assert await recalled("chat-B") == {shared["id"], theirs["id"], "chat-B"}
        assert await recalled(None) == {shared["id"]}

        block_a = _text(await call("context", query="launch", session="chat-A"))
        assert "first of May" in block_a and "boathouse" in block_a
        assert "brass band" not in block_a and "launch band" not in block_a
        block_b = _text(await call("context", query="launch", session="chat-B"))
        assert "brass band" in block_b and "boathouse" not in block_b
        assert "we talked about the launch band" in block_b  # its own conversation
        for bare in (await call("context", query="launch"), await call("context")):
            assert "boathouse" not in _text(bare) and "brass band" not in _text(bare)

    _serve(vault_dir, check, tmp_path / "err.log")
