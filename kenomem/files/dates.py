"""Days said in text: "2026-02-10", "10 February 2026", "Feb 10, 2026", "yesterday".

The patterns are shared by recall, which reads the span of time a query names
(`recall/temporal.py`), and `remember`, which files an episode under the day its text
states (`stated_moment`). Pure: no clock, no vault; the text is lower-cased by the caller
of the patterns.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

# Not `calendar`: it imports `locale`, a few ms every recall would pay.
MONTH_NAMES = (
    "january february march april may june july august september october november december"
).split()
MONTHS = {name[:3]: i for i, name in enumerate(MONTH_NAMES, 1)}
DAY_NAMES = "monday tuesday wednesday thursday friday saturday sunday".split()

MONTH = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"  # noqa: E501
YEAR = r"((?:19|20)\d\d)"
ISO_DAY = r"\b(\d{4})-(\d\d)-(\d\d)\b"
DAY_MONTH = rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{MONTH}\b(?:,?\s+{YEAR})?"
MONTH_DAY = rf"\b{MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+{YEAR})?"
LAST_WEEKDAY = r"\blast\s+(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
# Days named relative to today, with how many days back.
DAYS_BACK = (("day before yesterday", 2), ("yesterday", 1), ("today", 0), ("tonight", 0))

Span = tuple[date, date, str]  # first day, last day, the words that named them


def latest_year(today: date, month: int) -> int:
    """A month named without a year: the latest one not after today."""
    return today.year if month <= today.month else today.year - 1


def relative_day(text: str, today: date) -> Span | None:
    """A day named relative to today: "yesterday", "the day before yesterday", "today",
    "last friday"."""
    for word, back in DAYS_BACK:
        if re.search(rf"\b{word}\b", text):
            day = today - timedelta(days=back)
            return day, day, word
    m = re.search(LAST_WEEKDAY, text)
    if m:
        target = DAY_NAMES.index(m.group(1))
        back = (today.weekday() - target) % 7 or 7
        day = today - timedelta(days=back)
        return day, day, m.group(0)
    return None


def absolute_day(text: str, today: date) -> Span | None:
    """The first day named by its date: ISO, "8 May 2023", "October 13, 2023"; one
    without a year is the latest not after today's month."""
    m = re.search(ISO_DAY, text)
    if m:
        try:
            day = date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        except ValueError:
            return None
        return day, day, m.group(0)
    for rx, day_group, month_group in ((DAY_MONTH, 1, 2), (MONTH_DAY, 2, 1)):
        m = re.search(rx, text)
        if m:
            month = MONTHS[m.group(month_group)[:3]]
            year = int(m.group(3)) if m.group(3) else latest_year(today, month)
            try:
                day = date(year, month, int(m.group(day_group)))
            except ValueError:
                continue
            return day, day, m.group(0)
    return None


# --- The day a text states, for `remember` -------------------------------------------

# A date glued to other characters is part of something else: a version (v2026-02-10,
# 1.2026-02-10), an id or a file name (build-2026-02-10, 2026-02-10.tar.gz), a path or
# a URL (/2026-02-10/), a time range (2026-02-10..2026-02-12).
_GLUED_BEFORE = re.compile(r"[\w.\-/:+#@=~\\]")
_GLUED_AFTER = re.compile(r"[\w\-/+#@=~\\]|[.:][\w./]")
_ISO_MOMENT = re.compile(
    r"\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d)?(?:Z|[+-]\d\d:?\d\d)?)?", re.IGNORECASE
)
# A day and month without a year counts only after "on": "met her on 10 February".
_ON = re.compile(r"\bon\s+(?:the\s+)?\Z")
_ON_REACH = 12  # how far before a date "on" is looked for
_YEARS = range(1900, 2100)


def stated_moment(text: str, now: datetime) -> datetime | None:
    """The moment a text says it happened on, or None: the day of an ISO date or
    datetime, of a written date ("10 February 2026", "Feb 10, 2026"; without a year only
    after "on"), or "yesterday", "the day before yesterday", "last friday" (relative to
    `now`). Conservative: a date glued to a version, an id, a path or a URL is none, and
    a text that names two different days states none. A day is its first second (UTC),
    as `--when 2026-02-10` is; today is `now`."""
    now = now.astimezone(UTC)
    today = now.date()
    lower = text.lower()
    found: list[datetime] = []
    for m in _ISO_MOMENT.finditer(text):
        if _glued(text, m.start(), m.end()):
            continue
        moment = _iso(m.group(0))
        if moment is not None:
            found.append(moment)
    for rx, day_group, month_group in ((DAY_MONTH, 1, 2), (MONTH_DAY, 2, 1)):
        for m in re.finditer(rx, lower):
            if _glued(lower, m.start(), m.end()):
                continue
            if not m.group(3) and not _ON.search(lower[max(0, m.start() - _ON_REACH) : m.start()]):
                continue
            month = MONTHS[m.group(month_group)[:3]]
            year = int(m.group(3)) if m.group(3) else latest_year(today, month)
            try:
                found.append(_start(date(year, month, int(m.group(day_group)))))
            except ValueError:
                continue
    relative = relative_day(lower, today)
    if relative is not None:
        found.append(_start(relative[0]))
    days = {moment.date() for moment in found}
    if len(days) != 1:
        return None
    if days == {today}:
        return now
    return min(found)


def _glued(text: str, start: int, end: int) -> bool:
    """Whether the date at text[start:end] is glued to the characters around it (only
    those next to it are looked at: a text of many dates costs no more than its length)."""
    before = start > 0 and _GLUED_BEFORE.fullmatch(text[start - 1])
    return bool(before or _GLUED_AFTER.match(text[end : end + 2]))


def _iso(said: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(said.upper().replace(" ", "T"))
    except ValueError:
        return None
    if moment.year not in _YEARS:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def _start(day: date) -> datetime:
    if day.year not in _YEARS:
        raise ValueError(day)
    return datetime(day.year, day.month, day.day, tzinfo=UTC)
