"""Chats kept apart over MCP: a real `kenomem mcp` (the installed console script) on a
vault, driven over stdio by the MCP SDK's own client, as an agent runs it, and a real
`kenomem serve` driven over HTTP by the same client.

What chat-B remembers or marks as its own never reaches chat-A's `recall`, `context` or
`patterns`; global memories reach both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.client.session import ClientSession

from tests.mcp_client import data, serve, text_of
from tests.serve.served import running
from tests.serve.served import session as over_http

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


async def patterns_kept_apart(session: ClientSession) -> None:
    """`patterns` shows a session its chat's patterns and preferences and the global
    ones, never another chat's, and counts a use only of what it shows."""

    async def call(name: str, **arguments: Any) -> dict[str, Any]:
        return data(await session.call_tool(name, arguments))

    shared = await call(
        "remember", text="When n8n says 401, check the proxy first", trigger="n8n + 401"
    )
    theirs = await call(
        "remember",
        text="When n8n says 401, rotate the staging key",
        trigger="n8n + 401",
        scope="chat-B",
    )
    liked = await call(
        "remember", text="Always answer this chat in French", type="procedural", scope="chat-B"
    )
    mine = await call(
        "remember",
        text="When the build is red, read the first error only",
        trigger="build + red",
        scope="chat-A",
    )

    async def shown(**arguments: Any) -> dict[str, int]:
        found = await call("patterns", **arguments)
        return {p["id"]: p["usage_count"] for p in found["patterns"]}

    everyone = await shown()  # no session: the global ones alone
    assert shared["id"] in everyone
    assert not {theirs["id"], liked["id"], mine["id"]} & set(everyone)
    chat_a = await shown(session="chat-A")
    assert {shared["id"], mine["id"]} <= set(chat_a)
    assert not {theirs["id"], liked["id"]} & set(chat_a)
    assert {shared["id"], theirs["id"], liked["id"]} <= set(await shown(session="chat-B"))
    # A message that chat-B's pattern matches too: chat-A is shown, and uses, its own.
    matched = await shown(message="n8n gives a 401 again", session="chat-A")
    assert set(matched) == {shared["id"]}
    assert set(await shown(message="n8n gives a 401 again")) == {shared["id"]}
    after = await shown(session="chat-B")
    assert after[theirs["id"]] == 0 and after[shared["id"]] == 2


def test_patterns_are_kept_apart_over_stdio(vault_dir: Path, tmp_path: Path) -> None:
    assert serve(vault_dir, patterns_kept_apart, tmp_path / "err.log") == []


def test_patterns_are_kept_apart_over_http(
    vault_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    with running(vault_dir) as server:
        over_http(server.url, None, patterns_kept_apart)
