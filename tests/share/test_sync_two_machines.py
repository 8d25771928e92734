"""Two clones of one vault, both busy, synced in turn through a bare remote: every memory
and buffer entry arrives once, counters add up, no conflict marker, doctor clean."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kenomem.files import buffer, fm
from kenomem.share.merge import MERGE_OF, REVIEW_TAG
from tests.share.helpers import MARKERS, git, kenomem, two_machines, vault_files

pytestmark = pytest.mark.slow


def remember(root: Path, env: dict[str, str], text: str, *more: str) -> str:
    done = kenomem(root, env, "remember", text, "--json", *more)
    return str(json.loads(done.stdout)["id"])


def memories(root: Path) -> dict[str, dict[str, object]]:
    """id -> frontmatter, for every memory file (each id must be in one file)."""
    found: dict[str, dict[str, object]] = {}
    for rel, text in vault_files(root).items():
        if rel.split("/")[0] not in ("semantic", "episodic", "procedural", "working", "archive"):
            continue
        parts = fm.split(text, rel)
        meta = fm.parse(parts.fm_text, path=rel)
        meta["_body"] = text[parts.body_start :]
        meta["_path"] = rel
        assert str(meta["id"]) not in found, f"{meta['id']} in two files"
        found[str(meta["id"])] = meta
    return found


def entries(root: Path) -> list[tuple[str, str]]:
    out = []
    for rel in buffer.days(root):
        day = buffer.read_day(root, rel)
        out += [(e.at.isoformat(), e.text) for e in day.entries]
    return out


def count(meta: dict[str, object]) -> int:
    return int(str(meta.get("access_count", 0)))


def test_two_machines_sync_without_conflict(tmp_path: Path) -> None:
    _, a, b, env = two_machines(tmp_path)
    deploy = remember(a, env, "Deploys run on Fridays after the standup")
    db = remember(a, env, "The staging database is postgres 15")
    remember(a, env, "The office plant needs water on Mondays")
    kenomem(a, env, "sync")
    kenomem(b, env, "sync")
    base = memories(b)
    assert set(base) == set(memories(a))

    # Both machines work on their own.
    for root, times in ((a, 2), (b, 3)):
        for _ in range(times):
            kenomem(root, env, "recall", "deploys fridays")
        kenomem(root, env, "recall", "staging database")
    for root, version in ((a, "16"), (b, "15.4")):
        path = root / str(base[db]["_path"])
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace("postgres 15", f"postgres {version}"), encoding="utf-8")
    newer = remember(a, env, "Deploys run on Thursdays after the standup", "--supersedes", deploy)
    only_b = remember(b, env, "The coffee machine is on the second floor")
    for root, texts in ((a, ("a one", "a two")), (b, ("b one",))):
        for text in texts:
            kenomem(root, env, "log", text)
    before = {"a": memories(a), "b": memories(b)}
    logged = entries(a) + entries(b)

    for _ in range(2):
        for root in (a, b, a, b):
            kenomem(root, env, "sync")

    assert vault_files(a) == vault_files(b)
    assert git(a, env, "rev-parse", "HEAD") == git(b, env, "rev-parse", "HEAD")
    for root in (a, b):
        for rel, text in vault_files(root).items():
            assert not MARKERS.search(text), rel
        assert git(root, env, "status", "--porcelain") == ""
    merged = memories(a)
    # Every memory of either side, once; and one review copy for the body both changed.
    copies = {i: m for i, m in merged.items() if m.get(MERGE_OF)}
    assert set(merged) - set(copies) == set(before["a"]) | set(before["b"])
    assert [str(m[MERGE_OF]) for m in copies.values()] == [db]
    copy = next(iter(copies.values()))
    assert REVIEW_TAG in list(copy["tags"])  # type: ignore[call-overload]
    # Neither edit is lost: ours (the machine that merged) stays, theirs is the copy.
    bodies = {str(merged[db]["_body"]), str(copy["_body"])}
    assert any("postgres 16" in body for body in bodies)
    assert any("postgres 15.4" in body for body in bodies)
    # Counters: both sides' increments over the base.
    for mem_id, meta in base.items():
        expected = count(before["a"][mem_id]) + count(before["b"][mem_id]) - count(meta)
        assert count(merged[mem_id]) == expected, mem_id
    assert count(merged[deploy]) > count(base[deploy])
    # The supersede made on a holds; b's touches of it are kept.
    assert merged[deploy]["status"] == "superseded"
    assert str(merged[deploy]["superseded_by"]) == newer
    assert only_b in merged and newer in merged
    # Buffer entries: each once, in time order.
    assert sorted(entries(a)) == sorted(logged)
    assert entries(a) == sorted(entries(a), key=lambda e: e[0])
    # The next command indexes what the pull brought.
    found = kenomem(a, env, "recall", "coffee machine", "--json", "--no-touch").stdout
    assert only_b in found
    found = kenomem(b, env, "recall", "Thursdays", "--json", "--no-touch").stdout
    assert newer in found
    # A file the pull changed is indexed again: b's index knew `deploy` as active.
    found = kenomem(b, env, "recall", "deploys fridays", "--json", "--no-touch").stdout
    assert deploy not in found
    listed = kenomem(b, env, "list", "--tag", REVIEW_TAG, "--json").stdout
    assert next(iter(copies)) in listed
    for root in (a, b):
        done = kenomem(root, env, "doctor", check=False)
        assert done.returncode == 0, done.stdout + done.stderr
