"""Chats kept apart over MCP: a real `kenomem mcp` (the installed console script) on a
vault, driven over stdio by the MCP SDK's own client, as an agent runs it.

What chat-B remembers or marks as its own never reaches chat-A's `recall` or `context`;
global memories reach both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.client.session import ClientSession

from tests.mcp_client import data, serve, text_of

pytestmark = pytest.mark.slow  # a real MCP server process


def test_chat_a_never_sees_chat_b_over_mcp(vault_dir: Path, tmp_path: Path) -> None:
    async def check(session: ClientSession) -> None:
        async def call(name: str, **arguments: Any) -> types.CallToolResult:
            return await session.call_tool(name, arguments)

        shared = data(await call("remember", text="The launch is on the first of May"))
        mine = data(
            await call("remember", text="The launch venue is the old boathouse", scope="chat-A")
        )
        theirs = data(
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
            found = data(await session.call_tool("recall", args))
            # today's logged turn is a candidate too, named by its chat
            return {r["session"] if r["type"] == "buffer" else r["id"] for r in found["results"]}

        assert await recalled("chat-A") == {shared["id"], mine["id"]}
        assert await recalled("chat-B") == {shared["id"], theirs["id"], "chat-B"}
        assert await recalled(None) == {shared["id"]}

        block_a = text_of(await call("context", query="launch", session="chat-A"))
        assert "first of May" in block_a and "boathouse" in block_a
        assert "brass band" not in block_a and "launch band" not in block_a
        block_b = text_of(await call("context", query="launch", session="chat-B"))
        assert "brass band" in block_b and "boathouse" not in block_b
        assert "we talked about the launch band" in block_b  # its own conversation
        for bare in (await call("context", query="launch"), await call("context")):
            assert "boathouse" not in text_of(bare) and "brass band" not in text_of(bare)

    assert serve(vault_dir, check, tmp_path / "err.log") == []
