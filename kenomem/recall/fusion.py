"""Relevance from two rankings: the keyword search's (BM25F, already divided by the best
score) and the vector search's (cosine). Pure functions.

- "rrf", reciprocal rank fusion: each list gives a candidate 1 / (k + its rank in it),
  weighted `1 - weight` for the keywords and `weight` for meaning; a candidate absent from
  a list gets nothing from it. Ranks only, so it needs no calibration of either score.
- "blend": the keyword relevance and the cosine, the latter mapped to [0, 1] between
  `floor` (what unrelated texts score with the model) and the best candidate's, mixed at
  `weight`.

- "covered" (the default): the blend, with meaning's weight raised from `weight` towards
  `ADAPTIVE_MOST` as the square of the share of the query that the best keyword hit does
  not hold: when no memory holds much of what was asked, the words found are likely
  about something else, and meaning decides.

Before any of them, `covered` weighs each keyword hit by how much of the query it holds
(the rarity-weighted share of its terms, [recall] coverage), so a hit holding one common
word of four is not the best match only because it is the best keyword hit. Either way
the result is divided by the best candidate's, so it lies in [0, 1] as the keyword
relevance did, and the lifts of re-ranking add to it as before.

`near` is the one test of "related enough" by meaning: recall returns a memory only the
vector search brought when it passes, and `context` takes it.
"""

from collections.abc import Sequence

FUSIONS = ("rrf", "blend", "gate", "adaptive", "covered")
# "adaptive": the blend, with meaning's weight raised from `weight` towards this as the
# two searches' best candidates differ (when they share none, the query's words are
# likely matching other things than what is meant).
ADAPTIVE_MOST = 0.85
AGREEMENT_TOP = 10


def fuse(
    keyword: Sequence[float],
    semantic: Sequence[float | None],
    how: str = "rrf",
    weight: float = 0.5,
    k: float = 60.0,
    floor: float = 0.0,
    held: float = 1.0,
) -> list[float]:
    """The fused relevance of each candidate; `semantic[i]` is None when candidate i has
    no vector (it keeps its share of the keyword relevance). `held`: the most of the
    query any keyword hit holds (its rarity-weighted share, for "covered")."""
    if len(keyword) != len(semantic):
        raise ValueError("one score of each kind for each candidate")
    if how == "covered":
        raised = weight + (max(weight, ADAPTIVE_MOST) - weight) * (1.0 - held) ** 2
        fused = _blend(keyword, semantic, raised, floor)
    elif how == "blend":
        fused = _blend(keyword, semantic, weight, floor)
    elif how == "adaptive":
        agreement = _agreement(keyword, semantic, AGREEMENT_TOP)
        raised = weight + (max(weight, ADAPTIVE_MOST) - weight) * (1.0 - agreement)
        fused = _blend(keyword, semantic, raised, floor)
    elif how == "gate":
        fused = _gate(keyword, semantic, weight, floor)
    elif how == "rrf":
        fused = _rrf(keyword, semantic, weight, k)
    else:
        raise ValueError(f"fusion must be one of {', '.join(FUSIONS)}, not {how!r}")
    best = max(fused, default=0.0)
    return [f / best if best > 0 else 0.0 for f in fused]


def covered(keyword: Sequence[float], held: Sequence[float], coverage: float) -> list[float]:
    """The keyword relevance weighed by how much of the query each hit holds (`held`, the
    rarity-weighted share of its terms): times `1 - coverage + coverage * held`. A hit
    holding one common word of four no longer counts as the best match because it is the
    best keyword hit; with `coverage` 0 nothing changes."""
    return [
        kw * (1.0 - coverage + coverage * share) for kw, share in zip(keyword, held, strict=True)
    ]


def _ranks(scores: Sequence[float | None]) -> list[int | None]:
    """1-based rank of each present, positive score (ties share the better rank)."""
    present = sorted({s for s in scores if s is not None and s > 0}, reverse=True)
    place: dict[float, int] = {}
    seen = 0
    for value in present:
        place[value] = seen + 1
        seen += sum(1 for s in scores if s == value)
    return [place.get(s) if s is not None and s > 0 else None for s in scores]


