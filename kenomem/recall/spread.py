"""Spreading activation along the concept graph (Semem; Collins and Loftus before it).

Each memory's concepts (its tags, link targets and names: `index/concepts.py`) are in the
index. Recall spreads activation from its best hits to the memories they are linked to: a
hit passes on its strength through each of its concepts, divided among the memories that
hold the concept, so a rare name carries a lot and a name every memory holds carries
nothing. A memory reached this way can join the candidates even if it holds none of the
query's words: "the dog" may be called "Bailey" in the memory that answers. Pure: the
caller searches.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from kenomem.index import Doc, Hit, SearchResult
from kenomem.recall.expansion import merge


def spread(
    sources: Sequence[tuple[Sequence[str], float]],
    frequency: Mapping[str, int],
    total_docs: int,
    max_share: float = 0.05,
) -> dict[str, float]:
    """How much activation each concept passes on, from (concepts, strength) sources.

    A concept held by one memory links nothing; one held by more than `max_share` of the
    vault (and more than three memories), or by half of it, links too much to mean
    anything. The rest pass on the source's strength divided by the log of how many
    memories hold them.
    """
    limit = max(3, int(max_share * total_docs))
    passed: dict[str, float] = {}
    for concepts, strength in sources:
        for concept in concepts:
            held = frequency.get(concept, 0)
            if held < 2 or held > limit or 2 * held > total_docs:
                continue
            value = strength / math.log2(1 + held)
            if value > passed.get(concept, 0.0):
                passed[concept] = value
    return passed


def lift(
    found: SearchResult,
    reached: SearchResult,
    passed: Mapping[str, float],
    share: float,
    sources: Iterable[str] = (),
) -> SearchResult:
    """The hits of `found`, each raised by `share` of the best score times the strongest
    activation among its concepts, plus the memories only `reached` found, scored so.
    The `sources` (ids) are not raised by what they passed on themselves."""
    best = max((hit.score for hit in found.hits), default=0.0)
    if best <= 0 or not passed:
        return found
    skip = set(sources)

    def gain(doc: Doc) -> float:
        if doc.id in skip:
            return 0.0
        return share * best * max((passed.get(c, 0.0) for c in doc.concepts), default=0.0)

    gains = [Hit(hit.doc, gain(hit.doc)) for hit in (*found.hits, *reached.hits)]
    return merge(found, SearchResult(gains, ()), 1.0)
