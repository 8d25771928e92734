"""The loop an agent runs, over one real `kenomem mcp` session on stdio: context, recall,
remember, log, extract, the working memory and the patterns a message triggers; and
hostile arguments to the tools of that loop, each answered with a clean tool error."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from mcp.client.session import ClientSession

from tests.conftest import REPO, write
from tests.helpers import vault_files
from tests.mcp_client import data, serve, text_of

pytestmark = pytest.mark.slow  # a real MCP server process per test

PATTERN = (
    "---\n"
    "id: mem_pattern_401\n"
    "type: procedural\n"
    "title: When n8n answers 401\n"
    "created: 2026-03-02T09:05:00Z\n"
    "importance: 6\n"
    "status: active\n"
    "trigger: n8n + 401\n"
    "---\n\n"
    "Check the n8n credential first: the token expires every 30 days.\n"
)


def test_the_whole_loop_in_one_session(vault_dir: Path, tmp_path: Path) -> None:
    write(vault_dir, "procedural/n8n-401.md", PATTERN)

    async def check(session: ClientSession) -> None:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        for name in ("working_show", "patterns"):
            assert tools[name].annotations and tools[name].annotations.read_only_hint
        assert tools["working_set"].annotations
        assert tools["working_set"].annotations.destructive_hint
        assert tools["working_set"].input_schema["required"] == ["session", "text"]

        # 1. context at the start of the task
        block = await session.call_tool("context", {"query": "n8n webhook", "session": "c1"})
        assert not block.is_error, text_of(block)

        # 2. recall, 3. remember, then recall finds it
        found = data(await session.call_tool("recall", {"query": "webhook"}))
        assert found["results"] == []
        stored = data(
            await session.call_tool("remember", {"text": "The n8n webhook lives on port 5678"})
        )
        found = data(await session.call_tool("recall", {"query": "webhook"}))
        assert [hit["id"] for hit in found["results"]] == [stored["id"]]

        # 4. log a turn
        logged = data(
            await session.call_tool(
                "log", {"text": "n8n says 401 on the webhook", "session": "c1", "who": "Ana"}
            )
        )
        assert logged["path"] == f"buffer/{datetime.now(UTC).date().isoformat()}.md"

        # 5. extract: the reply without its tags, and what was stored
        reply = (
            "The token expired. <memory>The n8n credential token expires every 30 days"
            "</memory>\n<working-memory>Task: fix the n8n webhook\nPending: renew token"
            "</working-memory>\nRenew it in the credentials page."
        )
        extracted = data(await session.call_tool("extract", {"reply": reply, "session": "c1"}))
        assert "<memory>" not in extracted["text"]
        assert "The token expired." in extracted["text"]
        assert "Renew it in the credentials page." in extracted["text"]
        assert sorted(s["type"] for s in extracted["stored"]) == ["semantic", "working"]
        assert extracted["problems"] == []
        for item in extracted["stored"]:
            assert (vault_dir / item["path"]).is_file()

        # 6. the working memory: extract set it; show, set, show, clear, show
        shown = data(await session.call_tool("working_show", {"session": "c1"}))
        assert shown["working"]["fields"]["task"] == "fix the n8n webhook"
        assert not shown["working"]["stale"]
        done = data(
            await session.call_tool(
                "working_set", {"session": "c1", "text": "Task: ship it\nPending:\n- tests\n- docs"}
            )
        )
        assert done["action"] == "updated"
        assert done["fields"]["pending"] == ["tests", "docs"]
        shown = data(await session.call_tool("working_show", {"session": "c1"}))
        assert shown["working"]["fields"]["task"] == "ship it"
        cleared = data(await session.call_tool("working_clear", {"session": "c1"}))
        assert cleared["cleared"] and cleared["path"].startswith("archive/")
        assert not (vault_dir / done["path"]).exists()
        shown = data(await session.call_tool("working_show", {"session": "c1"}))
        assert shown == {"session": "c1", "working": None}
        again = data(await session.call_tool("working_clear", {"session": "c1"}))
        assert again["cleared"] is False

        # 7. the patterns a message triggers, and all of them without one
        hit = data(await session.call_tool("patterns", {"message": "n8n gives me a 401 again"}))
        assert [p["id"] for p in hit["patterns"]] == ["mem_pattern_401"]
        assert "credential" in hit["patterns"][0]["text"]
        miss = data(await session.call_tool("patterns", {"message": "lunch at noon?"}))
        assert miss["patterns"] == []
        every = data(await session.call_tool("patterns", {}))
        assert [p["id"] for p in every["patterns"]] == ["mem_pattern_401"]
        assert every["message"] is None

        # ... and the context of a later message brings the stored fact and the pattern
        block = await session.call_tool(
            "context", {"query": "n8n 401 on the webhook", "session": "c1"}
        )
        assert "port 5678" in text_of(block)

    errlog = tmp_path / "err.log"
    assert serve(vault_dir, check, errlog) == []
    assert "Traceback" not in errlog.read_text(encoding="utf-8")


TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
HUGE = "x" * 100_001
HOSTILE_CALLS = [
    ("extract", {"reply": "<memory>a</memory>", "session": "two\nlines"}, "session"),
    ("extract", {"reply": "plain", "session": "s\x001"}, "NUL byte"),
    ("extract", {"reply": "plain", "session": TOKEN}, "the session id looks like"),
    ("extract", {"reply": "plain", "session": "x" * 129}, "session"),
    ("extract", {"reply": HUGE}, "reply"),
    ("extract", {"reply": ""}, "reply"),
    ("working_show", {"session": "a\x1b[31m"}, "escape character"),
    ("working_show", {"session": ""}, "session"),
    ("working_show", {}, "session"),
    ("working_set", {"session": "c1", "text": "Task: a \x00 b"}, "NUL byte"),
    ("working_set", {"session": "c1", "text": HUGE}, "text"),
    ("working_set", {"session": TOKEN, "text": "Task: x"}, "the session id looks like"),
    ("working_set", {"session": "c1", "text": "DB_PASSWORD=hunter2 now"}, "secret"),
    ("working_clear", {"session": "bell\x07"}, "the session id holds"),
    ("patterns", {"message": "a \x00 b"}, "NUL byte"),
    ("patterns", {"message": "   "}, "the message is empty"),
    ("patterns", {"message": HUGE}, "message"),
    ("patterns", {"message": 42}, "message"),
]


def test_hostile_arguments_to_the_loop_are_clean_errors(vault_dir: Path, tmp_path: Path) -> None:
    before = vault_files(vault_dir)

    async def check(session: ClientSession) -> None:
        for name, arguments, says in HOSTILE_CALLS:
            result = await session.call_tool(name, arguments)
            assert result.is_error, (name, arguments)
            message = text_of(result)
            assert says in message, (name, message)
            assert TOKEN not in message
            assert "Traceback" not in message
            assert "unexpected" not in message, message
            assert len(message) < 2_000
        assert vault_files(vault_dir) == before
        # The server still serves.
        stored = data(await session.call_tool("working_set", {"session": "c1", "text": "x"}))
        assert stored["action"] == "created"

    errlog = tmp_path / "err.log"
    assert serve(vault_dir, check, errlog) == []
    assert "Traceback" not in errlog.read_text(encoding="utf-8")


def test_a_bad_setting_in_the_environment_stops_the_server_cleanly(vault_dir: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "kenomem", "mcp", "--vault", str(vault_dir)],
        cwd=REPO,
        env={**os.environ, "KENOMEM_RECALL_LIMIT": "ten"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    assert result.stdout == ""
    assert "KENOMEM_RECALL_LIMIT='ten': expected an int" in result.stderr
    assert "Traceback" not in result.stderr
