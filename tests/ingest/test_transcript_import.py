"""`kenomem import` of the agents' histories: Claude Code and Codex sessions, ChatGPT and
Claude.ai exports, a folder of them; incremental, idempotent, and safe on hostile input."""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kenomem import Vault
from kenomem.files.buffer import append, day_path, format_entry, read_day
from kenomem.ingest.transcripts import Turn, entry_of, project_scope
from tests.adversarial.hostile import secret_found
from tests.conftest import Cli
from tests.helpers import finish, start, vault_files

DATA = Path(__file__).parent.parent / "data" / "agents"
HARBOR = "/home/dana/code/harbor"
CC_SESSION = "5f1c2a9e-7b3d-4e8a-9c61-2d4f8b0e1a37"
TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
SAMPLES = {
    "claude-code.jsonl": ("claude-code", 4),
    "codex-rollout.jsonl": ("codex", 2),
    "chatgpt-conversations.json": ("chatgpt", 6),
    "claude-ai-conversations.json": ("claude-ai", 3),
}


def imported(cli: Cli, *args: str) -> dict[str, Any]:
    result = cli("import", *args, "--json")
    assert result.code == 0, result.err
    document: dict[str, Any] = json.loads(result.out)
    return document


def counts(document: dict[str, Any]) -> tuple[int, int, int]:
    return document["created"], document["skipped"], document["invalid"]


def entries(vault_dir: Path) -> list[Any]:
    found = []
    for day in sorted((vault_dir / "buffer").glob("*.md")):
        found += read_day(vault_dir, f"buffer/{day.name}").entries
    return found


def cc_line(uuid: str, text: str, at: str, kind: str = "user", **extra: Any) -> str:
    content: Any = text if kind == "user" else [{"type": "text", "text": text}]
    line = {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": HARBOR,
        "sessionId": CC_SESSION,
        "version": "1.0.51",
        "type": kind,
        "message": {"role": kind, "content": content},
        "uuid": uuid,
        "timestamp": at,
    }
    line.update(extra)
    return json.dumps(line) + "\n"


def test_each_format_is_told_by_content_and_imported_once(cli: Cli, vault_dir: Path) -> None:
    for name, (format, turns) in SAMPLES.items():
        first = imported(cli, str(DATA / name), "--as", "buffer")
        assert (first["format"], *counts(first)) == (format, turns, 0, 0), name
        again = imported(cli, str(DATA / name), "--as", "buffer")
        assert counts(again) == (0, turns, 0), name
    said = {(e.channel, e.who, e.text.split()[0]) for e in entries(vault_dir)}
    assert len(said) == sum(n for _, n in SAMPLES.values())
    # Tool noise, thinking, preambles, the other branch, hidden and tool messages: out.
    text = " ".join(e.text for e in entries(vault_dir))
    for noise in ("#!/bin/sh", "environment_context", "About 4 hours", "print(70)", "results"):
        assert noise not in text


def test_where_the_turns_go(cli: Cli, vault_dir: Path) -> None:
    imported(cli, str(DATA / "claude-code.jsonl"), "--as", "buffer")
    imported(cli, str(DATA / "chatgpt-conversations.json"), "--as", "buffer")
    day = read_day(vault_dir, "buffer/2025-06-03.md")
    first = day.entries[0]
    assert (first.at, first.who, first.session, first.channel) == (
        datetime(2025, 6, 3, 9, 15, 40, tzinfo=UTC),
        "user",
        project_scope(HARBOR),
        "claude-code",
    )
    assert first.session.startswith("harbor-")
    chats = {e.session for e in entries(vault_dir) if e.channel == "chatgpt"}
    assert chats == {"6a1f9c2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b", "7b2e0d3f-4c5e-4f60-9bac-1d2e3f4a5b6c"}


def test_episodes_keep_the_project_and_the_message_id(vault_dir: Path) -> None:
    v = Vault(vault_dir)
    result = v.import_file(DATA / "claude-code.jsonl", tags=["harbor"])
    assert (result.format, result.created) == ("claude-code", 4)
    mems = [v.show(item.id).memory for item in v.list(limit=None).memories]
    scope = project_scope(HARBOR)
    assert {m.scope for m in mems} == {scope}
    assert {m.session for m in mems} == {f"{scope}/{CC_SESSION}"}
    first = min(mems, key=lambda m: m.created)
    assert first.body.strip().startswith("user: The deploy script")
    assert first.extra["source_id"] == "a7e0c3d1-0000-4000-8000-000000000003"
    assert first.tags == ("harbor",)
    assert {i.source_id for i in result.items} >= {"a7e0c3d1-0000-4000-8000-000000000003"}
    assert v.import_file(DATA / "claude-code.jsonl").created == 0


def test_a_grown_transcript_adds_only_its_new_turns(cli: Cli, tmp_path: Path) -> None:
    session = tmp_path / "session.jsonl"
    shutil.copy(DATA / "claude-code.jsonl", session)
    for target in ("episodic", "buffer"):
        assert counts(imported(cli, str(session), "--as", target))[0] == 4
    with session.open("a") as f:
        f.write(
            cc_line(
                "b0000000-0000-4000-8000-000000000001", "Ship it on Friday.", "2025-06-03T10:00:00Z"
            )
        )
        f.write(
            cc_line(
                "b0000000-0000-4000-8000-000000000002",
                "Shipped.",
                "2025-06-03T10:00:05Z",
                "assistant",
            )
        )
    for target in ("episodic", "buffer"):
        assert counts(imported(cli, str(session), "--as", target)) == (2, 4, 0)


