"""`kenomem import`: messages, conversations and memories from JSON or JSONL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kenomem import Vault
from kenomem.errors import InvalidInput
from kenomem.files.buffer import parse_day
from kenomem.ingest.forms import parse, time_of
from tests.conftest import Cli
from tests.sleep.helpers import of

MESSAGES = [
    {
        "role": "user",
        "content": "We moved the offsite to Lisbon",
        "timestamp": "2026-02-13T14:30:00Z",
    },
    {
        "role": "assistant",
        "content": [{"type": "text", "text": "Noted: Lisbon, not Porto."}],
        "timestamp": "2026-02-13T14:30:05Z",
    },
]

LOCOMO = {
    "sample_id": "conv-1",
    "conversation": {
        "speaker_a": "Caroline",
        "speaker_b": "Melanie",
        "session_2": [{"speaker": "Melanie", "dia_id": "D2:1", "text": "I painted a sunrise."}],
        "session_2_date_time": "8:00 pm on 9 May, 2023",
        "session_1": [
            {"speaker": "Caroline", "dia_id": "D1:1", "text": "I went to a support group."},
            {
                "speaker": "Melanie",
                "dia_id": "D1:2",
                "text": "",
                "blip_caption": "a photo of a dog on a beach",
            },
        ],
        "session_1_date_time": "1:56 pm on 8 May, 2023",
    },
    "qa": [{"question": "?", "answer": "!", "category": 1, "evidence": ["D1:1"]}],
}

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def jsonl(records: list[Any]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def memories(v: Vault, **filters: Any) -> list[Any]:
    return [v.show(item.id).memory for item in v.list(limit=None, **filters).memories]


def test_openai_messages_become_episodes(vault_dir: Path) -> None:
    v = Vault(vault_dir)
    result = v.import_file(text=json.dumps(MESSAGES), session="chat-42", tags=["offsite"])
    assert (result.format, result.created, result.skipped, result.invalid) == ("json", 2, 0, 0)
    mems = sorted(memories(v), key=lambda m: m.created)
    first, second = mems
    assert first.type == "episodic" and first.body.strip() == "user: We moved the offsite to Lisbon"
    assert second.body.strip() == "assistant: Noted: Lisbon, not Porto."
    assert first.when == first.created == datetime(2026, 2, 13, 14, 30, tzinfo=UTC)
    assert "\nparticipants: [user]\n" in (vault_dir / first.path).read_text()
    assert first.source == "import"
    assert (first.session, first.scope, first.tags) == ("chat-42", "chat-42", ("offsite",))
    assert v.recall("where is the offsite", limit=1).results[0].id in {m.id for m in mems}


def test_jsonl_turns_with_aliases_and_a_bad_line(vault_dir: Path) -> None:
    text = (
        '{"speaker": "Ana", "text": "Booked the hotel", "time": 1770993000, "thread": "t1"}\n'
        "{not json\n"
        "\n"
        '{"who": "Ben", "message": "Flight at 9", "date": "2026-02-14", "tags": ["travel"]}\n'
        '{"author": {"role": "user", "name": null}, "content": "hi", "created_at": "soon"}\n'
        '{"sender": "Cy", "text": "ok", "importance": 11}\n'
        '"just a string"\n'
    )
    result = Vault(vault_dir).import_file(text=text)
    assert (result.format, result.created, result.invalid) == ("jsonl", 2, 4)
    bad = {item.line: item.reason for item in result.items if item.action == "invalid"}
    assert set(bad) == {2, 5, 6, 7}
    assert "not JSON" in bad[2] and "time" in bad[5] and "importance" in bad[6]
    mems = {m.body.strip(): m for m in memories(Vault(vault_dir))}
    assert mems["Ana: Booked the hotel"].session == "t1"
    assert mems["Ben: Flight at 9"].tags == ("travel",)


def test_locomo_sessions_keep_their_dates_and_order(vault_dir: Path) -> None:
    v = Vault(vault_dir)
    result = v.import_file(text=json.dumps([LOCOMO]))
    assert result.created == 3 and result.invalid == 0
    by_source = {i.source_id: v.show(i.id).memory for i in result.items}
    assert list(by_source) == ["D1:1", "D1:2", "D2:1"]  # session_1 first, in order
    one, photo, two = by_source.values()
    assert one.created == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert photo.created == datetime(2023, 5, 8, 13, 56, 30, tzinfo=UTC)  # 30 s a turn
    assert two.when == datetime(2023, 5, 9, 20, 0, tzinfo=UTC)
    assert photo.body.lstrip() == "Melanie:\n\n[photo: a photo of a dog on a beach]\n"
    assert photo.title == "Melanie shared a photo"
    assert one.title == "I went to a support group." and one.scope == "conv-1"
    assert one.session == "conv-1/session_1" and one.extra["source_id"] == "D1:1"


def test_memories_round_trip_through_show_and_list_json(vault_dir: Path, tmp_path: Path) -> None:
    source = Vault(vault_dir)
    made = source.remember("Deploys go out on Tuesdays", tags=["work"], importance=7)
    shown = source.show(made.id).memory
    from kenomem.api import to_jsonable

    export = json.dumps(to_jsonable(shown))
    other = Vault(Vault.init(tmp_path / "other").path)  # a second vault
    first = other.import_file(text=export)
    assert first.created == 1 and first.items[0].id == made.id
    copy = other.show(made.id).memory
    assert (copy.type, copy.body, copy.tags, copy.importance) == (
        "semantic",
        shown.body,
        ("work",),
        7,
    )
    assert copy.created == shown.created
    listed = to_jsonable(source.list())
    again = other.import_file(text=json.dumps(listed))
    assert (again.created, again.skipped) == (0, 1)


def test_records_without_a_type_take_type_or_are_classified(vault_dir: Path) -> None:
    v = Vault(vault_dir)
    result = v.import_file(
        text=jsonl([{"text": "Prefers tea"}, {"body": "Likes long walks"}]), type="semantic"
    )
    assert result.created == 2
    assert {m.type for m in memories(v)} == {"semantic"}
    plain = v.import_file(text=jsonl([{"body": "Always run the tests before a deploy"}]))
    assert plain.created == 1


def test_importing_again_creates_nothing(vault_dir: Path) -> None:
    v = Vault(vault_dir)
    text = jsonl([*MESSAGES, {"text": "no time, no speaker"}, {"text": "no time, no speaker"}])
    first = v.import_file(text=text)
    assert first.created == 4  # two identical turns are two turns
    again = v.import_file(text=text)
    assert (again.created, again.skipped) == (0, 4)
    assert {i.reason for i in again.items} == {"already imported"}
    assert len(v.list(limit=None).memories) == 4
    locomo = json.dumps(LOCOMO)
    assert v.import_file(text=locomo).created == 3
    assert v.import_file(text=locomo).created == 0


def test_dry_run_counts_and_writes_nothing(vault_dir: Path) -> None:
    v = Vault(vault_dir)
    result = v.import_file(text=json.dumps(MESSAGES), dry_run=True)
    assert result.dry_run and result.created == 2
    assert {i.action for i in result.items} == {"would create"}
    assert not list((vault_dir / "episodic").rglob("*.md"))
    assert v.import_file(text=json.dumps(MESSAGES)).created == 2


def test_as_buffer_appends_to_the_days(vault_dir: Path) -> None:
    v = Vault(vault_dir)
    result = v.import_file(text=json.dumps(MESSAGES), target="buffer", session="chat-42")
    assert result.created == 2 and result.target == "buffer"
    rel = "buffer/2026-02-13.md"
    day = parse_day(rel, (vault_dir / rel).read_text(encoding="utf-8"))
    assert [(e.who, e.session, e.text) for e in day.entries] == [
        ("user", "chat-42", "We moved the offsite to Lisbon"),
        ("assistant", "chat-42", "Noted: Lisbon, not Porto."),
    ]
    assert not list((vault_dir / "episodic").rglob("*.md"))
    again = v.import_file(text=json.dumps(MESSAGES), target="buffer", session="chat-42")
    assert (again.created, again.skipped) == (0, 2)
    assert len(parse_day(rel, (vault_dir / rel).read_text(encoding="utf-8")).entries) == 2


def test_secrets_are_skipped_with_a_warning(cli: Cli, vault_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_text(jsonl([{"role": "user", "content": f"my token {TOKEN}"}, MESSAGES[0]]))
    done = cli("import", str(path), "--json")
    assert done.code == 0
    doc = json.loads(done.out)
    assert (doc["created"], doc["skipped"]) == (1, 1)
    assert "secret" in doc["items"][0]["reason"] and doc["items"][0]["line"] == 1
    assert "skipped line 1" in done.err and "GitHub token" in done.err
    assert TOKEN not in "".join(p.read_text() for p in vault_dir.rglob("*.md"))


def test_stdin_and_plain_output(cli: Cli) -> None:
    done = cli("import", "-", "--tag", "chat", input=jsonl(MESSAGES))
    assert done.code == 0, done.err
    assert done.out.startswith("created 2 memories, skipped 0, invalid 0")
    dry = cli("import", "-", "--dry-run", input=jsonl(MESSAGES))
    assert dry.out.startswith("would create 0 memories, skipped 2")


def test_errors(cli: Cli, tmp_path: Path) -> None:
    assert cli("import", str(tmp_path / "missing.json")).code == 1
    empty = tmp_path / "empty.json"
    empty.write_text("  \n")
    assert "empty" in cli("import", str(empty)).err
    broken = tmp_path / "broken.json"
    broken.write_text('[{"role": "user",\n "content": ]')
    done = cli("import", str(broken))
    assert done.code == 1 and "neither JSON nor JSONL" in done.err
    assert cli("import", str(broken), "--as", "semantic").code == 2  # a usage error


def test_times_as_exports_write_them() -> None:
    assert time_of("2026-02-13T14:30:00Z") == datetime(2026, 2, 13, 14, 30, tzinfo=UTC)
    assert time_of(1770993000) == time_of(1770993000000) == time_of("1770993000")
    assert time_of("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert time_of(None) is None
    with pytest.raises(ValueError):
        time_of("next tuesday-ish")


def test_parse_tells_the_forms_apart() -> None:
    kinds = [r.kind for r in parse(json.dumps({"messages": MESSAGES, "id": "c9"})).records]
    assert kinds == ["turn", "turn"]
    telegram = {
        "name": "Ana",
        "id": 7,
        "messages": [
            {"type": "message", "from": "Ana", "text": ["Hi ", {"type": "bold", "text": "there"}]}
        ],
    }
    record = parse(json.dumps(telegram)).records[0]
    assert (record.kind, record.context.conversation) == ("turn", "7")
    assert parse(json.dumps({"type": "semantic", "body": "x"})).records[0].kind == "memory"
    with pytest.raises(InvalidInput):
        parse("")


@pytest.mark.slow
def test_many_turns_in_one_index_batch(vault_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kenomem.vault.core import CoreVault

    batches: list[int] = []
    real = CoreVault.index_new_many

    def counted(self: CoreVault, written: list[Any]) -> None:
        batches.append(len(written))
        real(self, written)

    monkeypatch.setattr(CoreVault, "index_new_many", counted)
    turns = [
        {
            "role": "user",
            "content": f"note number {i} about the deploy",
            "timestamp": 1770000000 + i,
        }
        for i in range(1500)
    ]
    started = datetime.now(UTC)
    result = Vault(vault_dir).import_file(text=jsonl(turns))
    assert result.created == 1500 and batches == [1500]
    assert (datetime.now(UTC) - started).total_seconds() < 120
    assert len(Vault(vault_dir).list(limit=None).memories) == 1500


def test_a_real_process(vault_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([LOCOMO]))
    env = {**os.environ, "KENOMEM_VAULT": str(vault_dir)}
    run = subprocess.run(
        [sys.executable, "-m", "kenomem", "import", str(path), "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    assert doc["created"] == 3 and doc["format"] == "json"
    recall = subprocess.run(
        [sys.executable, "-m", "kenomem", "recall", "support group", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert json.loads(recall.stdout)["results"][0]["id"] == doc["items"][0]["id"]


def test_a_conversation_is_one_chat_whether_imported_or_logged(
    cli: Cli, vault_dir: Path, tmp_path: Path
) -> None:
    """`import` and `import --as buffer` of a LoCoMo file file its sessions in one chat,
    the conversation's, and the sleep cycle's episodes and summaries are that chat's."""
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(LOCOMO))
    assert cli("import", str(path)).code == 0
    assert {m["scope"] for m in of(vault_dir, type="episodic")} == {"conv-1"}
    assert cli("import", str(path), "--as", "buffer").code == 0
    logged = [
        e
        for rel in ("buffer/2023-05-08.md", "buffer/2023-05-09.md")
        for e in parse_day(rel, (vault_dir / rel).read_text(encoding="utf-8")).entries
    ]
    assert [(e.who, e.session) for e in logged] == [
        ("Caroline", "conv-1"),
        ("Melanie", "conv-1"),
        ("Melanie", "conv-1"),
    ]
    assert cli("consolidate").code == 0
    made = [m for m in of(vault_dir, type="episodic") if m["source"] == "consolidate"]
    assert made and {m["scope"] for m in made} == {"conv-1"}
    block = cli("context", "support group", "--session", "conv-1", "--json")
    assert "I went to a support group." in json.loads(block.out)["text"]
