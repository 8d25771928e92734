"""When a procedural pattern applies: its trigger against a message. Pure.

A trigger is terms joined by `+` (`docker + port + in use`); it matches a message that
holds every term. Both sides go through the index's own analysis (lower case, stop words
dropped, Porter stems), which the caller passes in, so "ports" matches "port" exactly as
a recall would find it. A term of several words must appear as consecutive analysed
words: "in use" matches "is in use" (the stop words go) but not "use it in".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

Analyse = Callable[[str], Iterable[str]]
Term = tuple[str, ...]


def trigger_terms(trigger: str, analyse: Analyse) -> list[Term]:
    """The analysed terms of a trigger; a term that is only stop words is dropped."""
    terms = []
    for part in trigger.split("+"):
        words = tuple(analyse(part))
        if words and words not in terms:
            terms.append(words)
    return terms


def holds(message: Sequence[str], term: Term) -> bool:
    """Whether the analysed message has the term's words, in order, side by side."""
    n = len(term)
    first = term[0]
    return any(
        message[i] == first and tuple(message[i : i + n]) == term
        for i in range(len(message) - n + 1)
    )


def matches(terms: Sequence[Term], message: Sequence[str]) -> bool:
    """Every term in the message; a trigger with no usable term matches nothing."""
    return bool(terms) and all(holds(message, term) for term in terms)
