"""The three-way merge of memory files and buffer days, on texts alone."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from itertools import count

from hypothesis import given, settings
from hypothesis import strategies as st

from kenomem.files import buffer, fm
from kenomem.share.merge import MERGE_OF, REVIEW_TAG, merge, merge_memory

NOW = datetime(2026, 3, 1, tzinfo=UTC)
PATH = "semantic/deploy-day.md"
BASE = """---
id: mem_1
title: Deploy day  # the human's comment
tags: [ops]
last_accessed: 2026-01-01T00:00:00Z
access_count: 3
reinforced: 1
status: active
mine: kept as I wrote it
---
Deploys run on Fridays.
"""


def ids() -> object:
    numbers = count(1)
    return lambda: f"mem_new_{next(numbers)}"


def run(base: str | None, ours: str, theirs: str, path: str = PATH) -> object:
    return merge(path, base, ours, theirs, now=NOW, new_id=ids())  # type: ignore[arg-type]


def meta(text: str) -> dict[str, object]:
    return fm.parse(fm.split(text).fm_text)


def touched(text: str, times: int, when: str) -> str:
    m = meta(text)
    new = int(str(m["access_count"])) + times
    return text.replace(f"access_count: {m['access_count']}", f"access_count: {new}").replace(
        f"last_accessed: {m['last_accessed']}", f"last_accessed: {when}"
    )


def test_touches_on_both_sides_add_up_and_keep_the_later_time() -> None:
    ours = touched(BASE, 2, "2026-02-01T00:00:00Z")
    theirs = touched(BASE, 5, "2026-02-03T00:00:00Z")
    result = merge_memory(PATH, BASE, ours, theirs, now=NOW, new_id=ids())  # type: ignore[arg-type]
    assert meta(result.text)["access_count"] == "10"
    assert meta(result.text)["last_accessed"] == "2026-02-03T00:00:00Z"
    assert result.copies == ()
    # Only those two lines changed: the human's comment and key stay byte for byte.
    changed = [
        (a, b) for a, b in zip(BASE.splitlines(), result.text.splitlines(), strict=True) if a != b
    ]
    assert [a.split(":")[0] for a, _ in changed] == ["last_accessed", "access_count"]


def test_the_same_increment_on_both_sides_counts_twice() -> None:
    one = touched(BASE, 1, "2026-02-01T00:00:00Z")
    result = merge_memory(PATH, BASE, one, one.replace("02-01", "02-02"), now=NOW, new_id=ids())  # type: ignore[arg-type]
    assert meta(result.text)["access_count"] == "5"


def test_a_status_change_wins_over_active() -> None:
    superseded = BASE.replace("status: active", "status: superseded\nsuperseded_by: mem_2")
    ours = touched(BASE, 1, "2026-02-05T00:00:00Z")
    for a, b in ((ours, superseded), (superseded, ours)):
        result = merge_memory(PATH, BASE, a, b, now=NOW, new_id=ids())  # type: ignore[arg-type]
        assert meta(result.text)["status"] == "superseded"
        assert meta(result.text)["superseded_by"] == "mem_2"
        assert meta(result.text)["access_count"] == "4"
        assert result.copies == ()


def test_a_human_edit_on_one_side_carries_the_other_sides_touch() -> None:
    edited = BASE.replace("Fridays.", "Thursdays.").replace("Deploy day ", "Deploy  day ")
    ours = touched(BASE, 1, "2026-02-05T00:00:00Z")
    result = merge_memory(PATH, BASE, ours, edited, now=NOW, new_id=ids())  # type: ignore[arg-type]
    assert result.copies == ()
    assert result.text == touched(edited, 1, "2026-02-05T00:00:00Z")  # theirs' bytes kept


def test_both_bodies_changed_keeps_ours_and_theirs_as_a_new_memory() -> None:
    ours = BASE.replace("Fridays.", "Thursdays.")
    theirs = touched(BASE.replace("Fridays.", "Mondays."), 2, "2026-02-05T00:00:00Z")
    result = merge_memory(PATH, BASE, ours, theirs, now=NOW, new_id=ids())  # type: ignore[arg-type]
    assert "Thursdays." in result.text and "<<<<<<<" not in result.text
    assert meta(result.text)["access_count"] == "5"
    (copy,) = result.copies
    assert copy.folder == "semantic"
    copy_meta = meta(copy.text)
    assert copy_meta["id"] == "mem_new_1"
    assert copy_meta[MERGE_OF] == "mem_1"
    assert copy_meta["tags"] == ["ops", REVIEW_TAG]
    assert copy_meta["access_count"] == "0"
    assert "Mondays." in copy.text
    assert result.notes


def test_a_key_both_sides_set_differently_keeps_theirs_for_review() -> None:
    ours = BASE.replace("kept as I wrote it", "mine")
    theirs = BASE.replace("kept as I wrote it", "theirs")
    result = merge_memory(PATH, BASE, ours, theirs, now=NOW, new_id=ids())  # type: ignore[arg-type]
    assert meta(result.text)["mine"] == "mine"
    assert meta(result.copies[0].text)["mine"] == "theirs"


def test_tags_merge_both_sides_additions_and_removals() -> None:
    ours = BASE.replace("tags: [ops]", "tags: [ops, friday]")
    theirs = BASE.replace("tags: [ops]", "tags: [deploy]")
    result = merge_memory(PATH, BASE, ours, theirs, now=NOW, new_id=ids())  # type: ignore[arg-type]
    assert meta(result.text)["tags"] == ["friday", "deploy"]


def test_an_unreadable_side_keeps_ours_and_theirs_beside_it() -> None:
    broken = "---\nid: [mem_1\n---\nDeploys run on Mondays.\n"
    mine = touched(BASE, 1, "2026-02-05T00:00:00Z")
    for ours, theirs in ((mine, broken), (broken, mine)):
        result = merge_memory(PATH, BASE, ours, theirs, now=NOW, new_id=ids())  # type: ignore[arg-type]
        assert result.text == ours
        (copy,) = result.copies
        assert copy.text.endswith(theirs)
        assert meta(copy.text)["tags"] == [REVIEW_TAG]


def test_both_added_the_same_file() -> None:
    ours = touched(BASE, 1, "2026-02-05T00:00:00Z")
    result = merge_memory(PATH, None, ours, BASE, now=NOW, new_id=ids())  # type: ignore[arg-type]
    assert meta(result.text)["access_count"] == "4"
    assert result.copies == ()


# -- property tests ----------------------------------------------------------------------

counts = st.integers(0, 50)
stamps = st.integers(0, 10**6).map(
    lambda s: fm.format_time(datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=s))
)


def memory(n: int, accessed: str, status: str, body: str) -> str:
    return (
        f"---\nid: mem_1\ntitle: A memory\nlast_accessed: {accessed}\naccess_count: {n}\n"
        f"status: {status}\n---\n{body}\n"
    )


@settings(max_examples=200, deadline=None)
@given(
    counts,
    counts,
    counts,
    stamps,
    stamps,
    stamps,
    st.sampled_from(["active", "archived", "superseded"]),
    st.sampled_from(["active", "archived", "superseded"]),
    st.sampled_from(["Fridays.", "Mondays.", "Thursdays."]),
    st.sampled_from(["Fridays.", "Mondays.", "Thursdays."]),
)
def test_memory_merge_sums_counters_commutes_and_never_marks(
    base_n: int,
    ours_inc: int,
    theirs_inc: int,
    t0: str,
    t1: str,
    t2: str,
    s1: str,
    s2: str,
    b1: str,
    b2: str,
) -> None:
    t1, t2 = max(t0, t1), max(t0, t2)  # a touch moves the time on
    base = memory(base_n, t0, "active", "Fridays.")
    ours = memory(base_n + ours_inc, t1, s1, b1)
    theirs = memory(base_n + theirs_inc, t2, s2, b2)
    one = merge_memory(PATH, base, ours, theirs, now=NOW, new_id=ids())  # type: ignore[arg-type]
    two = merge_memory(PATH, base, theirs, ours, now=NOW, new_id=ids())  # type: ignore[arg-type]
    for result in (one, two):
        m = meta(result.text)
        assert int(str(m["access_count"])) == base_n + ours_inc + theirs_inc
        assert m["last_accessed"] == max(t1, t2) or (t1 == t2 == m["last_accessed"])
        assert "<<<<<<<" not in result.text and ">>>>>>>" not in result.text
        texts = [result.text, *(c.text for c in result.copies)]
        # Never a lost edit: each changed body is in the result or in a copy.
        for body in {b1, b2} - {"Fridays."}:
            assert any(body in text for text in texts)
    # The same decision whichever side merges, but for which body stays in place.
    m1, m2 = meta(one.text), meta(two.text)
    assert {k: v for k, v in m1.items()} == {k: v for k, v in m2.items()} or b1 != b2
    assert m1["status"] == m2["status"]
    assert {one.text.split("---\n")[-1], *(c.text.split("---\n")[-1] for c in one.copies)} == {
        two.text.split("---\n")[-1],
        *(c.text.split("---\n")[-1] for c in two.copies),
    }


# -- buffer days -------------------------------------------------------------------------

DAY = date(2026, 3, 1)
DAY_PATH = buffer.day_path(DAY)


def day_text(entries: list[tuple[int, str]], done: int | None = None) -> str:
    head = {"date": DAY, "consolidated": None}
    if done is not None:
        head = {"date": DAY, "consolidated": datetime(2026, 3, 2, tzinfo=UTC),
                buffer.DONE_KEY: done}  # fmt: skip
    text = fm.emit(head)
    for second, words in entries:
        at = datetime(2026, 3, 1, tzinfo=UTC) + timedelta(seconds=second)
        text += buffer.format_entry(buffer.Entry(at, "me", "", "", words))
    return text


def test_a_day_merges_as_the_union_of_its_entries_in_time_order() -> None:
    base = day_text([(10, "first")])
    ours = day_text([(10, "first"), (30, "ours at 30")])
    theirs = day_text([(10, "first"), (20, "theirs at 20"), (40, "theirs at 40")])
    result = run(base, ours, theirs, DAY_PATH)
    day = buffer.parse_day(DAY_PATH, result.text)  # type: ignore[attr-defined]
    assert [e.text for e in day.entries] == ["first", "theirs at 20", "ours at 30", "theirs at 40"]
    assert result.text == run(base, theirs, ours, DAY_PATH).text  # type: ignore[attr-defined]


def test_a_consolidated_day_keeps_only_its_consolidated_run() -> None:
    base = day_text([(10, "first")])
    ours = day_text([(10, "first"), (30, "ours")], done=2)
    theirs = day_text([(10, "first"), (20, "theirs")])
    day = buffer.parse_day(DAY_PATH, run(base, ours, theirs, DAY_PATH).text)  # type: ignore[attr-defined]
    assert day.consolidated is not None
    assert day.done == 1  # "theirs" (not consolidated) comes before "ours": redone, not lost
    assert [e.text for e in day.pending] == ["theirs", "ours"]


entry_sets = st.lists(
    st.tuples(st.integers(0, 100), st.sampled_from(["a", "b", "c", "d", "multi\nline"])),
    max_size=8,
    unique=True,
)


@settings(max_examples=200, deadline=None)
@given(entry_sets, entry_sets, entry_sets)
def test_day_merge_keeps_each_entry_once_in_time_order(
    base: list[tuple[int, str]],
    extra_ours: list[tuple[int, str]],
    extra_theirs: list[tuple[int, str]],
) -> None:
    ours = sorted(set(base) | set(extra_ours))
    theirs = sorted(set(base) | set(extra_theirs))
    merged = run(day_text(sorted(base)), day_text(ours), day_text(theirs), DAY_PATH)
    day = buffer.parse_day(DAY_PATH, merged.text)  # type: ignore[attr-defined]
    got = [
        (int((e.at - datetime(2026, 3, 1, tzinfo=UTC)).total_seconds()), e.text)
        for e in day.entries
    ]
    assert sorted(got) == sorted(set(ours) | set(theirs))
    assert [s for s, _ in got] == sorted(s for s, _ in got)
    assert "<<<<<<<" not in merged.text  # type: ignore[attr-defined]
    swapped = run(day_text(sorted(base)), day_text(theirs), day_text(ours), DAY_PATH)
    assert sorted(got) == sorted(
        (int((e.at - datetime(2026, 3, 1, tzinfo=UTC)).total_seconds()), e.text)
        for e in buffer.parse_day(DAY_PATH, swapped.text).entries  # type: ignore[attr-defined]
    )


def test_the_merge_names_the_buffer_as_the_vault_does() -> None:
    from kenomem.files import paths
    from kenomem.share import merge as merge_module

    assert merge_module.BUFFER_DIR == paths.BUFFER_DIR
    line = buffer.format_entry(buffer.Entry(NOW, "me", "s", "", "x")).splitlines()[1]
    assert merge_module._HEADING.match(line)


fragments = st.sampled_from(
    [
        "---",
        "id: mem_1",
        "title: x",
        "access_count: 3",
        "access_count: [1",
        "tags: [a, b]",
        "tags:\n  - a",
        "last_accessed: 2026-01-01T00:00:00Z",
        "status: archived",
        "body text",
        "## 10:00:00 me",
        "key: |\n  multi\n  line",
        "&a x",
        "*a",
        "",
        "date: 2026-03-01",
        "consolidated: 2026-03-02T00:00:00Z",
        "consolidated_entries: 1",
        "\ufeff---",
    ]
)
hostile = st.lists(fragments, max_size=10).map("\n".join)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.none(), hostile), hostile, hostile)
def test_any_three_texts_merge_to_a_text_without_markers(
    base: str | None, ours: str, theirs: str
) -> None:
    for path in (PATH, DAY_PATH):
        result = run(base, ours, theirs, path)
        assert isinstance(result.text, str)  # type: ignore[attr-defined]
        for text in (result.text, *(c.text for c in result.copies)):  # type: ignore[attr-defined]
            assert "<<<<<<<" not in text
