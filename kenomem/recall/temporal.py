"""Time said in a query: "yesterday", "last week", "in May 2023", "3 days ago".

`time_cue(query, now)` finds the span of time a query names, relative to `now`, so that
recall can prefer (and look for) memories whose `when` falls inside it. `asked(query,
cue)` takes such a query apart: what it asks besides the time; with nothing else
("what did we talk about yesterday"), the time alone is the question. Pure: no clock,
no vault. Only explicit spans count; "when did ..." asks for a time, it does not give one.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from typing import NamedTuple

from kenomem.files.dates import MONTH as _MONTH
from kenomem.files.dates import MONTH_NAMES as _MONTH_NAMES
from kenomem.files.dates import MONTHS, Span, absolute_day, latest_year, relative_day
from kenomem.files.dates import YEAR as _YEAR


def _month_end(year: int, month: int) -> int:
    """The number of days in the month."""
    following = date(year + month // 12, month % 12 + 1, 1)
    return (following - timedelta(days=1)).day


_UNITS = {"day": 1, "week": 7, "month": 30, "year": 365}
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "a few": 3,
}  # fmt: skip

_MONTH_YEAR = rf"\b{_MONTH}(?:\s+(?:of\s+)?{_YEAR})?\b"
_YEAR_ONLY = rf"\b(?:in|during|of|since)\s+{_YEAR}\b"
_AGO = (
    r"\b(\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|a couple of|a few)\s+"
    r"(day|week|month|year)s?\s+ago\b"
)
_LAST = r"\b(last|this|past|previous)\s+(week|month|year|weekend)\b"


class TimeCue(NamedTuple):
    since: datetime
    until: datetime
    said: str  # the words that named it


# Words without which no query names a time: most queries stop here, and the patterns
# below are compiled (by `re`'s cache) only for those that might. The patterns match whole
# words only, so a month counts in the forms `_MONTH` takes, not as a prefix ("marco").
# ("sepember": what `_MONTH`'s `sept?(?:ember)?` also takes.)
_MONTH_WORDS = [*_MONTH_NAMES, *MONTHS, "sept", "sepember"]
_HINTS = frozenset(
    "yesterday today tonight ago last this past previous weekend".split() + _MONTH_WORDS
)
_WORDS = re.compile(r"[a-z]+|\d")


def time_cue(query: str, now: datetime) -> TimeCue | None:
    """The first span of time the query names, or None. Never raises: a time out of the
    calendar's range ("9999999 years ago") names none."""
    text = query.lower()
    if not any(w in _HINTS or w.isdigit() for w in _WORDS.findall(text)):
        return None
    try:
        today = now.astimezone(UTC).date()
        part = _part_of_day(text, today)
        if part is not None:
            return part
        for finder in (_relative, absolute_day, _absolute_month):
            found = finder(text, today)
            if found is not None:
                start, end, said = found
                last = _at(end + timedelta(days=1)) - timedelta(seconds=1)
                return TimeCue(_at(start), last, said)
    except (ValueError, OverflowError):  # a day before year 1 or after 9999
        return None
    return None


# Parts of a day, in hours (UTC, as every day recall reads is): "this morning", "yesterday
# evening", "tonight"; "last night" runs from yesterday evening to this morning.
_PARTS = {"morning": (0, 12), "afternoon": (12, 18), "evening": (18, 24)}
_PART_OF_DAY = (
    r"\b(?:(this|yesterday|today)\s+(morning|afternoon|evening)|(last\s+night)|(tonight))\b"
)


def _part_of_day(text: str, today: date) -> TimeCue | None:
    m = re.search(_PART_OF_DAY, text)
    if m is None:
        return None
    if m.group(3):  # last night
        start = _at(today - timedelta(days=1)) + timedelta(hours=18)
        return TimeCue(start, start + timedelta(hours=12, seconds=-1), m.group(0))
    day = today - timedelta(days=1) if m.group(1) == "yesterday" else today
    first, last = _PARTS[m.group(2) or "evening"]
    return TimeCue(
        _at(day) + timedelta(hours=first), _at(day) + timedelta(hours=last, seconds=-1), m.group(0)
    )


