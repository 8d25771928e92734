"""What recall weighs besides the words: a time the query names, and the neighbours of
a memory in its conversation. Pure: the caller brings the candidates.

- A query that names a span of time ("last week", "in May 2023") lifts the memories whose
  `when` falls inside it (see `temporal.py`), and recency then counts from that span, not
  from now: memories of then are the recent ones. It does not hide the others, because
  people misremember dates.
- A query that names a participant ("what did Caroline paint?") lifts the memories that
  person took part in, over those that only mention them.
- A memory next to a strong hit, in the same session and within a few minutes of it, is
  lifted by a share of that hit's relevance: the question "what did she say after the
  race?" is answered by the turn after the one that matches.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise

from kenomem.index import Doc
from kenomem.recall import scoring
from kenomem.recall.temporal import TimeCue


def in_span(doc: Doc, cue: TimeCue | None) -> bool:
    return cue is not None and cue.since.timestamp() <= doc.time <= cue.until.timestamp()


def span_recency(doc: Doc, cue: TimeCue, half_life_days: float) -> float:
    """Recency as seen from the span the query names: 1 inside it, fading with the
    distance from its edges."""
    since, until = cue.since.timestamp(), cue.until.timestamp()
    gap = since - doc.time if doc.time < since else max(0.0, doc.time - until)
    return scoring.recency(0.0, gap, half_life_days, doc.pinned)


def neighbour_lifts(
    docs: Sequence[Doc], relevance: Sequence[float], window_seconds: float, share: float
) -> list[float]:
    """For each candidate, `share` of the best relevance among its neighbours (same
    session, `when` within the window), fading with the distance in time."""
    lifts = [0.0] * len(docs)
    if share <= 0 or window_seconds <= 0:
        return lifts
    order = sorted(range(len(docs)), key=lambda i: (docs[i].session, docs[i].time))
    for pos, i in enumerate(order):
        for step in (-1, 1):
            k = pos + step
            while 0 <= k < len(order):
                j = order[k]
                if docs[j].session != docs[i].session:
                    break
                gap = abs(docs[j].time - docs[i].time)
                if gap > window_seconds:
                    break
                closeness = 1.0 - gap / window_seconds
                lifts[i] = max(lifts[i], share * relevance[j] * closeness)
                k += step
    return lifts


_WORD = re.compile(r"\w+")


def named_people(query: str, docs: Sequence[Doc]) -> frozenset[str]:
    """The candidates' participants whom the query names: by their first name or their
    whole name, in any case, and forgiving one slip of the keyboard in a name of five
    letters or more ("Carolin", "Melanei") when no participant is named exactly."""
    words = {w.lower() for w in _WORD.findall(query)}
    people = {person for doc in docs for person in doc.people}
    named = set()
    close = set()
    for person in people:
        parts = [w.lower() for w in _WORD.findall(person)]
        if not parts:
            continue
        if parts[0] in words or all(p in words for p in parts):
            named.add(person)
        elif len(parts[0]) >= 5 and any(_one_slip(parts[0], w) for w in words):
            close.add(person)
    return frozenset(named or close)


def _one_slip(name: str, word: str) -> bool:
    """Whether `word` is `name` with one letter changed, added, left out, or two
    neighbouring letters swapped (Damerau-Levenshtein distance 1)."""
    if word == name or abs(len(word) - len(name)) > 1 or word[:1] != name[:1]:
        return False
    if len(word) == len(name):
        diffs = [i for i, (a, b) in enumerate(zip(word, name, strict=True)) if a != b]
        if len(diffs) == 1:
            return True
        if len(diffs) != 2 or diffs[1] != diffs[0] + 1:
            return False
        i = diffs[0]
        return word[i] == name[i + 1] and word[i + 1] == name[i]
    short, long_ = (word, name) if len(word) < len(name) else (name, word)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


def proximity_lifts(docs: Sequence[Doc], terms: Sequence[str], window: int) -> list[float]:
    """For each candidate, the share of the query's neighbouring word pairs ("meteor
    shower", "support group") that stand within `window` characters of each other in its
    title and preview: 1 when every pair does, as in a phrase.

    Terms are the analysed (stemmed) query words, found at the start of a word ("paint"
    in "painting", not in "repaint"); a pair counts when both are there and close.
    """
    if len(terms) < 2 or window <= 0:
        return [0.0] * len(docs)
    pairs = len(terms) - 1
    lifts = []
    for doc in docs:
        text = f"{doc.title}\n{doc.preview}".lower()
        places = [_word_starts(text, term) for term in terms]
        near = sum(
            1
            for a, b in pairwise(places)
            if a and b and min(abs(x - y) for x in a for y in b) <= window
        )
        lifts.append(near / pairs)
    return lifts


def _word_starts(text: str, term: str, most: int = 16) -> list[int]:
    found: list[int] = []
    at = text.find(term)
    while at >= 0 and len(found) < most:
        if at == 0 or not text[at - 1].isalnum():
            found.append(at)
        at = text.find(term, at + 1)
    return found
