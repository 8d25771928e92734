"""The recall score of Generative Agents: recency + importance + relevance, each in [0, 1],
and use.

    score = w_recency * recency + w_importance * importance + w_relevance * relevance
            + w_use * use

- recency halves every `half_life_days` since the memory was last accessed (or created);
  a pinned memory never fades;
- importance is the 1-10 field mapped to [0, 1], raised by one step per doubling of
  `reinforced` (remembering a fact again makes it weigh more);
- relevance is the BM25F score divided by the best score among the candidates;
- use is `log(1 + access_count)`: a memory recalled 50 times (3.9) weighs more than one
  never recalled (0), each recall adding less than the one before, and no count past
  `USE_CAP` adds more (a count written by hand can be anything). Reinforcement is not
  counted again here: it already raises importance.

Pure functions only: the caller brings the numbers.
"""

# No `from __future__ import annotations`: its records are made at every cold start
# (docs/architecture.md, fast start).

import math
from typing import NamedTuple

DAY = 86400.0


class Weights(NamedTuple):
    recency: float = 0.1
    importance: float = 0.5
    relevance: float = 1.0
    use: float = 0.0


class Terms(NamedTuple):
    recency: float
    importance: float
    relevance: float
    score: float
    use: float = 0.0


def recency(accessed: float, now: float, half_life_days: float, pinned: bool = False) -> float:
    if pinned or half_life_days <= 0:
        return 1.0
    age_days = max(0.0, now - accessed) / DAY
    return 0.5 ** (age_days / half_life_days)


def importance(value: int, reinforced: int = 0) -> float:
    effective = min(10.0, max(1.0, value + math.log2(1 + max(0, reinforced))))
    return (effective - 1.0) / 9.0


def relevance(scores: list[float]) -> list[float]:
    best = max(scores, default=0.0)
    if best <= 0:
        return [0.0 for _ in scores]
    return [s / best for s in scores]


USE_CAP = 1000


def use(access_count: int) -> float:
    return math.log1p(min(USE_CAP, max(0, access_count)))


def combine(weights: Weights, rec: float, imp: float, rel: float, used: float = 0.0) -> Terms:
    score = weights.recency * rec + weights.importance * imp + weights.relevance * rel
    return Terms(rec, imp, rel, score + weights.use * used, used)