def test_a_turn_the_hook_logged_is_not_imported_again(vault: Any, cli: Cli) -> None:
    turn = Turn(
        "a7e0c3d1-0000-4000-8000-000000000003",
        CC_SESSION,
        "user",
        "The deploy script in scripts/deploy.sh gives up after one failed health check. We "
        "always deploy harbor to the staging cluster first; make it retry three times.",
        datetime(2025, 6, 3, 9, 15, 40, 512000, tzinfo=UTC),
        HARBOR,
    )
    entry = entry_of(turn, project_scope(HARBOR), "claude-code")  # as the hook logs it
    with vault.lock:
        append(vault.root, day_path(entry.at.date()), format_entry(entry).encode())
    assert counts(imported(cli, str(DATA / "claude-code.jsonl"), "--as", "buffer")) == (3, 1, 0)


def test_a_folder_of_transcripts(cli: Cli, vault_dir: Path, tmp_path: Path) -> None:
    top = tmp_path / "projects"
    (top / "-home-dana-code-harbor").mkdir(parents=True)
    shutil.copy(DATA / "claude-code.jsonl", top / "-home-dana-code-harbor" / f"{CC_SESSION}.jsonl")
    deep = top / "sessions" / "2025" / "09" / "14"
    deep.mkdir(parents=True)
    shutil.copy(DATA / "codex-rollout.jsonl", deep / "rollout-2025-09-14T18-02-11-0197a2b4.jsonl")
    (top / "notes.json").write_text('{"not": "a transcript"}')
    (top / "README.md").write_text("left alone")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.jsonl").write_text(
        cc_line("c0000000-0000-4000-8000-000000000001", "outside words", "2025-06-04T10:00:00Z")
    )
    os.symlink(outside / "secret.jsonl", top / "linked.jsonl")
    os.symlink(outside, top / "linked-folder")
    os.mkfifo(top / "pipe.jsonl")
    document = imported(cli, str(top), "--as", "buffer")
    assert (document["format"], *counts(document)) == ("folder", 6, 0, 0)
    assert any("left out 1 file" in w for w in document["warnings"])
    wheres = {item["where"] for item in document["items"]}
    assert f"-home-dana-code-harbor/{CC_SESSION}.jsonl, line 4" in wheres
    assert "outside words" not in " ".join(e.text for e in entries(vault_dir))
    again = imported(cli, str(top), "--as", "buffer")
    assert counts(again) == (0, 6, 0)


def test_hostile_transcript_lines(cli: Cli, vault_dir: Path, tmp_path: Path) -> None:
    session = tmp_path / "hostile.jsonl"
    lines = [
        cc_line("d0000000-0000-4000-8000-000000000001", "fine words", "2025-06-05T10:00:00Z"),
        '{"broken": \n',
        "x" * 3_000_000 + "\n",  # a huge line that is no JSON
        cc_line("d0000000-0000-4000-8000-000000000002", "y" * 200_000, "2025-06-05T10:00:01Z"),
        cc_line("d0000000-0000-4000-8000-000000000003", "nul \x00 byte", "2025-06-05T10:00:02Z"),
        cc_line("d0000000-0000-4000-8000-000000000004", "esc \x1b[2J", "2025-06-05T10:00:03Z"),
        cc_line(
            "d0000000-0000-4000-8000-000000000005", f"my token {TOKEN}", "2025-06-05T10:00:04Z"
        ),
        cc_line("d0000000-0000-4000-8000-000000000006", "no time", "not a time"),
        cc_line("d0000000-0000-4000-8000-000000000007", "more fine words", "2025-06-05T10:00:05Z"),
    ]
    session.write_text("".join(lines))
    for target in ("buffer", "episodic"):
        document = imported(cli, str(session), "--as", target)
        assert counts(document) == (2, 1, 6), target
        reasons = {item["where"]: item["reason"] for item in document["items"]}
        assert "not JSON" in reasons["line 2"] and "not JSON" in reasons["line 3"]
        assert "secret" in reasons["line 7"] and TOKEN not in json.dumps(document)
        assert "NUL" in reasons["line 5"]
    assert secret_found(vault_dir, [TOKEN, "\x1b[2J"]) == []
    assert not [rel for rel, data in vault_files(vault_dir).items() if b"\x00" in data]
    assert {e.text for e in entries(vault_dir)} == {"fine words", "more fine words"}


def test_a_real_process_imports_a_folder(vault_dir: Path, tmp_path: Path) -> None:
    top = tmp_path / "exports"
    top.mkdir()
    for name in SAMPLES:
        shutil.copy(DATA / name, top / name)
    code, out, err = finish(start(vault_dir, "import", str(top), "--as", "buffer", "--json"))
    assert code == 0, err
    assert counts(json.loads(out)) == (15, 0, 0)
    code, out, err = finish(start(vault_dir, "import", str(top / "chatgpt-conversations.json")))
    assert code == 0 and out.startswith("created 6 memories"), (out, err)
