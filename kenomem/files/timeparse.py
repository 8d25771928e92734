"""Times given on the command line: ISO dates and times, or relative ones like `7d`."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

from kenomem.errors import UsageError

_RELATIVE = re.compile(r"^(\d+)\s*(h|d|w|m|y)$")
_UNIT_DAYS = {"h": 1 / 24, "d": 1, "w": 7, "m": 30, "y": 365}


def parse_moment(text: str, now: datetime, *, end_of_day: bool = False) -> datetime:
    """`2026-02-14`, `2026-02-14T10:30`, `today`, `yesterday`, or an age: `12h 7d 2w 3m 1y`.

    A bare date is the start of that day (UTC), or its last second with `end_of_day`, so
    `--until 2026-02-14` includes the 14th.
    """
    value = text.strip().lower()
    today = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    if value in ("today", "yesterday"):
        day = today if value == "today" else today - timedelta(days=1)
        return day + timedelta(days=1, seconds=-1) if end_of_day else day
    if value == "now":
        return now
    m = _RELATIVE.match(value)
    try:
        if m:
            return now - timedelta(days=int(m.group(1)) * _UNIT_DAYS[m.group(2)])
        moment = _bare_date(text.strip(), end_of_day) or datetime.fromisoformat(text.strip())
    except (ValueError, OverflowError):
        raise UsageError(
            f"cannot read the time {text!r}: use 2026-02-14, 2026-02-14T10:30, today, "
            "yesterday, or an age like 12h, 7d, 2w, 3m, 1y"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def _bare_date(text: str, end_of_day: bool) -> datetime | None:
    """A date without a time (2026-02-14, 20260214): its first second, or its last."""
    try:
        day = date.fromisoformat(text)
    except ValueError:
        return None
    moment = datetime(day.year, day.month, day.day)
    return moment + timedelta(days=1, seconds=-1) if end_of_day else moment


def ago(moment: datetime, now: datetime) -> str:
    """'3 days ago', for people reading a terminal."""
    seconds = (now - moment).total_seconds()
    future = seconds < 0
    seconds = abs(seconds)
    for size, unit in (
        (31536000, "year"),
        (2592000, "month"),
        (604800, "week"),
        (86400, "day"),
        (3600, "hour"),
        (60, "minute"),
    ):
        if seconds >= size:
            n = int(seconds // size)
            text = f"{n} {unit}{'s' if n != 1 else ''}"
            return f"in {text}" if future else f"{text} ago"
    return "just now"
