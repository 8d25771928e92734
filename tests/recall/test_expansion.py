"""Words added to a query: pseudo-relevance feedback, the language model's words (off
unless asked for, cached), and names with a slip of the keyboard."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from kenomem.api import Vault
from kenomem.index import Doc, Hit, SearchResult
from kenomem.recall.expansion import feedback_words, merge
from kenomem.recall.query_llm import parse_words
from kenomem.recall.rerank import named_people
from tests.recall.helpers import recall_settings


def _doc(doc_id: str, text: str, people: tuple[str, ...] = ()) -> Doc:
    return Doc(
        doc_id, "", "semantic", "active", "global", "", (), "", 0.0, 0.0, 0.0, 0.0, 0, 0, 5,
        False, preview=text, people=people,
    )  # fmt: skip


def _analyze(text: str) -> list[str]:
    return [w for w in text.lower().split() if w not in {"the", "a", "and"}]


def test_feedback_words_are_shared_by_the_top_hits_and_rare_in_the_vault() -> None:
    hits = [
        Hit(_doc("a", "the cat Bailey and the garden"), 9.0),
        Hit(_doc("b", "Bailey the cat likes the garden sun"), 8.0),
        Hit(_doc("c", "a cat video"), 7.0),
    ]
    frequency = {"bailey": 3, "garden": 400}
    words = feedback_words(
        ["cat"], hits, _analyze, lambda ts: ({t: frequency.get(t, 0) for t in ts}, 1000)
    )
    assert words[:2] == ["bailey", "garden"]
    assert "cat" not in words and "likes" not in words  # a query word; one hit's word


def test_no_feedback_without_hits() -> None:
    assert feedback_words(["cat"], [], _analyze, lambda ts: ({}, 10)) == []


def test_merge_adds_a_share_of_the_second_search() -> None:
    first = SearchResult([Hit(_doc("a", ""), 4.0), Hit(_doc("b", ""), 3.0)], ("x",), 2)
    second = SearchResult([Hit(_doc("b", ""), 10.0), Hit(_doc("c", ""), 2.0)], ("y",), 2)
    merged = merge(first, second, 0.5)
    assert [(h.doc.id, h.score) for h in merged.hits] == [("b", 8.0), ("a", 4.0), ("c", 1.0)]
    assert merged.terms == ("x",) and merged.total == 3


def _pets(vault_dir: Path) -> None:
    notes = {
        "a.md": "Our cat Bailey sleeps in the garden all afternoon.",
        "b.md": "Bailey the cat caught a mouse in the garden.",
        "c.md": "Took bailey to the groomer on Monday.",
        "d.md": "The deploy pipeline runs on the staging cluster.",
        "e.md": "Prefers green tea to coffee.",
        "f.md": "The quarterly report is due on the fifth.",
    }
    for name, text in notes.items():
        (vault_dir / "semantic" / name).write_text(text + "\n", encoding="utf-8")


@pytest.mark.both_engines
def test_feedback_finds_a_memory_in_other_words(vault_dir: Path) -> None:
    _pets(vault_dir)
    recall_settings(vault_dir, spread_share=0, feedback_words=5)
    found = [r.path for r in Vault(vault_dir).recall("cat", touch=False).results]
    assert found[:2] == ["semantic/a.md", "semantic/b.md"] or found[:2] == [
        "semantic/b.md",
        "semantic/a.md",
    ]
    assert "semantic/c.md" in found


def test_feedback_is_off_by_default(vault_dir: Path) -> None:
    _pets(vault_dir)
    recall_settings(vault_dir, spread_share=0)
    found = [r.path for r in Vault(vault_dir).recall("cat", touch=False).results]
    assert sorted(found) == ["semantic/a.md", "semantic/b.md"]


def test_long_queries_get_no_feedback(vault_dir: Path) -> None:
    _pets(vault_dir)
    recall_settings(vault_dir, spread_share=0, feedback_words=5, feedback_max_terms=1)
    found = [r.path for r in Vault(vault_dir).recall("cat garden", touch=False).results]
    assert "semantic/c.md" not in found


def test_a_name_with_one_slip_still_routes_to_the_person() -> None:
    doc = _doc("x", "", people=("Caroline", "Melanie Jones"))
    assert named_people("what did Carolin paint", [doc]) == {"Caroline"}
    assert named_people("what did melanei say", [doc]) == {"Melanie Jones"}
    assert named_people("what did Caroline and Melany say", [doc]) == {"Caroline"}  # exact wins
    assert named_people("what did Carl say", [doc]) == frozenset()
    assert named_people("the carolina coast", [doc]) == {"Caroline"}  # one letter off
    assert named_people("the karoline coast", [doc]) == frozenset()  # the first letter counts


# -- query expansion by a language model ------------------------------------------------

FAKE = """
import json, sys
from pathlib import Path
here = Path(__file__).parent
prompt = sys.stdin.read()
runs = here / "runs.txt"
runs.write_text((runs.read_text() if runs.exists() else "") + "x")
mode = (here / "mode.txt").read_text().strip()
if mode == "fail":
    sys.exit(3)
