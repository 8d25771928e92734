"""`[memory] default_importance`: a memory that does not say its importance gets the
vault's setting, through every door that writes one (remember, extract, working memory,
import of memories and of turns, the MCP tool), and what does say keeps its own."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from kenomem.api import Vault
from tests.conftest import Cli, write

DEFAULT = 8


@pytest.fixture
def vault_dir(vault_dir: Path) -> Path:
    """The test vault, its kenomem.toml setting `[memory] default_importance = 8`."""
    config = vault_dir / "kenomem.toml"
    text = config.read_text("utf-8")
    assert "# default_importance = 5" in text
    config.write_text(text.replace("# default_importance = 5", f"default_importance = {DEFAULT}"))
    return vault_dir


def importance(v: Vault, mem_id: str) -> int:
    """As the file says it, read back through `show`."""
    return v.show(mem_id).memory.importance


def test_remember_without_importance_takes_the_setting(vault_dir: Path) -> None:
    v = Vault(vault_dir)
    made = v.remember("Deploys go out on Tuesdays")
    assert importance(v, made.id) == DEFAULT
    assert "\nimportance: 8\n" in (vault_dir / made.path).read_text("utf-8")
    said = v.remember("The office closes at six", importance=3)
    assert importance(v, said.id) == 3


def test_remember_from_the_command_line(cli: Cli, vault_dir: Path) -> None:
    result = cli("remember", "The printer is on the second floor", "--json")
    assert result.code == 0, result.err
    made = json.loads(result.out)
    assert importance(Vault(vault_dir), made["id"]) == DEFAULT


def test_a_replacement_keeps_the_importance_of_what_it_replaces(vault_dir: Path) -> None:
    v = Vault(vault_dir)
    old = v.remember("The standup is at ten", importance=4)
    new = v.remember("The standup is at half past ten", supersedes=old.id)
    assert importance(v, new.id) == 4


def test_working_memory_and_extract_take_the_setting(vault_dir: Path) -> None:
    v = Vault(vault_dir)
    working = v.set_working("chat-1", "Drafting the release notes")
    assert importance(v, working.id) == DEFAULT
    reply = (
        "Sure. <memory>The user's cat is called Miso</memory> "
        '<memory importance="2">The user likes rain</memory>'
    )
    stored = {s.id: s for s in v.extract(reply).stored}
    assert sorted(importance(v, mem_id) for mem_id in stored) == [2, DEFAULT]


def test_import_of_memories_and_of_turns_takes_the_setting(vault_dir: Path) -> None:
    v = Vault(vault_dir)
    records = [
        {"type": "semantic", "text": "Prefers tea to coffee"},
        {"type": "semantic", "text": "Lives in Porto", "importance": 3},
    ]
    made = v.import_file(text=json.dumps(records))
    assert made.created == 2
    assert [importance(v, item.id) for item in made.items] == [DEFAULT, 3]
    turns = [
        {"role": "user", "content": "We moved the offsite to Lisbon"},
        {"role": "assistant", "content": "Noted", "importance": 6},
    ]
    said = v.import_file(text=json.dumps(turns), session="chat-2")
    assert said.created == 2
    assert [importance(v, item.id) for item in said.items] == [DEFAULT, 6]


def test_a_hand_written_file_without_importance_takes_the_setting(vault_dir: Path) -> None:
    write(vault_dir, "semantic/by-hand.md", "# By hand\n\nWritten in an editor.\n")
    v = Vault(vault_dir)
    found = v.recall("written in an editor", limit=1).results
    assert found and importance(v, found[0].id) == DEFAULT


def test_the_mcp_tool_takes_the_setting(vault_dir: Path) -> None:
    pytest.importorskip("mcp")
    from kenomem.mcp_server import build_server

    v = Vault(vault_dir, source="mcp")
    server = build_server(v)

    async def main() -> object:
        return await server.call_tool("remember", {"text": "The wifi password changes monthly"})

    anyio.run(main)
    listed = v.list(limit=None).memories
    assert [importance(v, m.id) for m in listed] == [DEFAULT]
