"""How sure a recall is of its match: `high`, `medium`, `low` or `none` (SPEC 3.2).

An agent reads it to decide whether to inject what recall found or skip it as noise. It
is read from the best result alone, as relevance already ranked it:

- `coverage`: the share of the query's searched terms (after stemming and stop words)
  that the best result's title and text hold;
- `meaning`: with recall by meaning, where the best result's cosine with the query stands
  between the query's typical cosine with the vault (0) and 1; None by keywords alone.

The rule (`confidence`), checked on LoCoMo (docs/recall.md#confidence): no result, or a
best result that holds no query term and is no nearer in meaning than most, is `none`;
a best result that holds every term of a query of two or more terms, or meaning at least
`HIGH_MEANING`, is `high`; at least half the terms (or a one-term query matched), or
meaning at least `MEDIUM_MEANING`, is `medium`; anything else matched is `low`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from kenomem.index import Doc
    from kenomem.recall.search import Ranked

LEVELS = ("none", "low", "medium", "high")

HIGH_COVERAGE = 1.0
MEDIUM_COVERAGE = 0.5
HIGH_MEANING = 0.8
MEDIUM_MEANING = 0.5


class Signals(NamedTuple):
    results: int
    terms: int  # distinct searched terms of the query
    coverage: float  # share of them the best result holds, in [0, 1]
    meaning: float | None = None  # the best result's cosine above typical, in [0, 1]


def confidence(s: Signals) -> str:
    """The level for these signals (pure; table-tested in tests/recall)."""
    meaning = s.meaning if s.meaning is not None else 0.0
    if s.results == 0 or (s.coverage <= 0 and meaning <= 0):
        return "none"
    if (s.terms >= 2 and s.coverage >= HIGH_COVERAGE) or meaning >= HIGH_MEANING:
        return "high"
    if s.coverage >= MEDIUM_COVERAGE or meaning >= MEDIUM_MEANING:
        return "medium"
    return "low"


def signals(
    ranked: Sequence[Ranked],
    terms: Sequence[str],
    analyze: Callable[[str], list[str]],
    text_of: Callable[[Doc], str],
    typical: float | None = None,
) -> Signals:
    """The signals of a ranked list: the best result's text is read once (`text_of`)."""
    wanted = set(terms)
    if not ranked:
        return Signals(0, len(wanted), 0.0)
    best = ranked[0]
    coverage = 0.0
    if wanted and best.bm25 > 0:
        held = set(analyze(f"{best.doc.title}\n{text_of(best.doc)}"))
        coverage = len(wanted & held) / len(wanted)
    meaning = None
    if best.semantic is not None and typical is not None and typical < 1:
        meaning = max(0.0, min(1.0, (best.semantic - typical) / (1 - typical)))
    return Signals(len(ranked), len(wanted), coverage, meaning)
