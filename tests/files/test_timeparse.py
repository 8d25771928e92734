"""kenomem.files.timeparse: `--since` / `--until` values and '3 days ago'."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kenomem.errors import UsageError
from kenomem.files.timeparse import ago, parse_moment

NOW = datetime(2026, 2, 20, 15, 45, 30, tzinfo=UTC)


def test_iso_date_is_start_of_day_utc() -> None:
    assert parse_moment("2026-02-14", NOW) == datetime(2026, 2, 14, tzinfo=UTC)


def test_iso_date_until_is_end_of_day() -> None:
    got = parse_moment("2026-02-14", NOW, end_of_day=True)
    assert got == datetime(2026, 2, 14, 23, 59, 59, tzinfo=UTC)


def test_iso_basic_date_until_is_end_of_day() -> None:
    # `20260214` is accepted as the same day as `2026-02-14`, so it must end the same way.
    assert parse_moment("20260214", NOW) == datetime(2026, 2, 14, tzinfo=UTC)
    got = parse_moment("20260214", NOW, end_of_day=True)
    assert got == datetime(2026, 2, 14, 23, 59, 59, tzinfo=UTC)


def test_iso_date_and_time() -> None:
    assert parse_moment("2026-02-14T10:30", NOW) == datetime(2026, 2, 14, 10, 30, tzinfo=UTC)
    assert parse_moment("2026-02-14 10:30:15", NOW) == datetime(2026, 2, 14, 10, 30, 15, tzinfo=UTC)
    assert parse_moment("2026-02-14T10:30:00Z", NOW) == datetime(2026, 2, 14, 10, 30, tzinfo=UTC)


def test_time_with_offset_is_converted_to_utc() -> None:
    got = parse_moment("2026-02-14T12:30:00+02:00", NOW)
    assert got == datetime(2026, 2, 14, 10, 30, tzinfo=UTC)
    assert got.utcoffset() == timedelta(0)


def test_time_is_not_moved_by_end_of_day() -> None:
    got = parse_moment("2026-02-14T10:30", NOW, end_of_day=True)
    assert got == datetime(2026, 2, 14, 10, 30, tzinfo=UTC)


def test_surrounding_space_ignored() -> None:
    assert parse_moment("  2026-02-14 ", NOW, end_of_day=True) == datetime(
        2026, 2, 14, 23, 59, 59, tzinfo=UTC
    )


def test_today_and_yesterday() -> None:
    assert parse_moment("today", NOW) == datetime(2026, 2, 20, tzinfo=UTC)
    assert parse_moment("Today", NOW, end_of_day=True) == datetime(
        2026, 2, 20, 23, 59, 59, tzinfo=UTC
    )
    assert parse_moment("yesterday", NOW) == datetime(2026, 2, 19, tzinfo=UTC)
    assert parse_moment("YESTERDAY", NOW, end_of_day=True) == datetime(
        2026, 2, 19, 23, 59, 59, tzinfo=UTC
    )


def test_today_is_the_utc_day() -> None:
    # 01:00 on the 21st in UTC+5 is still the 20th in UTC.
    now = datetime(2026, 2, 21, 1, 0, tzinfo=timezone(timedelta(hours=5)))
    assert parse_moment("today", now) == datetime(2026, 2, 20, tzinfo=UTC)


def test_now() -> None:
    assert parse_moment("now", NOW) == NOW


@pytest.mark.parametrize(
    ("text", "delta"),
    [
        ("12h", timedelta(hours=12)),
        ("1h", timedelta(hours=1)),
        ("7d", timedelta(days=7)),
        ("0d", timedelta(0)),
        ("2w", timedelta(days=14)),
        ("3m", timedelta(days=90)),
        ("1y", timedelta(days=365)),
        ("7D", timedelta(days=7)),
        (" 7d ", timedelta(days=7)),
        ("7 d", timedelta(days=7)),
    ],
)
def test_relative_ages(text: str, delta: timedelta) -> None:
    assert parse_moment(text, NOW) == NOW - delta


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 1000), st.sampled_from(["h", "d", "w", "m", "y"]))
def test_relative_ages_go_back_from_now(n: int, unit: str) -> None:
    hours = {"h": 1, "d": 24, "w": 24 * 7, "m": 24 * 30, "y": 24 * 365}[unit]
    assert parse_moment(f"{n}{unit}", NOW) == NOW - timedelta(hours=n * hours)


@pytest.mark.parametrize("text", ["3000y", "999999w", "99999999999d", "9" * 30 + "h"])
def test_huge_age_is_a_usage_error_not_a_crash(text: str) -> None:
    # An age beyond the calendar must come back as a clear usage error, or as a moment
    # before now; an OverflowError would reach the user as an unexpected crash.
    try:
        got = parse_moment(text, NOW)
    except UsageError as exc:
        assert exc.exit_code == 2
    else:
        assert got <= NOW


@pytest.mark.parametrize(
    "text",
    ["", "   ", "soon", "7x", "-7d", "7", "d7", "1.5d", "2026-13-01", "2026-02-30", "14/02/2026"],
)
def test_bad_input_is_a_usage_error(text: str) -> None:
    with pytest.raises(UsageError) as info:
        parse_moment(text, NOW)
    assert info.value.exit_code == 2
    assert "2026-02-14" in info.value.message


@pytest.mark.parametrize(
    ("delta", "text"),
    [
        (timedelta(seconds=0), "just now"),
        (timedelta(seconds=59), "just now"),
        (timedelta(seconds=60), "1 minute ago"),
        (timedelta(minutes=5, seconds=59), "5 minutes ago"),
        (timedelta(hours=1), "1 hour ago"),
        (timedelta(hours=23, minutes=59), "23 hours ago"),
        (timedelta(days=1), "1 day ago"),
        (timedelta(days=3, hours=2), "3 days ago"),
        (timedelta(days=7), "1 week ago"),
        (timedelta(days=20), "2 weeks ago"),
        (timedelta(days=30), "1 month ago"),
        (timedelta(days=200), "6 months ago"),
        (timedelta(days=365), "1 year ago"),
        (timedelta(days=800), "2 years ago"),
        (-timedelta(hours=2), "in 2 hours"),
        (-timedelta(days=1), "in 1 day"),
        (-timedelta(seconds=30), "just now"),
    ],
)
def test_ago(delta: timedelta, text: str) -> None:
    assert ago(NOW - delta, NOW) == text
