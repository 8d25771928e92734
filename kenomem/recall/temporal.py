"""Time said in a query: "yesterday", "last week", "in May 2023", "3 days ago".

`time_cue(query, now)` finds the span of time a query names, relative to `now`, so that
recall can prefer (and look for) memories whose `when` falls inside it. Pure: no clock,
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
    """The first span of time the query names, or None."""
    text = query.lower()
    if not any(w in _HINTS or w.isdigit() for w in _WORDS.findall(text)):
        return None
    today = now.astimezone(UTC).date()
    for finder in (_relative, absolute_day, _absolute_month):
        found = finder(text, today)
        if found is not None:
            start, end, said = found
            return TimeCue(_at(start), _at(end + timedelta(days=1)) - timedelta(seconds=1), said)
    return None


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
