"""`kenomem mcp`'s `remember` and `extract`: a new value for a fact supersedes it and
says so, `no_supersede` keeps both, an unsure conflict comes with its command, and words
that ask to keep a memory pin it; over stdio through the MCP SDK's own client."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp.client.session import ClientSession

from tests.mcp_client import data, serve

pytestmark = pytest.mark.slow  # a real MCP server process


def test_remember_and_extract_keep_one_truth_and_pin(vault_dir: Path, tmp_path: Path) -> None:
    async def check(session: ClientSession) -> None:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert "no_supersede" in tools["remember"].input_schema["properties"]
        assert "no_supersede" in tools["extract"].input_schema["properties"]

        async def remember(text: str, **more: object) -> dict[str, object]:
            return data(await session.call_tool("remember", {"text": text, **more}))

        first = await remember("Deploys go out on Tuesdays")
        second = await remember("Deploys go out on Wednesdays")
        assert second["action"] == "superseded"
        assert second["superseded"] == [
            {
                "id": first["id"],
                "title": "Deploys go out on Tuesdays",
                "why": "'Tuesdays' then 'Wednesdays'",
            }
        ]
        kept = await remember("Deploys go out on Thursdays", no_supersede=True)
        assert kept["action"] == "created" and kept["superseded"] == []
        assert [n["id"] for n in kept["may_contradict"]] == [second["id"]]  # type: ignore[union-attr]

        master = await remember("The default branch is master")
        main = await remember("The default branch is main")
        (named,) = main["may_contradict"]  # type: ignore[misc]
        assert named["command"] == (
            f"kenomem remember 'The default branch is main' --supersedes {master['id']}"
        )

        pinned = await remember("Never forget that Mia is allergic to peanuts")
        assert (pinned["pinned"], pinned["pinned_by"]) == (True, "Never forget that")

        reply = (
            "<memory>Always run the tests before pushing</memory> and "
            "<memory>The standup is at 10:00</memory>"
        )
        first_extract = data(await session.call_tool("extract", {"reply": reply}))
        rule, standup = first_extract["stored"]
        assert rule["pinned_by"] == "Always run" and standup["pinned_by"] is None
        moved = data(
            await session.call_tool("extract", {"reply": "<memory>The standup is at 9:30</memory>"})
        )
        (stored,) = moved["stored"]
        assert stored["action"] == "superseded"
        assert [s["id"] for s in stored["superseded"]] == [standup["id"]]

    assert serve(vault_dir, check, tmp_path / "err.log") == []
