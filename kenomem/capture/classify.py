"""Which kind of memory a text is, when `remember` is not told (`--type`).

The rule, in order (documented in the README):
1. procedural: it says how to behave or how to do something: a preference ("prefers",
   "would rather", "likes it when"), an instruction ("always", "never", "don't", "make
   sure", "remember to", "you should"), or a how-to ("how to", "to deploy, run", "steps",
   "whenever", "instead of");
2. episodic: it tells of something that happened at a time: a date or time ("yesterday",
   "last week", "on Monday", "2026-02-14", "in May", "at 3pm", "ago") or an event verb in
   the past ("met", "went", "decided", "discussed", "shipped", "happened");
3. semantic: anything else, a fact that holds regardless of time.
"""

from __future__ import annotations

import re

_PROCEDURAL = re.compile(
    r"""
    \b(?:prefer(?:s|red|ence|ences)?|would\ rather|likes?\ it\ when|(?:dis)?likes?\ when
      |always|never|don'?t|do\ not|must(?:n'?t)?|make\ sure|remember\ to|be\ sure\ to
      |you\ should|should\ (?:always|never|not|use|be)|please\ (?:use|do|don'?t|avoid)
      |avoid|how\ to|step\ \d|steps?\ (?:to|for)|whenever|instead\ of|in\ order\ to
      |(?:^|\.\s+)(?:use|run|call|write|answer|reply|respond|keep|add|check)\b
      |to\ \w+(?:\ \w+){0,3},?\ (?:run|use|call|type|do|open|press|click)\b)
    """,
    re.IGNORECASE | re.VERBOSE,
)

_MONTHS = (
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
_DAYS = r"monday|tuesday|wednesday|thursday|friday|saturday|sunday"

_EPISODIC = re.compile(
    rf"""
    \b(?:yesterday|today|tonight|this\ (?:morning|afternoon|evening|week|month|year)
      |last\ (?:night|week|month|year|{_DAYS}|time)
      |\w+\ (?:seconds?|minutes?|hours?|days?|weeks?|months?|years?|while)\ ago
      |earlier\ today|on\ (?:{_DAYS})\b|(?:in|on|since)\ (?:{_MONTHS})\b
      |\d{{4}}-\d{{2}}-\d{{2}}|\d{{1,2}}\s?(?:am|pm)\b|at\ \d{{1,2}}(?::\d{{2}})?\b
      |(?<!is\ )(?<!are\ )(?<!was\ )(?<!be\ )called
      |(?:met|went|visited|happened|decided|discussed|talked|shipped|released
        |launched|moved|started|finished|attended|celebrated|broke|lost|won|bought
        |agreed|announced|was\ born|got\ married)\b)
    """,
    re.IGNORECASE | re.VERBOSE,
)


def classify(text: str) -> str:
    if _PROCEDURAL.search(text):
        return "procedural"
    if _EPISODIC.search(text):
        return "episodic"
    return "semantic"
