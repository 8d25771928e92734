"""`kenomem mcp`'s `remember` with `when` and `trigger`, over stdio through the MCP SDK's
own client: an episode filed under its day, an active pattern a message brings up."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from mcp.client.session import ClientSession

from tests.mcp_client import data, serve, text_of

pytestmark = pytest.mark.slow  # a real MCP server process per test


def test_remember_with_when_and_with_a_trigger(vault_dir: Path, tmp_path: Path) -> None:
    async def check(session: ClientSession) -> None:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        properties = tools["remember"].input_schema["properties"]
        assert {"when", "trigger"} <= set(properties)

        dated = data(
            await session.call_tool(
                "remember", {"text": "Kickoff with the Acme team", "when": "2026-02-10"}
            )
        )
        assert (dated["type"], dated["when"]) == ("episodic", "2026-02-10T00:00:00Z")
        assert dated["path"].startswith("episodic/2026-02/")
        stated = data(
            await session.call_tool("remember", {"text": "Adrian met Priya on 2026-02-11"})
        )
        assert (stated["when"], stated["path"][:17]) == (
            "2026-02-11T00:00:00Z",
            "episodic/2026-02/",
        )
        found = data(
            await session.call_tool(
                "recall", {"query": "Acme Priya", "since": "2026-02-01", "until": "2026-02-28"}
            )
        )
        assert {hit["id"] for hit in found["results"]} == {dated["id"], stated["id"]}

        pattern = data(
            await session.call_tool(
                "remember",
                {"text": "Rotate the n8n credentials, then retry", "trigger": "n8n + 401"},
            )
        )
        assert (pattern["type"], pattern["trigger"]) == ("procedural", "n8n + 401")
        text = (vault_dir / pattern["path"]).read_text(encoding="utf-8")
        meta = yaml.safe_load(text.split("---\n")[1])
        assert (meta["status"], meta["trigger"]) == ("active", "n8n + 401")
        block = await session.call_tool("context", {"query": "the n8n webhook returns 401 again"})
        assert not block.is_error
        assert "Rotate the n8n credentials" in text_of(block)

        for bad, says in (
            ({"when": "the day after"}, "cannot read the time"),
            ({"trigger": "n8n + the"}, "no word a message could be matched on"),
            ({"trigger": "n8n", "type": "semantic"}, "--trigger makes a procedural"),
        ):
            refused = await session.call_tool("remember", {"text": "Kickoff", **bad})
            assert refused.is_error and says in text_of(refused), text_of(refused)

    assert serve(vault_dir, check, tmp_path / "err.log") == []
