"""Habits from repetition: when the same problem and fix recur across days, propose a
procedural memory (the sleep cycle's step 4). Pure: the caller brings the entries and
the analyser that turns text into terms.

A pattern's trigger is written as a person would write it: of the words the problem said
each time, the telling ones first (`_telling`): a code or a number (a word holding a digit:
`n8n`, `401`, `v2`), or a name (written with capitals where a sentence does not begin:
`Kafka`, `PostgreSQL`, `AWS`). Two telling words or more make the trigger alone
(`n8n + 401`, not `param + passing + webhook`); with fewer, the most common of the other
words fill it up to three (never a word every problem or fix says, "error", "fixed",
nor one that says when, not what, "again", "already").
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

from kenomem.sleep.salience import says

# A fix said with an instruction: "run X", "restart Y", "clear Z" and the like.
_DOING = re.compile(
    r"\b(?:run|ran|restart(?:ed)?|reboot(?:ed)?|clear(?:ed)?|delete[d]?|reinstall(?:ed)?"
    r"|upgrade[d]?|downgrade[d]?|set|unset|bump(?:ed)?|revert(?:ed)?)\b",
    re.IGNORECASE,
)
FOLLOW_UP = 5  # how many entries after a problem its fix may come
SAME_PROBLEM = 0.5  # share of terms two problems must have in common
# Or, a problem said in other words but fixed the same way: at least SAME_WORDS telling
# words of the fixes in common, making SAME_FIX of the shorter fix, and as many of the
# problems', making SAME_PROBLEM_FIXED of the shorter problem.
SAME_WORDS = 3
SAME_FIX = 0.5
SAME_PROBLEM_FIXED = 1 / 3
MIN_DAYS = 2


class Incident(NamedTuple):
    day: str
    problem: str
    fix: str
    terms: frozenset[str]  # the problem's analysed terms
    fix_terms: frozenset[str] = frozenset()  # the fix's


class Proposal(NamedTuple):
    trigger: str  # "word + word": all must be in a message for the pattern to apply
    response: str
    confidence: float
    learned_from: tuple[str, ...]  # the days it was seen on


Terms = Callable[[str], Iterable[str]]


def incidents(day: str, texts: Sequence[str], terms: Terms) -> list[Incident]:
    """Problems with their fixes in one day's entries: an entry with an error followed,
    within a few entries, by one that fixes (or the same entry saying both). A fix that
    names the error it fixed ("bumped the timeout") is not a problem of its own."""
    found = []
    fixes: set[int] = set()  # entries taken as a fix: not a problem of their own
    for i, text in enumerate(texts):
        if i in fixes or not says("error", text):
            continue
        problem = frozenset(terms(text))
        if says("fix", text) or (_DOING.search(text) and len(text.split()) > 6):
            found.append(Incident(day, text, text, problem, problem))
            continue
        for j in range(i + 1, min(len(texts), i + 1 + FOLLOW_UP)):
            later = texts[j]
            if says("fix", later) or _DOING.search(later):
                found.append(Incident(day, text, later, problem, frozenset(terms(later))))
                fixes.add(j)
                break
    return found


def recurring(found: list[Incident], surface: Callable[[str], str] = str) -> list[Proposal]:
    """Problems seen on at least MIN_DAYS days, each as one proposed pattern.

    `surface` turns an analysed term back into a word people read (for the trigger).
    """
    clusters: list[list[Incident]] = []
    for incident in sorted(found, key=lambda x: x.day):
        for cluster in clusters:
            if _same(cluster[0], incident, surface):
                cluster.append(incident)
                break
        else:
            clusters.append([incident])
    # In how many clusters a problem holds each term: the fewer, the more telling.
    spread = Counter(t for cluster in clusters for t in set().union(*(x.terms for x in cluster)))
    proposals = []
    for cluster in clusters:
        days = tuple(dict.fromkeys(x.day for x in cluster))
        if len(days) < MIN_DAYS:
            continue
        counts = Counter(term for x in cluster for term in x.terms)
        problems = [x.problem for x in cluster]
        shared = [
            t
            for t, n in counts.items()
            if n >= max(2, len(cluster) // 2 + 1) and not _generic(surface(t))
        ]
        telling = {t: _telling(surface(t), problems) for t in shared}
        # Telling words first, then the most common, the rarer among the problems, the
        # longer, in alphabetical order: the same incidents give the same trigger.
        shared.sort(key=lambda t: (not telling[t], -counts[t], spread[t], -len(surface(t)), t))
        chosen = [t for t in shared if telling[t]][:3]
        if len(chosen) < 2:
            chosen = shared[:3]
        trigger = " + ".join(_written_order([surface(t) for t in chosen], problems))
        if not trigger:
            continue
        confidence = round(min(0.9, 0.3 + 0.2 * len(days)), 2)
        fixes = Counter(term for x in cluster for term in x.fix_terms)
        again = {surface(t) for t, n in fixes.items() if n >= 2 and not _generic(surface(t))}
        proposals.append(Proposal(trigger, _gist(cluster[-1].fix, again), confidence, days))
    return proposals


def _telling(word: str, texts: Sequence[str]) -> bool:
    """Whether a word is a code or a number (it holds a digit), or a name: written in
    `texts` with a capital where no sentence begins, or in capitals (two letters or more)."""
    if any(c.isdigit() for c in word):
        return True
    for text in texts:
        for m in re.finditer(rf"(?<!\w){re.escape(word)}(?!\w)", text, re.IGNORECASE):
            said = m.group()
            if any(c.isupper() for c in said[1:]) or (said.isupper() and len(said) > 1):
                return True
            opens = not text[: m.start()].strip() or bool(
                _SENTENCE_START.search(text, 0, m.start())
            )
            if said[0].isupper() and not opens:
                return True
    return False


_SENTENCE_START = re.compile(r"[.!?:;]\s*$")


def _written_order(words: list[str], texts: Sequence[str]) -> list[str]:
    """The trigger's words as a person lists them: names and codes, then numbers, then
    the other words, each in alphabetical order."""
    telling = [w for w in words if _telling(w, texts)]
    numbers = sorted(w for w in telling if w.isdigit())
    names = sorted(w for w in telling if not w.isdigit())
    return names + numbers + sorted(w for w in words if w not in telling)


def _gist(fix: str, words: set[str]) -> str:
    """The sentences of the latest fix that say what recurred in every fix (the
    "ran X" of "same thing. ran X and it is up."), or all of it."""
    sentences = re.split(r"(?<=[.!?])\s+", fix.strip())
    kept = [
        s
        for s in sentences
        if any(re.search(rf"(?<!\w){re.escape(w)}(?!\w)", s, re.IGNORECASE) for w in words)
    ]
    return " ".join(kept) if kept else fix


def _same(a: Incident, b: Incident, surface: Callable[[str], str]) -> bool:
    """Whether two incidents are one problem: most of the problem's words in common, or
    the same fix (several telling words, half of the shorter fix) for a problem that
    shares several telling words too (a third of the shorter problem's)."""
    if _overlap(a.terms, b.terms) >= SAME_PROBLEM:
        return True
    return _shares(a.fix_terms, b.fix_terms, SAME_FIX, surface) and _shares(
        a.terms, b.terms, SAME_PROBLEM_FIXED, surface
    )


def _shares(
    a: frozenset[str], b: frozenset[str], share: float, surface: Callable[[str], str]
) -> bool:
    """Whether two texts' telling words (not generic ones) have SAME_WORDS or more in
    common, making at least `share` of the shorter text's."""
    telling_a = {t for t in a if not _generic(surface(t))}
    telling_b = {t for t in b if not _generic(surface(t))}
    common = len(telling_a & telling_b)
    return common >= SAME_WORDS and common >= share * min(len(telling_a), len(telling_b))


# Words that say when or how often, not what: no use as a trigger either.
_COMMON = frozenset(
    "again already also always anymore ever every just never now often once really "
    "sometimes still today tonight yesterday".split()
)


def _generic(word: str) -> bool:
    """Words every problem or fix says ("error", "failed", "fixed") and words that say
    when, not what ("again", "already"): no use as a trigger."""
    return (
        word.lower() in _COMMON
        or says("error", word)
        or says("fix", word)
        or bool(_DOING.search(word))
    )


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)
