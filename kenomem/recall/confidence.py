"""How sure a recall is of its match: `high`, `medium`, `low` or `none` (SPEC 3.2).

An agent reads it to decide whether to inject what recall found or skip it as noise. It
is read from the ranked results by two signals, and a third with recall by meaning:

- `coverage`: the share of the query's searched terms (after stemming and stop words)
  that the best result's title and text hold, each term weighted by its rarity in the
  index (`log(N / (df + 1)) + 1`): holding the rare word of a question counts more than
  holding "said";
- `lead`: how far the best result's score stands above the second's, as a share of the
  best's (1 for a single result): a clear winner, or one of many alike;
- `meaning`: where the best result's cosine with the query stands between the query's
  typical cosine with the vault (0) and 1; None by keywords alone.

The rule (`confidence`): no result, or a best result that holds no query term and is no
nearer in meaning than most, is `none`; coverage at least `HIGH_COVERAGE` with a lead of
at least `HIGH_LEAD` (or meaning at least `HIGH_MEANING`) is `high`; coverage at least
`MEDIUM_COVERAGE` or a lead of at least `MEDIUM_LEAD` (or meaning at least
`MEDIUM_MEANING`) is `medium`; anything else is `low`. The keyword thresholds were set on
LoCoMo (`bench/confidence.py`, figures in docs/recall.md#confidence); the meaning ones are
not measured yet.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple, Protocol

if TYPE_CHECKING:
    from kenomem.index import Doc
    from kenomem.recall.scoring import Terms

LEVELS = ("none", "low", "medium", "high")

HIGH_COVERAGE = 0.7
HIGH_LEAD = 0.1
MEDIUM_COVERAGE = 0.5
MEDIUM_LEAD = 0.1
HIGH_MEANING = 0.8
MEDIUM_MEANING = 0.5
MIN_RARITY = 0.1  # the weight of a term held by (nearly) every memory


class Ranked(Protocol):
    """What is read of a ranked result (search.Ranked)."""

    @property
    def doc(self) -> Doc: ...
    @property
    def terms(self) -> Terms: ...
    @property
    def bm25(self) -> float: ...
    @property
    def semantic(self) -> float | None: ...


class Signals(NamedTuple):
    results: int
    coverage: float  # the rarity-weighted share of the query terms the best holds, [0, 1]
    lead: float  # (best score - second score) / best score, in [0, 1]
    meaning: float | None = None  # the best result's cosine above typical, in [0, 1]


def confidence(s: Signals) -> str:
    """The level for these signals (pure; table-tested in tests/recall)."""
    meaning = s.meaning if s.meaning is not None else 0.0
    if s.results == 0 or (s.coverage <= 0 and meaning <= 0):
        return "none"
    if (s.coverage >= HIGH_COVERAGE and s.lead >= HIGH_LEAD) or meaning >= HIGH_MEANING:
        return "high"
    if s.coverage >= MEDIUM_COVERAGE or s.lead >= MEDIUM_LEAD or meaning >= MEDIUM_MEANING:
        return "medium"
    return "low"


def signals(
    ranked: Sequence[Ranked],
    terms: Sequence[str],
    analyze: Callable[[str], list[str]],
    text_of: Callable[[Doc], str],
    frequency: Callable[[set[str]], tuple[dict[str, int], int]],
    typical: float | None = None,
) -> Signals:
    """The signals of a ranked list: the best result's text is read once (`text_of`), the
    terms' document frequencies asked once (`frequency`: df of each, and N)."""
    wanted = set(terms)
    if not ranked:
        return Signals(0, 0.0, 0.0)
    best = ranked[0]
    coverage = 0.0
    if wanted and best.bm25 > 0:
        held = wanted.intersection(analyze(f"{best.doc.title}\n{text_of(best.doc)}"))
        coverage = share(held, rarities(wanted, frequency))
    top = best.terms.score
    lead = 1.0
    if len(ranked) > 1:
        lead = max(0.0, min(1.0, (top - ranked[1].terms.score) / top)) if top > 0 else 0.0
    meaning = None
    if best.semantic is not None and typical is not None and typical < 1:
        meaning = max(0.0, min(1.0, (best.semantic - typical) / (1 - typical)))
    return Signals(len(ranked), coverage, lead, meaning)


def rarities(
    terms: set[str], frequency: Callable[[set[str]], tuple[dict[str, int], int]]
) -> dict[str, float]:
    """Each query term's weight, by its rarity in the index: `log(N / (df + 1)) + 1`,
    at least `MIN_RARITY` (the frequencies asked once)."""
    if not terms:
        return {}
    df, n = frequency(terms)
    return {t: max(MIN_RARITY, math.log(max(n, 1) / (df.get(t, 0) + 1)) + 1) for t in terms}


def share(held: set[str], weight: dict[str, float]) -> float:
    """The share of the query's weight (`rarities`) that the terms `held` carry, [0, 1]."""
    total = sum(weight.values())
    return sum(weight.get(t, 0.0) for t in held) / total if total > 0 else 0.0
