"""Words that ask for a memory to be kept: "remember this", "never forget", a standing
rule ("Always run the tests before pushing"). `remember` and `extract` pin such a memory
and raise its importance, as the sleep cycle raises an entry with an explicit marker
(`sleep/salience.py`, "explicit").

"Always" pins only as a rule: at the head of a sentence ("Always run the tests before
pushing", "Please always answer in French"), or after "you" ("You must always sign the
commits"), as does "never" ("Never deploy on Fridays"). After any other subject it
describes how something is ("The API always returns JSON", "I always take the train"),
which is a fact like another: pinning it would keep it past its truth. "Remember" and
"forget" pin when they are said to the reader ("Remember this", "Don't forget: ...",
"never forget that ..."), not when they tell of memory ("I can't remember that guy's
name", "I never forget a face").
"""

from __future__ import annotations

import re

# The importance of a memory pinned by its words, unless one is given.
PINNED_IMPORTANCE = 8

_HEAD = r"(?:^|(?<=[.!?;:\n])\s*|(?<=[.!?;:]\s))\s*(?:(?:please|so|and|but|ok(?:ay)?),?\s+)*"
_PHRASES = re.compile(
    r"(?P<phrase>"
    # said to the reader, at the head of a sentence
    rf"{_HEAD}(?:always\s+)?remember\b(?!\s+(?:when|how|if|whether)\b)"
    r"(?:\s+(?:this|that|it)\b)?(?:\s+(?:forever|for good)\b)?"
    rf"|{_HEAD}(?:never|don'?t|do not|dont)\s+forget\b(?:\s+(?:this|that|it)\b)?"
    rf"|{_HEAD}(?:always|never)\s+(?!mind\b)[a-z]+"
    # anywhere
    r"|\b(?:remember|keep|save|store)\s+(?:this|that|it)\s+(?:forever|for good|for ever)\b"
    r"|\bnever\s+forget\s+(?:this|that|it)\b"
    r"|\b(?:please\s+)?remember\s+this\s*(?:[:!.]|$)"
    r"|\byou\s+(?:must|should|need to|have to)?\s*(?:always|never)\s+[a-z]+"
    r")",
    re.IGNORECASE,
)


def pin_phrase(text: str) -> str | None:
    """The words of `text` that ask for it to be kept, as written (first one), or None."""
    match = _PHRASES.search(text)
    if match is None:
        return None
    return " ".join(match.group("phrase").split()).strip(" .:!;")
