"""`confidence`: how sure a recall is of its match, from the scores (confidence.py)."""

from __future__ import annotations

from typing import NamedTuple

import pytest

from kenomem.recall.confidence import LEVELS, Signals, confidence, signals
from kenomem.recall.scoring import Terms


@pytest.mark.parametrize(
    ("results", "coverage", "lead", "meaning", "expected"),
    [
        (0, 0.0, 0.0, None, "none"),  # nothing found
        (0, 1.0, 1.0, 1.0, "none"),
        (3, 0.0, 0.5, None, "none"),  # found, but no query word in the best
        (3, 0.0, 0.5, 0.0, "none"),  # ... and no nearer in meaning than most
        (3, 1.0, 0.3, None, "high"),  # every word, a clear winner
        (3, 0.7, 0.1, None, "high"),  # the thresholds are inclusive
        (3, 1.0, 0.05, None, "medium"),  # every word, but many alike
        (3, 0.5, 0.0, None, "medium"),
        (3, 0.3, 0.1, None, "medium"),  # few words, but it stands out
        (3, 0.3, 0.05, None, "low"),
        (3, 0.69, 0.09, None, "medium"),
        (3, 0.49, 0.09, None, "low"),
        (3, 0.0, 0.0, 0.85, "high"),  # by meaning alone
        (3, 0.0, 0.0, 0.6, "medium"),
        (3, 0.0, 0.0, 0.2, "low"),
        (1, 0.4, 1.0, None, "medium"),  # a single result leads by 1
    ],
)
def test_the_rule(
    results: int, coverage: float, lead: float, meaning: float | None, expected: str
) -> None:
    assert confidence(Signals(results, coverage, lead, meaning)) == expected


def test_levels_are_ordered_from_none_to_high() -> None:
    assert LEVELS == ("none", "low", "medium", "high")


class _Doc(NamedTuple):
    title: str
    text: str


class _Ranked(NamedTuple):
    doc: _Doc
    terms: Terms
    bm25: float
    semantic: float | None = None


def _ranked(title: str, score: float, bm25: float = 1.0, semantic: float | None = None) -> _Ranked:
    return _Ranked(_Doc(title, ""), Terms(0, 0, 0, score), bm25, semantic)


def _read(ranked: list[_Ranked], terms: list[str], typical: float | None = None) -> Signals:
    def frequency(held: set[str]) -> tuple[dict[str, int], int]:
        return {"said": 90, "kayak": 1}, 100

    return signals(
        ranked,  # type: ignore[arg-type]
        terms,
        str.split,
        lambda doc: doc.text,  # type: ignore[attr-defined]
        frequency,
        typical,
    )


def test_signals_weigh_rare_words_more() -> None:
    rare = _read([_ranked("kayak", 2.0), _ranked("x", 1.0)], ["said", "kayak"])
    common = _read([_ranked("said", 2.0), _ranked("x", 1.0)], ["said", "kayak"])
    assert rare.coverage > 0.5 > common.coverage > 0
    assert rare.lead == pytest.approx(0.5)


def test_signals_of_a_single_result_and_of_none() -> None:
    assert _read([_ranked("kayak", 2.0)], ["kayak"]).lead == 1.0
    assert _read([], ["kayak"]) == Signals(0, 0.0, 0.0)
    no_word = _read([_ranked("kayak", 2.0, bm25=0.0)], ["kayak"])
    assert no_word.coverage == 0.0


def test_meaning_counts_from_the_typical_cosine() -> None:
    got = _read([_ranked("x", 1.0, semantic=0.9)], ["kayak"], typical=0.6)
    assert got.meaning == pytest.approx(0.75)
    assert _read([_ranked("x", 1.0, semantic=0.5)], ["kayak"], typical=0.6).meaning == 0.0