print("```json" if mode == "fenced" else "", flush=True)
print(json.dumps(["groomer", "vet"]) if mode != "prose" else "I think groomer and vet.")
print("```" if mode == "fenced" else "")
"""


def _fake(tmp_path: Path, mode: str) -> tuple[str, Path]:
    folder = tmp_path / "fake"
    folder.mkdir(exist_ok=True)
    (folder / "fake.py").write_text(FAKE, "utf-8")
    (folder / "mode.txt").write_text(mode, "utf-8")
    return shlex.join([sys.executable, str(folder / "fake.py")]), folder / "runs.txt"


def _llm_vault(vault_dir: Path, command: str, on: bool = True) -> Vault:
    notes = {
        "a.md": "Adopted a kitten from the shelter.",
        "b.md": "The groomer trims her claws every month.",
        "c.md": "The deploy pipeline runs on the staging cluster.",
    }
    for name, text in notes.items():
        (vault_dir / "semantic" / name).write_text(text + "\n", encoding="utf-8")
    recall_settings(
        vault_dir,
        spread_share=0,
        feedback_words=0,
        llm_expand=on,
        expand_command=json.dumps(command),
    )
    return Vault(vault_dir)


@pytest.mark.parametrize("mode", ["plain", "fenced"])
def test_llm_words_bring_memories_and_are_asked_once(
    vault_dir: Path, tmp_path: Path, mode: str
) -> None:
    command, runs = _fake(tmp_path, mode)
    v = _llm_vault(vault_dir, command)
    for _ in range(2):
        found = [r.path for r in v.recall("kitten", touch=False).results]
        assert found == ["semantic/a.md", "semantic/b.md"]
    assert runs.read_text() == "x"  # the second recall used the cache
    cached = list((vault_dir / ".kenomem" / "expansions").glob("*.json"))
    assert len(cached) == 1 and json.loads(cached[0].read_text())["words"] == ["groomer", "vet"]


def test_llm_expansion_is_off_unless_asked_for(vault_dir: Path, tmp_path: Path) -> None:
    command, runs = _fake(tmp_path, "plain")
    v = _llm_vault(vault_dir, command, on=False)
    assert [r.path for r in v.recall("kitten", touch=False).results] == ["semantic/a.md"]
    assert not runs.exists()


@pytest.mark.parametrize("mode", ["fail", "prose"])
def test_a_failing_model_costs_a_warning_only(vault_dir: Path, tmp_path: Path, mode: str) -> None:
    command, runs = _fake(tmp_path, mode)
    v = _llm_vault(vault_dir, command)
    result = v.recall("kitten", touch=False)
    assert [r.path for r in result.results] == ["semantic/a.md"]
    assert any("query expansion" in w for w in result.warnings)
    v.recall("kitten", touch=False)
    assert runs.read_text() == "xx"  # a failure is not cached: the next recall asks again


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('["a", "b c"]', ["a", "b c"]),
        ('Sure!\n```json\n["x"]\n```', ["x"]),
        ('["  spaced   out  ", "", 3]', ["spaced out", "3"]),
        ("no list here", None),
        ('{"words": 1}', None),
        ('["a", ', None),
    ],
)
def test_parse_words(text: str, words: list[str] | None) -> None:
    assert parse_words(text) == words


def test_proximity_counts_the_query_pairs_that_stand_together() -> None:
    from kenomem.recall.rerank import proximity_lifts

    docs = [
        _doc("phrase", "we watched the meteor shower from the hill"),
        _doc("apart", "a meteor fell. " + "x " * 40 + "then a shower of rain"),
        _doc("inside", "the meteorshower"),  # one word: "shower" is no word start there
        _doc("one", "a meteor"),
    ]
    lifts = proximity_lifts(docs, ("meteor", "shower"), 40)
    assert lifts == [1.0, 0.0, 0.0, 0.0]
    three = proximity_lifts(
        [_doc("x", "meteor shower, then hill")], ("meteor", "shower", "sky"), 40
    )
    assert three == [0.5]
    assert proximity_lifts(docs, ("meteor",), 40) == [0.0] * 4
    assert proximity_lifts(docs, ("meteor", "shower"), 0) == [0.0] * 4


def test_proximity_boost_puts_the_phrase_first(vault_dir: Path) -> None:
    notes = {
        "a.md": "Shower, shower, shower. The drain was slow all week long, and the "
        "plumber came late on Friday. A meteor.",
        "b.md": "We watched the meteor shower from the hill behind the old farm house.",
    }
    for name, text in notes.items():
        (vault_dir / "semantic" / name).write_text(text + "\n", encoding="utf-8")
    recall_settings(vault_dir, spread_share=0)
    v = Vault(vault_dir)
    assert v.recall("meteor shower", touch=False).results[0].path == "semantic/a.md"
    recall_settings(vault_dir, proximity_boost=0.5)
    v = Vault(vault_dir)
    assert v.recall("meteor shower", touch=False).results[0].path == "semantic/b.md"
