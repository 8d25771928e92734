"""`kenomem mcp`, driven over stdio by the MCP SDK's own client, as Claude Desktop would.

Each test starts the real server (`python -m kenomem mcp --vault ...`) on a fresh vault
and talks to it through `stdio_client` and `ClientSession`; anyio runs the coroutine
inside a plain test, so no async plugin is needed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError

from tests.conftest import REPO, write
from tests.helpers import vault_files
from tests.mcp_client import data, serve, text_of

pytestmark = pytest.mark.slow  # a real MCP server process per test

FOUNDATION_LINE = "Be honest about what you do not know."


def resource_text(result: types.ReadResourceResult) -> str:
    content = result.contents[0]
    assert isinstance(content, types.TextResourceContents)
    return content.text


def test_the_server_lists_its_tools_and_resources(vault_dir: Path, tmp_path: Path) -> None:
    settings = vault_dir / "kenomem.toml"
    settings.write_text(settings.read_text(encoding="utf-8") + "\n[bogus]\nx = 1\n")

    async def check(session: ClientSession) -> None:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert set(tools) == {
            "remember",
            "recall",
            "context",
            "forget",
            "log",
            "extract",
            "working_show",
            "working_set",
            "working_clear",
            "patterns",
        }
        for tool in tools.values():
            assert tool.description and len(tool.description) > 40
        remember = tools["remember"].input_schema
        assert remember["required"] == ["text"]
        importance = remember["properties"]["importance"]["anyOf"][0]
        assert (importance["minimum"], importance["maximum"]) == (1, 10)
        kinds = remember["properties"]["type"]["anyOf"][0]["enum"]
        assert kinds == ["semantic", "episodic", "procedural", "working"]
        limit = tools["recall"].input_schema["properties"]["limit"]["anyOf"][0]
        assert (limit["minimum"], limit["maximum"]) == (1, 100)
        assert "delete" not in tools["forget"].input_schema["properties"]
        resources = (await session.list_resources()).resources
        assert [str(r.uri) for r in resources] == ["kenomem://foundation"]
        templates = (await session.list_resource_templates()).resource_templates
        assert {t.uri_template for t in templates} == {
            "kenomem://working/{session}",
            "kenomem://memory/{id}",
        }

    # Nothing but protocol on stdout (a stray line would reach the client as an
    # exception); the warning about the settings went to stderr.
    errlog = tmp_path / "err.log"
    assert serve(vault_dir, check, errlog) == []
    assert "unknown section [bogus]" in errlog.read_text(encoding="utf-8")


def test_remember_recall_read_and_forget(vault_dir: Path, tmp_path: Path) -> None:
    async def check(session: ClientSession) -> None:
        result = await session.call_tool(
            "remember",
            {"text": "The ferry to Vis leaves at nine", "tags": ["travel"], "importance": 7},
        )
        stored = data(result)
        assert json.loads(text_of(result)) == stored  # the same document, for the model
        assert stored["action"] == "created"
        assert (vault_dir / stored["path"]).is_file()

        found = data(await session.call_tool("recall", {"query": "ferry", "limit": 5}))
        assert [hit["id"] for hit in found["results"]] == [stored["id"]]
        assert found["results"][0]["tags"] == ["travel"]

        # Hand edits made while the server runs are seen by the next call.
        write(vault_dir, "semantic/ferry-price.md", "# Ferry price\n\nThe ferry costs 5 euro.\n")
        found = data(await session.call_tool("recall", {"query": "ferry euro"}))
        assert "Ferry price" in [hit["title"] for hit in found["results"]]

        memory = await session.read_resource(f"kenomem://memory/{stored['id']}")
        assert "The ferry to Vis leaves at nine" in resource_text(memory)

        gone = data(await session.call_tool("forget", {"id": stored["id"]}))
        assert gone["action"] == "archived"
        assert gone["path"].startswith("archive/")
        assert (vault_dir / gone["path"]).is_file()
        assert not (vault_dir / stored["path"]).exists()
        found = data(await session.call_tool("recall", {"query": "Vis nine"}))
        assert stored["id"] not in [hit["id"] for hit in found["results"]]

    assert serve(vault_dir, check, tmp_path / "err.log") == []


def test_context_starts_with_the_foundation(vault_dir: Path, tmp_path: Path) -> None:
    async def check(session: ClientSession) -> None:
        data(await session.call_tool("remember", {"text": "The ferry leaves at nine"}))
        result = await session.call_tool("context", {"query": "ferry", "session": "s1"})
        assert not result.is_error, text_of(result)
        block = text_of(result)
        assert FOUNDATION_LINE in block
        assert "ferry leaves at nine" in block
        assert block.index(FOUNDATION_LINE) < block.index("ferry leaves at nine")

        foundation = await session.read_resource("kenomem://foundation")
        assert FOUNDATION_LINE in resource_text(foundation)

    assert serve(vault_dir, check, tmp_path / "err.log") == []


def test_log_appends_to_todays_buffer(vault_dir: Path, tmp_path: Path) -> None:
    async def check(session: ClientSession) -> None:
        for text in ("We chose Friday for the release", "And Monday for the retro"):
            logged = data(
                await session.call_tool(
                    "log", {"text": text, "session": "chat-42", "who": "Adrian"}
                )
            )
        today = datetime.now(UTC).date().isoformat()
        assert logged["path"] == f"buffer/{today}.md"
        day = (vault_dir / logged["path"]).read_text(encoding="utf-8")
        assert "We chose Friday for the release" in day
        assert day.index("Friday") < day.index("Monday")
        assert "Adrian @chat-42" in day

    assert serve(vault_dir, check, tmp_path / "err.log") == []


def test_working_memory_resource(vault_dir: Path, tmp_path: Path) -> None:
    async def check(session: ClientSession) -> None:
        empty = resource_text(await session.read_resource("kenomem://working/s1"))
        assert "no working memory" in empty.lower()
        data(
            await session.call_tool(
                "remember",
                {"text": "Task: migrate the blog to Hugo", "type": "working", "session": "s1"},
            )
        )
        working = resource_text(await session.read_resource("kenomem://working/s1"))
        assert "migrate the blog to Hugo" in working
        with pytest.raises(MCPError):
            await session.read_resource("kenomem://memory/mem_no_such_id")

    assert serve(vault_dir, check, tmp_path / "err.log") == []


BAD_CALLS = [
    (
        "remember",
        {"text": "Deploys on Tuesdays", "importance": 42},
        "invalid arguments for remember: argument importance must be at most 10 (got 42)",
    ),
    (
        "remember",
        {"text": "Deploys on Tuesdays", "type": "dream"},
        "argument type must be one of 'semantic', 'episodic', 'procedural' or 'working'",
    ),
    ("remember", {"text": ""}, "argument text must not be empty"),
    ("remember", {"text": "   "}, "nothing to remember"),
    ("remember", {}, "argument text is required"),
    ("remember", {"text": "x", "tags": ["ok", 7]}, "argument tags[1] must be a string (got 7)"),
    ("recall", {"query": "deploys", "limit": 0}, "argument limit must be at least 1 (got 0)"),
    (
        "recall",
        {"query": "q" * 2_001},
        "argument query must have at most 2,000 characters (got 2,001)",
    ),
    ("recall", {"query": "deploys", "since": "the day before"}, "the day before"),
    ("context", {"budget": -5}, "argument budget must be more than 0 (got -5)"),
    ("forget", {"id": "mem_no_such_id"}, "no memory matches"),
    ("log", {"text": "x", "session": "two\nlines"}, "session"),
]


def test_bad_input_is_a_tool_error_and_the_server_keeps_serving(
    vault_dir: Path, tmp_path: Path
) -> None:
    async def check(session: ClientSession) -> None:
        for name, arguments, says in BAD_CALLS:
            result = await session.call_tool(name, arguments)
            assert result.is_error, (name, arguments)
            assert says in text_of(result), text_of(result)
            # In words the model can act on: no validator's name or links.
            assert "pydantic" not in text_of(result) and "http" not in text_of(result)
        # The hint of a KenomemError comes with its message.
        unknown = await session.call_tool("forget", {"id": "mem_no_such_id"})
        assert "hint:" in text_of(unknown)
        stored = data(await session.call_tool("remember", {"text": "Deploys on Tuesdays"}))
        assert stored["action"] == "created"

    assert serve(vault_dir, check, tmp_path / "err.log") == []
    assert list((vault_dir / "semantic").glob("*.md")) != []


TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
HOSTILE_CALLS = [
    ("remember", {"text": "a \x00 b"}, "NUL byte"),
    ("remember", {"text": "red \x1b[31malert"}, "escape character"),
    ("remember", {"text": "A fact", "title": "bell\x07"}, "the title holds"),
    ("remember", {"text": "A fact", "tags": ["ok", "esc\x1b"]}, "the tag holds"),
    ("remember", {"text": "Task: x", "type": "working", "session": "s\x001"}, "NUL byte"),
    ("remember", {"text": "A fact", "scope": TOKEN}, "the scope looks like it holds a secret"),
    ("remember", {"text": "A fact", "session": TOKEN}, "the session id looks like"),
    ("remember", {"text": "the db is Postgres://admin:pw@db/app"}, "password in a URL"),
    ("remember", {"text": "DB_PASSWORD=hunter2 on staging"}, "secret"),
    ("log", {"text": "a \x00 b"}, "NUL byte"),
    ("log", {"text": "said", "channel": "tele\x1bgram"}, "the channel holds"),
    ("log", {"text": "said", "session": TOKEN}, "the session id looks like"),
    ("log", {"text": "said", "who": "AKIA" + "Q7XJ2M4K9P3W8R5T"}, "the who looks like"),
    ("log", {"text": "Authorization: Bearer abcDEF123456ghiJKL789"}, "authorization"),
]


def test_hostile_arguments_are_refused_and_nothing_is_written(
    vault_dir: Path, tmp_path: Path
) -> None:
    before = vault_files(vault_dir)

    async def check(session: ClientSession) -> None:
        for name, arguments, says in HOSTILE_CALLS:
            result = await session.call_tool(name, arguments)
            assert result.is_error, (name, arguments)
            assert says in text_of(result), text_of(result)
            assert TOKEN not in text_of(result)
        assert vault_files(vault_dir) == before
        stored = data(await session.call_tool("remember", {"text": "Deploys on Tuesdays"}))
        assert stored["action"] == "created"

    assert serve(vault_dir, check, tmp_path / "err.log") == []


def test_a_missing_vault_is_an_error_before_serving(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "kenomem", "mcp", "--vault", str(tmp_path / "nowhere")],
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    assert result.stdout == ""
    assert "no vault at" in result.stderr
    assert "Traceback" not in result.stderr