def _rrf(
    keyword: Sequence[float], semantic: Sequence[float | None], weight: float, k: float
) -> list[float]:
    kw_ranks = _ranks(keyword)
    # A cosine can be 0 or below and still rank: shift so every present one counts.
    lowest = min((s for s in semantic if s is not None), default=0.0)
    sem_ranks = _ranks([None if s is None else s - lowest + 1.0 for s in semantic])
    out = []
    for kr, sr in zip(kw_ranks, sem_ranks, strict=True):
        value = 0.0
        if kr is not None:
            value += (1.0 - weight) / (k + kr)
        if sr is not None:
            value += weight / (k + sr)
        out.append(value)
    return out


def _blend(
    keyword: Sequence[float], semantic: Sequence[float | None], weight: float, floor: float
) -> list[float]:
    best = max((s for s in semantic if s is not None), default=floor)
    span = best - floor
    out = []
    for kw, cos in zip(keyword, semantic, strict=True):
        meaning = 0.0
        if cos is not None and span > 0:
            meaning = min(1.0, max(0.0, (cos - floor) / span))
        out.append((1.0 - weight) * kw + weight * meaning)
    return out


def _gate(
    keyword: Sequence[float], semantic: Sequence[float | None], weight: float, floor: float
) -> list[float]:
    """Meaning first: the calibrated cosine, raised by the keyword relevance by up to
    `1 - weight` of itself; a candidate without a vector keeps its keyword relevance."""
    best = max((s for s in semantic if s is not None), default=floor)
    span = best - floor
    out = []
    for kw, cos in zip(keyword, semantic, strict=True):
        if cos is None:
            out.append((1.0 - weight) * kw)
            continue
        meaning = min(1.0, max(0.0, (cos - floor) / span)) if span > 0 else 0.0
        out.append(meaning * (weight + (1.0 - weight) * kw))
    return out


def _agreement(keyword: Sequence[float], semantic: Sequence[float | None], top: int) -> float:
    """The share of the best k candidates by words that are among the best k by meaning,
    k being `top` or fewer if either search brings fewer (1 when one brings none)."""
    by_words = [i for i in sorted(range(len(keyword)), key=lambda i: -keyword[i]) if keyword[i] > 0]
    by_meaning = [
        i
        for i in sorted(range(len(semantic)), key=lambda i: -(semantic[i] or -2.0))
        if semantic[i] is not None
    ]
    k = min(top, len(by_words), len(by_meaning))
    if k == 0:
        return 1.0
    words, meaning = by_words[:k], set(by_meaning[:k])
    return sum(1 for i in words if i in meaning) / len(words)


def closeness(cosine: float, typical: float) -> float:
    """How near the query a memory is in meaning, with the model's scale taken out: where
    its cosine stands between the query's typical cosine with the vault (its median: 0)
    and 1 (1), below 0 for a memory farther than most."""
    return (cosine - typical) / (1.0 - typical) if typical < 1 else 0.0


def near_bar(semantic_near: float, held: float) -> float:
    """The closeness a memory found by meaning alone needs, for a query whose best keyword
    hit holds `held` of it: all of `semantic_near` when no memory holds a word of the
    query (nothing else says it is about anything the vault holds), less as the words
    find it well (the query is about what the vault holds, and what meaning adds ranks
    below the words' hits)."""
    return semantic_near * (1.0 - max(0.0, min(1.0, held)))


def near(cosine: float, typical: float, threshold: float) -> bool:
    """Whether a memory is related to the query by meaning alone: its `closeness` at least
    `threshold` ([recall] semantic_near). The one test of "related enough" by meaning:
    recall returns a memory only the vector search brought when it passes, and `context`
    takes it."""
    return closeness(cosine, typical) >= threshold
