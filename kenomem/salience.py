"""How much a buffer entry matters, 1-10, from what it says (the sleep cycle's step 1).

Pure and explainable: each signal adds points, and `score` returns them with their
reasons. The signals, after the issue's list: explicit markers ("remember this"),
errors and their fixes, decisions and commitments, dates and plans, named people,
emotional words, and novelty against what the vault already knows. Trivia ("ok
thanks") scores 1.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

# Points per signal; an entry starts at BASE and is clamped to 1..10.
BASE = 2
KEEP_AT = 5  # episodes are kept from this importance up

_SIGNALS: tuple[tuple[str, int, re.Pattern[str]], ...] = tuple(
    (name, points, re.compile(rx, re.IGNORECASE))
    for name, points, rx in (
        (
            "explicit",
            5,
            r"\b(?:remember (?:this|that)|important|don'?t forget|do not forget"
            r"|note to self|keep in mind|make a note|never forget)\b",
        ),
        (
            "error",
            3,
            r"\b(?:error|exception|traceback|failed|failure|crash(?:ed|es)?|bug"
            r"|broken|doesn'?t work|not working|timed? ?out|refused)\b",
        ),
        (
            "fix",
            3,
            r"\b(?:fixed|the fix|solved|resolved|workaround|worked after|works now"
            r"|was caused by|turned out)\b",
        ),
        (
            "decision",
            3,
            r"\b(?:decided|decision|we will|we'll|i will|i'll|agreed|commit(?:ted)?"
            r" to|promise|plan(?:ning)? to|going to|deadline|due (?:on|by))\b",
        ),
        (
            "plan",
            2,
            r"\b(?:tomorrow|tonight|next (?:week|month|year|monday|tuesday|wednesday"
            r"|thursday|friday|saturday|sunday)|on (?:monday|tuesday|wednesday"
            r"|thursday|friday|saturday|sunday)|\d{4}-\d{2}-\d{2}|\d{1,2}(?::\d\d)?"
            r" ?(?:am|pm)|appointment|meeting|birthday|anniversary)\b",
        ),
        (
            "emotion",
            2,
            r"\b(?:love|hate|angry|furious|happy|sad|upset|worried|anxious|excited"
            r"|frustrat\w*|scared|afraid|proud|grateful|thrilled|devastated"
            r"|disappointed|stressed)\b",
        ),
        (
            "fact",
            2,
            r"\b(?:my (?:name|wife|husband|partner|son|daughter|mother|mom|father|dad"
            r"|brother|sister|friend|boss|job|birthday|address|favou?rite)|i (?:live"
            r"|work|moved|was born|prefer|like|love|hate|own|have a)|i'm (?:a|an|from"
            r"|allergic))\b",
        ),
    )
)

_TRIVIA = re.compile(
    r"^(?:ok(?:ay)?|k|thanks?|thank you|thx|ty|cool|nice|great|sure|yes|yep|yeah|no|nope"
    r"|lol|haha|hmm+|right|got it|sounds good|np|no problem|good|fine|hi|hello|hey|bye"
    r"|good (?:morning|night)|see you|cheers|you'?re welcome|welcome)(?:[\s,!.]+(?:ok(?:ay)?"
    r"|thanks?|thank you|cool|great|so much|a lot|then|man|again))*[\s!.?]*$",
    re.IGNORECASE,
)
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]{2,})\b")
_NOT_NAMES = frozenset(
    """I The A An And But Or So If Then When What Why How Who Where This That These Those It
    We You He She They My Your Our Their Its Monday Tuesday Wednesday Thursday Friday
    Saturday Sunday January February March April May June July August September October
    November December Today Tomorrow Yesterday Ok Okay Thanks Yes No Please Sorry""".split()
)


class Salience(NamedTuple):
    importance: int
    reasons: tuple[str, ...]
    trivia: bool


def says(signal: str, text: str) -> bool:
    """Whether `text` carries one of the signals ("error", "fix", "decision", ...)."""
    return any(rx.search(text) for name, _, rx in _SIGNALS if name == signal)


def is_trivia(text: str) -> bool:
    stripped = text.strip()
    return not stripped or bool(_TRIVIA.match(stripped)) or len(stripped) < 3


def names(text: str) -> list[str]:
    """Capitalised words that look like people's names (not at a sentence's start)."""
    return [n for n in dict.fromkeys(_NAME.findall(text)) if n not in _NOT_NAMES]


def score(
    text: str, novelty: Callable[[str], float] | None = None, people: frozenset[str] = frozenset()
) -> Salience:
    """Importance 1-10 of one entry. `novelty(text)` (0..1) says how much of it the vault
    does not know yet; `people` are names that matter (participants seen before)."""
    if is_trivia(text):
        return Salience(1, ("trivia",), True)
    points = BASE
    reasons = []
    for name, value, rx in _SIGNALS:
        if rx.search(text):
            points += value
            reasons.append(name)
    found = names(text)
    if found:
        points += 2 if people.intersection(found) else 1
        reasons.append("people")
    if novelty is not None:
        new = novelty(text)
        if new >= 0.5:
            points += 2 if new >= 0.8 else 1
            reasons.append("novel")
    if len(text.split()) <= 4 and not reasons:
        points -= 1  # a few words with no signal at all: most likely chatter
    return Salience(max(1, min(10, points)), tuple(reasons), False)
