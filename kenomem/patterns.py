"""Habits from repetition: when the same problem and fix recur across days, propose a
procedural memory (the sleep cycle's step 4). Pure: the caller brings the entries and
the analyser that turns text into terms.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

from kenomem.salience import says

# A fix said with an instruction: "run X", "restart Y", "clear Z" and the like.
_DOING = re.compile(
    r"\b(?:run|ran|restart(?:ed)?|reboot(?:ed)?|clear(?:ed)?|delete[d]?|reinstall(?:ed)?"
    r"|upgrade[d]?|downgrade[d]?|set|unset|bump(?:ed)?|revert(?:ed)?)\b",
    re.IGNORECASE,
)
FOLLOW_UP = 5  # how many entries after a problem its fix may come
SAME_PROBLEM = 0.5  # share of terms two problems must have in common
MIN_DAYS = 2


class Incident(NamedTuple):
    day: str
    problem: str
    fix: str
    terms: frozenset[str]  # the problem's analysed terms


class Proposal(NamedTuple):
    trigger: str  # "word + word": all must be in a message for the pattern to apply
    response: str
    confidence: float
    learned_from: tuple[str, ...]  # the days it was seen on


Terms = Callable[[str], Iterable[str]]


def incidents(day: str, texts: Sequence[str], terms: Terms) -> list[Incident]:
    """Problems with their fixes in one day's entries: an entry with an error followed,
    within a few entries, by one that fixes (or the same entry saying both)."""
    found = []
    for i, text in enumerate(texts):
        if not says("error", text):
            continue
        if says("fix", text) or (_DOING.search(text) and len(text.split()) > 6):
            found.append(Incident(day, text, text, frozenset(terms(text))))
            continue
        for later in texts[i + 1 : i + 1 + FOLLOW_UP]:
            if says("fix", later) or _DOING.search(later):
                found.append(Incident(day, text, later, frozenset(terms(text))))
                break
    return found


def recurring(found: list[Incident], surface: Callable[[str], str] = str) -> list[Proposal]:
    """Problems seen on at least MIN_DAYS days, each as one proposed pattern.

    `surface` turns an analysed term back into a word people read (for the trigger).
    """
    clusters: list[list[Incident]] = []
    for incident in sorted(found, key=lambda x: x.day):
        for cluster in clusters:
            if _overlap(cluster[0].terms, incident.terms) >= SAME_PROBLEM:
                cluster.append(incident)
                break
        else:
            clusters.append([incident])
    proposals = []
    for cluster in clusters:
        days = tuple(dict.fromkeys(x.day for x in cluster))
        if len(days) < MIN_DAYS:
            continue
        counts = Counter(term for x in cluster for term in x.terms)
        shared = [
            t
            for t, n in counts.most_common()
            if n >= max(2, len(cluster) // 2 + 1) and not _generic(surface(t))
        ]
        trigger = " + ".join(sorted(surface(t) for t in shared[:3]))
        if not trigger:
            continue
        confidence = round(min(0.9, 0.3 + 0.2 * len(days)), 2)
        proposals.append(Proposal(trigger, cluster[-1].fix, confidence, days))
    return proposals


def _generic(word: str) -> bool:
    """Words every problem or fix says ("error", "failed", "fixed"): no use as a trigger."""
    return says("error", word) or says("fix", word) or bool(_DOING.search(word))


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)
