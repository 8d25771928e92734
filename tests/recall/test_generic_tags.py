"""Generic tags link nothing, and `--explain` shows a spread as its own part (spread.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kenomem.api import Vault
from kenomem.recall.spread import GENERIC_TAG_SHARE, linking, spread
from tests.conftest import Cli, write
from tests.recall.helpers import memory_file, recall_settings


def _vault(vault_dir: Path, extra: int = 8, shared: str = "people, ops") -> None:
    """A zebracorn note and a Kafka one, both tagged `shared`: `people` (as consolidate
    tags an entry naming someone) and `ops`; `extra` other memories with neither."""
    notes = {
        "zebra": ("The zebracorn mascot was drawn by Lena", shared),
        "kafka": ("We discussed the Kafka migration", shared),
    }
    notes.update({f"other{i}": (f"Unrelated note number {i} about tea", "") for i in range(extra)})
    for name, (text, tags) in notes.items():
        write(
            vault_dir,
            f"episodic/{name}.md",
            memory_file(f"mem_{name}", text, text, tags=f"[{tags}]", type="episodic"),
        )
    recall_settings(vault_dir, feedback_words=0)


@pytest.mark.both_engines
def test_a_generic_tag_links_nothing(vault_dir: Path) -> None:
    _vault(vault_dir, shared="people")
    found = Vault(vault_dir).recall("zebracorn", touch=False).results
    assert [item.id for item in found] == ["mem_zebra"]


@pytest.mark.both_engines
def test_a_rare_tag_links(vault_dir: Path) -> None:
    _vault(vault_dir)
    found = Vault(vault_dir).recall("zebracorn", touch=False).results
    # linked by `ops` (2 of 10: a rare tag), never by `people`
    assert [item.id for item in found] == ["mem_zebra", "mem_kafka"]
    assert found[1].via == "tag ops"
    assert found[1].bm25 == 0 and found[1].spread > 0


@pytest.mark.both_engines
def test_a_tag_on_more_than_a_share_of_the_vault_links_nothing(vault_dir: Path) -> None:
    _vault(vault_dir, extra=3)  # `ops` on 2 of 5 memories: more than 20%
    found = Vault(vault_dir).recall("zebracorn", touch=False).results
    assert [item.id for item in found] == ["mem_zebra"]


def test_which_concepts_link() -> None:
    assert not linking("tag:people", 2, 1000)
    assert not linking("tag:summary", 2, 1000)
    assert linking("tag:kafka", 200, 1000) and not linking("tag:kafka", 201, 1000)
    assert linking("name:lena", 900, 1000)  # names are held to spread's own limits
    assert GENERIC_TAG_SHARE == 0.2
    passed = spread(
        [(("tag:people", "tag:ops", "name:lena"), 1.0)],
        {c: 2 for c in ("tag:people", "tag:ops", "name:lena")},
        10,
    )
    assert set(passed) == {"tag:ops", "name:lena"}


def test_explain_labels_the_spread_never_bm25(cli: Cli, vault_dir: Path) -> None:
    _vault(vault_dir)
    shown = cli("recall", "zebracorn", "--no-touch", "--explain")
    assert shown.code == 0
    lines = shown.out.splitlines()
    at = next(i for i, x in enumerate(lines) if "We discussed the Kafka migration" in x)
    explained = next(x for x in lines[at + 1 :] if "recency" in x)
    assert "(bm25 0.00, spread " in explained and " via tag ops," in explained
    doc = json.loads(cli("recall", "zebracorn", "--no-touch", "--json").out)
    linked = doc["results"][1]
    assert (linked["bm25"], linked["via"]) == (0.0, "tag ops")
    assert linked["spread"] > 0
