"""Whether a new statement says again what a memory says, may contradict it, or is
another fact: the judgement `remember` makes by meaning. Pure functions.

Two statements near in meaning (cosine of their embeddings) are "the same" when they are
very near (`paraphrase_cosine`) and neither names a specific the other does not (a number,
a name: "floor 4" and "the fourth floor" are not the same to this rule, which errs on the
side of writing) and the new one says nothing has changed ("now", "moved", "no longer").
They "may contradict" when they are near (`related_cosine`) and their specifics differ,
or the new one says something changed: "Adrian moved to Madrid" against "Adrian lives in
Porto". Otherwise the new statement is another fact.

Measured with multilingual-e5-small on bench/data/near-facts.json (40 pairs labelled by
hand): `bench/near_facts.py`.
"""

import re
from typing import Literal

Likeness = Literal["same", "contradicts", "different"]

_WORD = re.compile(r"[\w][\w.'-]*")
_CHANGE = re.compile(
    r"\b(now|moved|no longer|not any ?more|changed|upgraded|downgraded|raised|lowered|"
    r"switched|sold|instead|new|left|quit|replaced)\b",
    re.IGNORECASE,
)


def specifics(text: str) -> frozenset[str]:
    """The numbers and names of a text: words holding a digit, and capitalised words
    other than a sentence's first."""
    found = set()
    first = True
    for match in _WORD.finditer(text):
        raw = match.group(0)
        word = raw.rstrip(".'-")
        if word and (any(c.isdigit() for c in word) or (word[0].isupper() and not first)):
            found.add(word.lower())
        after = text[match.end() : match.end() + 1]
        first = raw.endswith(".") or after in ("!", "?")
    return frozenset(found)


def judge(
    old: str, new: str, cosine: float, paraphrase_cosine: float, related_cosine: float
) -> Likeness:
    if cosine < related_cosine:
        return "different"
    same_specifics = specifics(old) == specifics(new)
    changed = _CHANGE.search(new) is not None and _CHANGE.search(old) is None
    if cosine >= paraphrase_cosine and same_specifics and not changed:
        return "same"
    if not same_specifics or changed:
        return "contradicts"
    return "different"
