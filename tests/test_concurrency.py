"""Several kenomem processes on one vault at once: nothing is lost, nothing is doubled."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import write
from tests.helpers import finish, memory_ids, start

# Each text holds `topicN` (one distinct word) and the word `topic` that recall looks for.
NAMES = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]


def strict_json(text: str) -> Any:
    def reject(constant: str) -> None:
        raise AssertionError(f"not strict JSON: {constant}")

    return json.loads(text, parse_constant=reject)


def test_eight_concurrent_remembers_all_land(vault_dir: Path) -> None:
    texts = [
        f"distinct fact number {n} about topic{n}, a topic called {NAMES[n - 1]}"
        for n in range(1, 9)
    ]
    processes = [start(vault_dir, "remember", text, "--json") for text in texts]
    results = [finish(p) for p in processes]
    for code, _out, err in results:
        assert code == 0, err
        assert "Traceback" not in err
    reported = [strict_json(out) for _, out, _ in results]
    assert [doc["action"] for doc in reported] == ["created"] * 8
    assert len({doc["id"] for doc in reported}) == 8

    on_disk = memory_ids(vault_dir)
    assert len(on_disk) == 8, sorted(on_disk)
    assert len(set(on_disk.values())) == 8
    assert set(on_disk.values()) == {doc["id"] for doc in reported}
    for doc, text in zip(reported, texts, strict=True):
        assert text in (vault_dir / doc["path"]).read_text(encoding="utf-8")

    code, out, err = finish(start(vault_dir, "recall", "topic", "--json", "--limit", "20"))
    assert code == 0, err
    found = strict_json(out)["results"]
    assert sorted(r["id"] for r in found) == sorted(on_disk.values())


def test_recalls_while_another_process_remembers(vault_dir: Path) -> None:
    for n, name in enumerate(("north", "south"), 1):
        write(
            vault_dir,
            f"semantic/harbour-{name}.md",
            f"---\nid: mem_20260101_00000{n}_abcd\ntype: semantic\ntitle: Harbour {name}\n---\n\n"
            f"The {name} harbour gate opens at {n + 5}.\n",
        )
    readers = [start(vault_dir, "recall", "harbour", "--json") for _ in range(2)]
    writer = start(vault_dir, "remember", "The harbour ferry leaves at nine", "--json")
    written = finish(writer)
    read = [finish(p) for p in readers]

    assert written[0] == 0, written[2]
    new_id = strict_json(written[1])["id"]
    for code, out, err in read:
        assert code == 0, err
        assert "Traceback" not in err
        ids = {r["id"] for r in strict_json(out)["results"]}
        assert {"mem_20260101_000001_abcd", "mem_20260101_000002_abcd"} <= ids
        assert ids <= {"mem_20260101_000001_abcd", "mem_20260101_000002_abcd", new_id}

    code, out, err = finish(start(vault_dir, "recall", "harbour", "--json"))
    assert code == 0, err
    assert len(strict_json(out)["results"]) == 3
    assert len(memory_ids(vault_dir)) == 3


def test_processes_starting_together_on_a_new_vault_build_the_index_once(
    vault_dir: Path,
) -> None:
    """The first process builds the index; the others use it instead of rebuilding it."""
    for n in range(30):
        write(
            vault_dir,
            f"semantic/cat-{n}.md",
            f"---\nid: mem_20260101_0000{n:02d}_abcd\n---\n\nfact {n} about cats\n",
        )
    listers = [start(vault_dir, "list", "--json", "--limit", "100") for _ in range(5)]
    for code, out, err in (finish(p) for p in listers):
        assert code == 0, err
        assert strict_json(out)["total"] == 30
        assert "rebuilt the index" not in err
