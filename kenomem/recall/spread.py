"""Spreading activation along the concept graph (Semem; Collins and Loftus before it).

Each memory's concepts (its tags, link targets and names: `index/concepts.py`) are in the
index. Recall spreads activation from its best hits to the memories they are linked to: a
hit passes on its strength through each of its concepts, divided among the memories that
hold the concept, so a rare name carries a lot and a name every memory holds carries
nothing. A memory reached this way can join the candidates even if it holds none of the
query's words: "the dog" may be called "Bailey" in the memory that answers. Pure: the
caller searches.

A generic tag links nothing: one that says what kind of memory it is or why the sleep
cycle kept it (`GENERIC_TAGS`: `people`, `decision`, `summary`...), and any tag held by
more than `GENERIC_TAG_SHARE` of the vault. Two memories that share one are no more about
the same thing than two that do not.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from kenomem.index import Hit, SearchResult
from kenomem.recall.expansion import merge

# Tags that say what kind of memory it is, or why the sleep cycle kept an entry (its
# salience reasons), not what it is about: `summary`, `fact` and `learned` (the index
# leaves these out of the concepts already, `index/concepts.py`), `people` (the entry
# names someone), and the other reasons consolidate gives an episode.
GENERIC_TAGS = frozenset(
    """people summary fact learned explicit error fix decision plan emotion change habit
    instruction role health done commitment agent novel banter trivia""".split()
)
# A tag on more than this share of the vault's memories links nothing either (names and
# links are held to `max_share` alone: a rare name on two memories of a small vault links).
GENERIC_TAG_SHARE = 0.2


def linking(concept: str, held: int, total_docs: int) -> bool:
    """Whether a tag concept may link memories: not a generic one (names and links may)."""
    if not concept.startswith("tag:"):
        return True
    return concept[4:] not in GENERIC_TAGS and held <= GENERIC_TAG_SHARE * total_docs


def label(concept: str) -> str:
    """How `--explain` names a concept: "tag:kafka" is "tag kafka"."""
    kind, _, value = concept.partition(":")
    return f"{kind} {value}" if value else concept


def spread(
    sources: Sequence[tuple[Sequence[str], float]],
    frequency: Mapping[str, int],
    total_docs: int,
    max_share: float = 0.05,
) -> dict[str, float]:
    """How much activation each concept passes on, from (concepts, strength) sources.

    A concept held by one memory links nothing; one held by more than `max_share` of the
    vault (and more than three memories), or by half of it, links too much to mean
    anything, and so does a generic tag (`linking`). The rest pass on the source's
    strength divided by the log of how many memories hold them.
    """
    limit = max(3, int(max_share * total_docs))
    passed: dict[str, float] = {}
    for concepts, strength in sources:
        for concept in concepts:
            held = frequency.get(concept, 0)
            if held < 2 or held > limit or 2 * held > total_docs:
                continue
            if not linking(concept, held, total_docs):
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
) -> tuple[SearchResult, dict[str, tuple[float, str]]]:
    """The hits of `found`, each raised by `share` of the best score times the strongest
    activation among its concepts, plus the memories only `reached` found, scored so; and
    what each gained, with the concept it came through (`label`), by id. The `sources`
    (ids) are not raised by what they passed on themselves."""
    best = max((hit.score for hit in found.hits), default=0.0)
    if best <= 0 or not passed:
        return found, {}
    skip = set(sources)
    gained: dict[str, tuple[float, str]] = {}
    for doc in (hit.doc for hit in (*found.hits, *reached.hits)):
        if doc.id in skip or doc.id in gained:
            continue
        value, concept = max(((passed.get(c, 0.0), c) for c in doc.concepts), default=(0.0, ""))
        if value > 0:
            gained[doc.id] = (share * best * value, label(concept))
    gains = [
        Hit(hit.doc, gained.get(hit.doc.id, (0.0, ""))[0]) for hit in (*found.hits, *reached.hits)
    ]
    return merge(found, SearchResult(gains, ()), 1.0), gained