# The words that only carry a question about a time ("what did we talk about
# yesterday", "what happened this morning"): without them, and without the time, a query
# that holds nothing else asks for what happened then. The index drops the common words
# ("what", "did", "we", "about"); these are the verbs and nouns of such a question that it
# would otherwise search for.
QUESTION_WORDS = frozenset(
    """talk talks talked talking discuss discusses discussed discussing say says said
    saying tell told telling happen happens happened happening go goes went going gone
    get got anything something everything stuff thing things mention mentioned chat
    chatted chatting speak spoke spoken remind show give recap summarise summarize
    think thought know knew hear heard up new news""".split()
)
# Words of such a question that still rank what happened then ("what did we decide
# last week": the decisions first), but do not narrow it to the memories holding them.
SOFT_WORDS = frozenset(
    """decide decides decided decision decisions agree agreed agreement plan plans
    planned learn learned learnt conclude concluded""".split()
)
_RELATION = r"\b(?:before|after|by|since|until|till|between|and|from|to|as\s+of)\s+(?:the\s+)?$"


class Asked(NamedTuple):
    """A query that names a time, taken apart: what it asks about besides the time."""

    topic: str  # the query without the words that only carry the question
    hard: str  # its words that narrow the search (neither the time nor soft words)
    soft: str  # words that rank what happened then without narrowing it (SOFT_WORDS)
    reference: bool  # the time is a point of reference ("before 8 May"), not the span asked


def _at(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def _relative(text: str, today: date) -> Span | None:
    found = relative_day(text, today)  # yesterday, today, last friday...
    if found is not None and not found[2].startswith("last "):
        return found
    m = re.search(_AGO, text)
    if m:
        n = int(m.group(1)) if m.group(1).isdigit() else _NUMBERS[m.group(1)]
        days = n * _UNITS[m.group(2)]
        # "3 weeks ago" is about then, give or take half a unit either way
        slack = max(1, _UNITS[m.group(2)] // 2)
        centre = today - timedelta(days=days)
        return centre - timedelta(days=slack), centre + timedelta(days=slack), m.group(0)
    if found is not None:  # "last friday", after "3 days ago"
        return found
    m = re.search(_LAST, text)
    if m:
        return (*_period(m.group(1), m.group(2), today), m.group(0))
    return None


def _period(which: str, unit: str, today: date) -> tuple[date, date]:
    if which == "past":
        return today - timedelta(days=_UNITS.get(unit, 7)), today
    back = which in ("last", "previous")
    if unit in ("week", "weekend"):
        monday = today - timedelta(days=today.weekday()) - timedelta(weeks=1 if back else 0)
        if unit == "weekend":
            return monday + timedelta(days=5), monday + timedelta(days=6)
        return monday, monday + timedelta(days=6)
    if unit == "month":
        year, month = today.year, today.month
        if back:
            year, month = (year - 1, 12) if month == 1 else (year, month - 1)
        return date(year, month, 1), date(year, month, _month_end(year, month))
    year = today.year - 1 if back else today.year
    return date(year, 1, 1), date(year, 12, 31)


def _absolute_month(text: str, today: date) -> Span | None:
    for m in re.finditer(_MONTH_YEAR, text):
        word = m.group(1)
        if word == "may" and not m.group(2) and not re.search(r"\b(?:in|during|of)\s+may\b", text):
            continue  # "may" alone is the verb
        if word in ("mar", "march") and not m.group(2) and not re.search(rf"\bin\s+{word}\b", text):
            continue  # "march" alone may be the verb too
        month = MONTHS[word[:3]]
        year = int(m.group(2)) if m.group(2) else latest_year(today, month)
        end = date(year, month, _month_end(year, month))
        return date(year, month, 1), end, m.group(0)
    found = re.search(_YEAR_ONLY, text)
    if found:
        year = int(found.group(1))
        return date(year, 1, 1), date(year, 12, 31), found.group(0)
    return None


def asked(query: str, cue: TimeCue) -> Asked:
    """The parts of a query that named `cue`. Pure. A question word written with a
    capital past the query's first word is a name ("New York", "Go"), and stays."""
    lower = query.lower()
    first = re.match(r"\W*\w+", query)
    start = first.end() if first else 0

    def carrier(m: re.Match[str]) -> bool:
        word = m.group(0)
        return word.lower() in QUESTION_WORDS and (m.end() <= start or not word[0].isupper())

    topic = re.sub(r"\w+", lambda m: " " if carrier(m) else m.group(0), query)
    at = lower.find(cue.said)
    reference = at >= 0 and re.search(_RELATION, lower[:at]) is not None
    rest = re.sub(re.escape(cue.said), " ", topic, flags=re.IGNORECASE) if cue.said else topic
    words = [w.lower() for w in re.findall(r"\w+", rest)]
    hard = " ".join(w for w in words if w not in SOFT_WORDS)
    soft = " ".join(w for w in words if w in SOFT_WORDS)
    return Asked(" ".join(topic.split()), hard, soft, reference)
