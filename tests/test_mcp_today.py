"""Over MCP (a real server on stdio): what was logged today is recalled before any
consolidation, and recall says how sure its match is."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp.client.session import ClientSession

from tests.mcp_client import data, serve

pytestmark = pytest.mark.slow  # a real MCP server process


def test_an_entry_logged_today_is_recalled_with_confidence(vault_dir: Path, tmp_path: Path) -> None:
    async def check(session: ClientSession) -> None:
        logged = await session.call_tool(
            "log", {"text": "The launch codename is Bluebird", "session": "chat-7"}
        )
        assert not logged.is_error
        asked = {"query": "bluebird codename", "session": "chat-7"}
        found = data(await session.call_tool("recall", asked))
        (hit,) = found["results"]
        assert hit["type"] == "buffer"
        assert hit["session"] == "chat-7"
        assert hit["path"].startswith("buffer/")
        assert found["confidence"] == "high"
        only = data(await session.call_tool("recall", {**asked, "types": ["buffer"]}))
        assert [r["type"] for r in only["results"]] == ["buffer"]
        facts = data(await session.call_tool("recall", {**asked, "types": ["semantic"]}))
        assert facts["results"] == []
        # another chat does not see it: an entry's scope is its session
        other = {"query": "bluebird codename", "session": "chat-8"}
        assert data(await session.call_tool("recall", other))["results"] == []
        nothing = data(await session.call_tool("recall", {"query": "zeppelin"}))
        assert nothing["results"] == []
        assert nothing["confidence"] == "none"

    assert serve(vault_dir, check, tmp_path / "err.log") == []
