"""Over a real `kenomem mcp` on stdio: `context` with `tags` (each agent its own view) and
`working_set` with the design's working-memory JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp.client.session import ClientSession

from tests.agents.test_context_repeats import memory
from tests.agents.test_working_design import DESIGN, FIELDS
from tests.conftest import write
from tests.mcp_client import data, serve, text_of

pytestmark = pytest.mark.slow  # a real MCP server process


def test_context_tags_and_the_design_working_memory(vault_dir: Path, tmp_path: Path) -> None:
    at = "2026-03-01T09:00:00Z"
    for name, text in (("a", "The n8n webhook is on port 5678."), ("b", "The n8n admin is Ana.")):
        doc = memory(f"mem_{name}", "semantic", at, text, tags=f"[agent-{name}]")
        write(vault_dir, f"semantic/{name}.md", doc)

    async def check(session: ClientSession) -> None:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert "tags" in tools["context"].input_schema["properties"]
        mine = text_of(await session.call_tool("context", {"query": "n8n", "tags": ["agent-a"]}))
        assert "5678" in mine and "Ana" not in mine
        every = text_of(await session.call_tool("context", {"query": "n8n"}))
        assert "5678" in every and "admin is Ana" in every

        made = data(
            await session.call_tool("working_set", {"session": "s1", "text": json.dumps(DESIGN)})
        )
        assert made["fields"] == FIELDS
        shown = data(await session.call_tool("working_show", {"session": "s1"}))
        assert shown["working"]["fields"] == FIELDS and shown["working"]["stale"] is False
        other = await session.call_tool(
            "working_set", {"session": "s2", "text": json.dumps(DESIGN)}
        )
        assert other.is_error and "for session 's1'" in text_of(other)

    assert serve(vault_dir, check, tmp_path / "err.log") == []
    assert not (vault_dir / "working/s2.md").exists()
