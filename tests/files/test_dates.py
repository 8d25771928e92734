"""kenomem.files.dates.stated_moment: the day a text says it happened on, conservatively."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kenomem.files.dates import stated_moment

NOW = datetime(2026, 11, 26, 9, 15, tzinfo=UTC)  # a Thursday


def day(y: int, m: int, d: int, hh: int = 0, mm: int = 0) -> datetime:
    return datetime(y, m, d, hh, mm, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Adrian met Priya on 2026-02-10", day(2026, 2, 10)),
        ("Adrian met Priya on 2026-02-10.", day(2026, 2, 10)),
        ("(2026-02-10) kickoff", day(2026, 2, 10)),
        ("Adrian met Priya on 10 February 2026", day(2026, 2, 10)),
        ("Adrian met Priya on the 10th of February, 2026", day(2026, 2, 10)),
        ("On Feb 10, 2026 the cluster was upgraded", day(2026, 2, 10)),
        ("the cluster was upgraded February 10th 2026", day(2026, 2, 10)),
        ("We met on 10 Feb", day(2026, 2, 10)),  # no year: the latest 10 Feb
        ("We met on Dec 3", day(2025, 12, 3)),  # not a December to come
        ("Call at 2026-02-10T14:30", day(2026, 2, 10, 14, 30)),
        ("Call at 2026-02-10 14:30:00+02:00", day(2026, 2, 10, 12, 30)),
        ("Yesterday we fixed the login bug", day(2026, 11, 25)),
        ("the day before yesterday it rained", day(2026, 11, 24)),
        ("Last Friday the demo went well", day(2026, 11, 20)),
        ("Tonight we ship", NOW),  # today: now
        ("Met on 2026-02-10, wrote it up on 10 February 2026", day(2026, 2, 10)),  # the same day
    ],
)
def test_a_stated_day(text: str, expected: datetime) -> None:
    assert stated_moment(text, NOW) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Adrian met Priya",
        "Upgraded to v2026-02-10 of the tool",  # a version
        "Release 1.2026-02-10 is out",
        "The job build-2026-02-10-a3f failed",  # an id
        "Downloaded backup_2026-02-10.tar.gz",  # a file name
        "See https://example.com/2026-02-10/notes",  # a URL
        "Logs in /var/log/2026-02-10",
        "range 2026-02-10..2026-02-12",
        "From 2026-02-10 to 2026-02-12 we were in Rome",  # two days: which one?
        "Yesterday we planned the 2026-02-10 launch",  # two days
        "We met 10 Feb",  # a day without a year, not after "on"
        "I may 5 times have said so",  # "may" the verb
        "On 2026-02-30 nothing happened",  # no such day
        "Back in 0999-01-01",  # a year out of range
        "The ticket KEY-2026 is done",
        "Deploys go out on Tuesdays",
        "",
    ],
)
def test_no_stated_day(text: str) -> None:
    assert stated_moment(text, NOW) is None


WORDS = st.sampled_from(
    ["met", "the", "on", "v", "build", "-", ".", "/", ":", "_", "x", "2026", "Feb", "10", " "]
)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80) | st.lists(WORDS, max_size=20).map("".join))
def test_hostile_text_never_breaks_it(text: str) -> None:
    found = stated_moment(text, NOW)
    assert found is None or (found.tzinfo is not None and 1900 <= found.year < 2100)


@settings(max_examples=200, deadline=None)
@given(
    st.dates(min_value=day(1900, 1, 1).date(), max_value=day(2099, 12, 31).date()),
    st.sampled_from(["Met Ana on {}.", "{}: the outage", "On {} we shipped", "({})"]),
)
def test_an_iso_day_in_a_sentence_is_found(when: object, form: str) -> None:
    found = stated_moment(form.format(when), NOW)
    assert found is not None and found.date() == when


@settings(max_examples=200, deadline=None)
@given(
    st.dates(min_value=day(1900, 1, 1).date(), max_value=day(2099, 12, 31).date()),
    st.sampled_from(["v{}", "build-{}", "{}.tar.gz", "/{}/", "id{}", "{}_x", "{}-rc1", "x:{}"]),
)
def test_an_iso_day_glued_to_something_else_is_not_a_date(when: object, form: str) -> None:
    assert stated_moment(f"released {form.format(when)} today", NOW) == NOW  # only "today"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-02-10" * 10_000, None),  # glued to each other: no date
        ("on 10 feb " * 10_000, day(2026, 2, 10)),  # one day, many times
        (" 2026-02-10 " * 8_000, day(2026, 2, 10)),
        ("on 10 feb on 11 feb " * 5_000, None),
    ],
)
def test_a_text_as_long_as_a_memory_of_many_dates(text: str, expected: datetime | None) -> None:
    # Each date looks only at its neighbours: a text of many dates is read in one pass
    # (it once took tens of seconds: every date searched all the text before it).
    assert stated_moment(text, NOW) == expected
