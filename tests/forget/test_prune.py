"""`prune`'s planner (SPEC 6): each rule checked just inside and just outside its boundary.

`plan_prune` is pure: these tests hand it index records (`Doc`) of chosen ages, importance,
pins, reinforcement and access counts, with a fixed `now`, so every boundary is exact. The
other `test_prune_*.py` files run the plan on real vaults and through the command line;
they share the helpers at the top of this file.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kenomem.config import MemorySettings, PruneSettings, Settings
from kenomem.forget.prune import PrunePlan, plan_prune, protected, retention
from kenomem.index import Doc
from tests.forget.helpers import NOW

DAY = 86400.0
DEFAULTS = PruneSettings()


# -- shared helpers -----------------------------------------------------------------------


# -- the planner's helpers ----------------------------------------------------------------


def doc(
    mem_id: str,
    kind: str = "episodic",
    *,
    age: float = 200.0,
    accessed: float | None = None,
    updated: float | None = None,
    importance: int = 5,
    reinforced: int = 0,
    access_count: int = 0,
    pinned: bool = False,
    tags: tuple[str, ...] = (),
    status: str = "active",
    archived: bool = False,
) -> Doc:
    now = NOW.timestamp()
    made = now - age * DAY
    seen = now - (age if accessed is None else accessed) * DAY
    folder = f"archive/{kind}" if archived else kind
    return Doc(
        id=mem_id,
        path=f"{folder}/{mem_id}.md",
        type=kind,
        status=status,
        scope="global",
        title=f"Title of {mem_id}",
        tags=tags,
        body=f"Body of {mem_id}.",
        created=made,
        time=made,
        last_accessed=seen,
        updated=now - updated * DAY if updated is not None else max(made, seen),
        access_count=access_count,
        reinforced=reinforced,
        importance=importance,
        pinned=pinned,
        preview=f"Body of {mem_id}.",
    )


def rules(stale_days: float = 7.0, **prune: Any) -> Settings:
    return Settings(
        memory=MemorySettings(working_stale_days=stale_days), prune=DEFAULTS._replace(**prune)
    )


def plan(
    docs: list[Doc],
    settings: Settings | None = None,
    *,
    access: dict[str, tuple[float, int]] | None = None,
    now: datetime = NOW,
    superseded: bool = False,
) -> PrunePlan:
    return plan_prune(docs, access or {}, settings or rules(), now, superseded=superseded)


def why(result: PrunePlan) -> dict[str, str]:
    return {r.id: r.why for r in result.retire}


def score(d: Doc, settings: PruneSettings = DEFAULTS) -> float:
    return retention(d, (d.last_accessed, d.access_count), NOW.timestamp(), settings)


# -- retention ----------------------------------------------------------------------------


def test_retention_weighs_recency_importance_reinforcement_and_access() -> None:
    assert score(doc("a", age=0, importance=1)) == pytest.approx(0.4)
    assert score(doc("a", age=30, importance=1)) == pytest.approx(0.2)  # one half-life
    assert score(doc("a", age=60, importance=1)) == pytest.approx(0.1)
    assert score(doc("a", age=30, importance=1), DEFAULTS._replace(half_life_days=60)) > 0.2
    assert score(doc("a", age=0, importance=10)) == pytest.approx(0.7)
    assert score(doc("a", age=0, importance=10, reinforced=7)) == pytest.approx(0.85)
    assert score(doc("a", age=0, importance=10, reinforced=7, access_count=15)) == 1.0


@given(
    age=st.floats(0, 2000),
    more=st.floats(0, 500),
    importance=st.integers(1, 9),
    reinforced=st.integers(0, 50),
    count=st.integers(0, 500),
)
def test_retention_is_bounded_and_moves_the_right_way(
    age: float, more: float, importance: int, reinforced: int, count: int
) -> None:
    base = doc("a", age=age, importance=importance, reinforced=reinforced, access_count=count)
    value = score(base)
    assert 0.0 <= value <= 1.0
    assert score(doc("a", age=age + more, importance=importance)) <= score(
        doc("a", age=age, importance=importance)
    )
    assert score(base._replace(importance=importance + 1)) >= value
    assert score(base._replace(reinforced=reinforced + 1)) >= value
    assert score(base._replace(access_count=count + 1)) >= value


@pytest.mark.parametrize(
    ("changes", "kept"),
    [
        ({}, False),
        ({"pinned": True}, True),
        ({"importance": DEFAULTS.keep_importance - 1}, False),
        ({"importance": DEFAULTS.keep_importance}, True),
        ({"reinforced": DEFAULTS.keep_reinforced - 1}, False),
        ({"reinforced": DEFAULTS.keep_reinforced}, True),
    ],
)
def test_protected(changes: dict[str, Any], kept: bool) -> None:
    assert protected(doc("a", importance=1)._replace(**changes), DEFAULTS) is kept


# -- stale working memory -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("stale_days", "age", "retired"),
    [(7.0, 6.9, False), (7.0, 7.1, True), (2.0, 1.9, False), (2.0, 2.1, True)],
)
def test_working_memory_goes_once_stale(stale_days: float, age: float, retired: bool) -> None:
    d = doc("w", "working", age=age, importance=10, reinforced=9)  # protection does not matter
    result = plan([d], rules(stale_days))
    assert why(result) == ({"w": "stale-working"} if retired else {})


def test_working_memory_staleness_counts_from_its_last_update() -> None:
    old_but_updated = doc("w1", "working", age=30, updated=6.9)
    untouched = doc("w2", "working", age=30, updated=7.1)
    pinned = doc("w3", "working", age=30, pinned=True)
    assert why(plan([old_but_updated, untouched, pinned])) == {"w2": "stale-working"}


# -- low retention ------------------------------------------------------------------------


@pytest.mark.parametrize(("age", "retired"), [(89.9, False), (90.1, True)])
def test_an_episode_must_be_older_than_archive_after_days(age: float, retired: bool) -> None:
    d = doc("e", age=age, importance=1)
    assert score(d) < DEFAULTS.retention_threshold
    assert why(plan([d])) == ({"e": "low-retention"} if retired else {})


def test_archive_after_days_is_a_setting() -> None:
    young = doc("e1", age=10.9, importance=1)
    older = doc("e2", age=11.1, importance=1)
    settings = rules(archive_after_days=11, retention_threshold=0.5)
    assert score(young) < 0.5
    assert why(plan([young, older], settings)) == {"e2": "low-retention"}


@pytest.mark.parametrize("delta", [0.001, -0.001])
def test_retention_just_under_or_over_the_threshold(delta: float) -> None:
    d = doc("e", age=120, importance=4, access_count=2)
    threshold = score(d) + delta
    result = plan([d], rules(retention_threshold=threshold))
    assert why(result) == ({"e": "low-retention"} if delta > 0 else {})
    if delta > 0:
        assert result.retire[0].retention == score(d)


@pytest.mark.parametrize(
    ("field", "settings", "inside", "outside"),
    [
        ("importance", {}, DEFAULTS.keep_importance - 1, DEFAULTS.keep_importance),
        ("importance", {"keep_importance": 4}, 3, 4),
        ("reinforced", {}, DEFAULTS.keep_reinforced - 1, DEFAULTS.keep_reinforced),
        ("reinforced", {"keep_reinforced": 6}, 5, 6),
    ],
)
def test_important_or_reinforced_episodes_are_never_retired(
    field: str, settings: dict[str, Any], inside: int, outside: int
) -> None:
    base: dict[str, Any] = {"age": 400, "importance": 1, "reinforced": 0}
    low = doc("low", **{**base, field: inside})
    kept = doc("kept", **{**base, field: outside})
    # Both fell under the threshold: only the protection keeps the second one.
    assert score(kept) < DEFAULTS.retention_threshold
    assert why(plan([low, kept], rules(**settings))) == {"low": "low-retention"}


def test_pinned_episodes_are_never_retired() -> None:
    result = plan([doc("p", age=1000, importance=1, pinned=True)], rules(max_active=0))
    assert result.retire == []


def test_a_recent_access_keeps_an_old_episode() -> None:
    d = doc("e", age=400, importance=1)
    assert why(plan([d])) == {"e": "low-retention"}
    recalled = {"e": (NOW.timestamp(), 0)}  # recall's overlay: newer than the index
    assert retention(d, recalled["e"], NOW.timestamp(), DEFAULTS) == pytest.approx(0.4)
    assert why(plan([d], access=recalled)) == {}


def test_the_access_count_raises_retention() -> None:
    rarely = doc("rarely", age=400, importance=1, access_count=0)
    often = doc("often", age=400, importance=1, access_count=15)
    assert why(plan([rarely, often], rules(retention_threshold=0.1))) == {"rarely": "low-retention"}


def test_procedural_memories_are_permanent() -> None:
    docs = [doc(f"procedural{n}", "procedural", age=5000, importance=1) for n in range(3)]
    assert plan(docs, rules(max_active=0, retention_threshold=1.0)).retire == []


def test_a_fact_fades_after_fact_days_unused_and_not_a_day_before() -> None:
    days = DEFAULTS.fact_days
    old = doc("old", "semantic", age=days + 1)
    young = doc("young", "semantic", age=days - 1)
    result = plan([old, young], rules(retention_threshold=1.0))
    assert why(result) == {"old": "faded"}
    assert result.retire[0].detail == f"not recalled, reinforced or edited for {days + 1:.0f} days"
    assert why(plan([old], rules(fact_days=days + 2))) == {}
    assert why(plan([old], rules(fact_days=0))) == {}  # 0: facts never fade


@pytest.mark.parametrize(
    "fresh",
    [
        {"accessed": 10.0},  # recalled (the file's last_accessed), or reinforced
        {"updated": 10.0},  # written again through remember (the `updated` key)
        {"pinned": True},
        {"importance": DEFAULTS.keep_importance},
        {"reinforced": DEFAULTS.keep_reinforced},
        {"tags": ("summary",)},
    ],
)
def test_a_fact_used_lately_or_kept_by_a_rule_does_not_fade(fresh: dict[str, Any]) -> None:
    assert why(plan([doc("f", "semantic", age=2000, **fresh)])) == {}


def test_recall_and_an_edit_by_hand_keep_a_fact() -> None:
    f = doc("f", "semantic", age=2000)
    recalled = {"f": (NOW.timestamp() - 5 * DAY, 3)}  # recall's overlay: newer than the file
    assert why(plan([f], access=recalled)) == {}
    edited = {"f": NOW.timestamp() - 5 * DAY}  # the file's time: an edit writes no key
    assert why(plan_prune([f], {}, rules(), NOW, edited=edited)) == {}
    assert why(plan_prune([f], {}, rules(), NOW, edited={"f": 0.0})) == {"f": "faded"}


def test_memories_not_active_are_left_alone() -> None:
    docs = [
        doc("proposed", "procedural", status="proposed", age=900, importance=1),
        doc("archived", status="archived", archived=True, age=900, importance=1),
        doc("old-link", status="superseded", age=900, importance=1),
    ]
    result = plan(docs, rules(max_active=0))
    assert (result.retire, result.summaries, result.active, result.kept) == ([], [], 0, 0)


# -- summaries ----------------------------------------------------------------------------


def group(n: int, *, tag: str | None = "travel", age: float = 40.0, prefix: str = "t") -> list[Doc]:
    """`n` old episodes of one topic, a few hours apart, of middling importance."""
    tags = (tag, "extra") if tag else ()
    return [doc(f"{prefix}{i}", age=age + i / 10, importance=5, tags=tags) for i in range(n)]


@pytest.mark.parametrize(
    ("min_group", "size", "made"), [(3, 2, 0), (3, 3, 1), (5, 4, 0), (5, 5, 1)]
)
def test_a_group_is_summarised_from_summarize_min_group(
    min_group: int, size: int, made: int
) -> None:
    result = plan(group(size), rules(summarize_min_group=min_group))
    assert len(result.summaries) == made
    assert why(result) == ({d.id: "summarized" for d in group(size)} if made else {})


@pytest.mark.parametrize(("newest", "made"), [(29.9, 0), (30.1, 1)])
def test_a_group_is_summarised_once_older_than_summarize_after_days(
    newest: float, made: int
) -> None:
    docs = [
        doc("a", age=newest),
        doc("b", age=30.2),
        doc("c", age=30.3),
    ]
    assert len(plan(docs).summaries) == made
    assert len(plan(docs, rules(summarize_after_days=29.8)).summaries) == 1


def test_groups_are_by_month_and_first_tag() -> None:
    january = [doc(f"jan{i}", age=60 + i, tags=("work",)) for i in range(2)]
    february = [doc(f"feb{i}", age=35 + i, tags=("work",)) for i in range(2)]
    other_topic = [doc(f"x{i}", age=36 + i, tags=("home", "work")) for i in range(2)]
    assert plan(january + february + other_topic).summaries == []
    (summary,) = plan([*february, doc("feb9", age=37, tags=("work", "home"))]).summaries
    assert summary.members == ("feb9", "feb1", "feb0")  # oldest first


def test_each_chat_is_summarised_apart_and_its_summary_keeps_its_scope() -> None:
    """Chat X's old episodes never share a summary with chat Y's or the global ones: the
    summary of X's is scoped to X, so only X sees it."""
    chat_a = [d._replace(scope="chat-A") for d in group(3, prefix="a")]
    chat_b = [d._replace(scope="chat-B") for d in group(2, prefix="b")]
    everyone = group(3, prefix="g")
    summaries = {s.memory.scope: s for s in plan(chat_a + chat_b + everyone).summaries}
    assert set(summaries) == {"chat-A", "global"}  # chat-B's two are not a group
    assert summaries["chat-A"].members == ("a2", "a1", "a0")
    assert summaries["chat-A"].title.endswith("(chat chat-A)")
    assert summaries["global"].members == ("g2", "g1", "g0")
    assert "chat" not in summaries["global"].title


def test_untagged_episodes_form_the_misc_group() -> None:
    (summary,) = plan(group(3, tag=None)).summaries
    assert summary.memory.tags == ("summary",)
    assert "misc" in summary.title
    (tagged,) = plan(group(3)).summaries
    assert tagged.memory.tags == ("summary", "travel")


def test_protected_episodes_and_summaries_are_not_summarised() -> None:
    docs = [
        *group(2),
        doc("vip", age=40.5, importance=DEFAULTS.keep_importance, tags=("travel",)),
        doc("pin", age=40.6, pinned=True, tags=("travel",)),
        doc("sum", age=40.7, tags=("travel", "summary")),
    ]
    assert plan(docs).summaries == []


def test_the_summary_memory() -> None:
    members = group(3)
    members[1] = members[1]._replace(importance=6)
    (summary,) = plan(members).summaries
    mem = summary.memory
    assert summary.members == ("t2", "t1", "t0")
    assert mem.extra["summarizes"] == ["t2", "t1", "t0"]
    assert (mem.type, mem.status, mem.source, mem.importance) == ("episodic", "active", "prune", 6)
    assert "summary" in mem.tags
    assert (summary.id, summary.title) == (mem.id, mem.title)
    assert "travel" in mem.title and "February 2026" in mem.title
    assert mem.created == NOW
    for d in members:
        assert d.title in mem.body


def test_the_summary_id_follows_from_its_members() -> None:
    first = plan(group(4)).summaries[0].id
    assert plan(list(reversed(group(4))), now=NOW + timedelta(days=1)).summaries[0].id == first
    assert plan(group(3)).summaries[0].id != first
    assert plan(group(4, prefix="u")).summaries[0].id != first
    assert re.fullmatch(r"mem_\d{8}_\d{6}_[0-9a-f]{4,}", first)


@pytest.mark.parametrize(("accessed", "made"), [(29.9, 0), (30.1, 1)])
def test_an_episode_recalled_within_summarize_after_days_is_not_summarised(
    accessed: float, made: int
) -> None:
    docs = [doc(f"r{i}", age=40 + i, tags=("travel",)) for i in range(3)]
    docs[0] = doc("r0", age=40, tags=("travel",), accessed=accessed)
    result = plan(docs)
    assert len(result.summaries) == made
    assert ("r0" in why(result)) == bool(made)


def test_an_access_in_the_overlay_counts_like_one_in_the_file() -> None:
    docs = [doc(f"r{i}", age=40 + i, tags=("travel",)) for i in range(3)]
    recent = {"r0": ((NOW - timedelta(days=2)).timestamp(), 1)}
    assert plan(docs, access=recent).summaries == []
    assert len(plan(docs).summaries) == 1


def test_summarised_episodes_go_to_the_archive_whatever_their_retention() -> None:
    docs = group(3, age=200)  # old enough to be low-retention too
    result = plan(docs)
    assert why(result) == {d.id: "summarized" for d in docs}
    assert (result.active, result.kept) == (3, 1)


# -- superseded ---------------------------------------------------------------------------


def chain() -> list[Doc]:
    return [
        doc("v1", "semantic", status="superseded", age=300),
        doc("v2", "semantic", status="superseded", age=200),
        doc("v3", "semantic", age=100),
        doc("e1", status="superseded", age=10, importance=10, pinned=True),
        doc("e2", age=10),
        doc("gone", status="superseded", archived=True, age=300),
    ]


def test_superseded_memories_are_kept_unless_asked() -> None:
    assert plan(chain()).retire == []
    result = plan(chain(), superseded=True)
    assert why(result) == {"v1": "superseded", "v2": "superseded", "e1": "superseded"}
    assert (result.active, result.kept) == (2, 2)


# -- the size bound -----------------------------------------------------------------------


def crowd() -> list[Doc]:
    """A protected fact and episode, and five episodes and facts of distinct retention:
    fact-low (0.04) < e-low (0.29) < e-mid (0.38) < e-high (0.49) < fact-used (0.56)."""
    return [
        doc("fact-vip", "semantic", age=5000, importance=DEFAULTS.keep_importance),
        doc("fact-used", "semantic", age=5000, accessed=1, importance=6),
        doc("fact-low", "semantic", age=100, importance=1),
        doc("vip", age=5000, importance=DEFAULTS.keep_importance),
        doc("e-low", age=20, importance=2, tags=("a",)),
        doc("e-mid", age=10, importance=3, tags=("b",)),
        doc("e-high", age=1, importance=4, tags=("c",)),
    ]


@pytest.mark.parametrize(
    ("max_active", "retired"),
    [
        (7, []),
        (6, ["fact-low"]),
        (5, ["fact-low", "e-low"]),
        (4, ["fact-low", "e-low", "e-mid"]),
        (0, ["fact-low", "e-low", "e-mid", "e-high", "fact-used"]),
    ],
)
def test_the_active_tier_is_kept_under_max_active(max_active: int, retired: list[str]) -> None:
    result = plan(crowd(), rules(max_active=max_active))
    assert why(result) == dict.fromkeys(retired, "over-max")
    # The least valuable first, each saying why.
    assert [r.id for r in sorted(result.retire, key=lambda r: r.retention)] == retired
    for r in result.retire:
        assert r.detail.startswith(f"{max_active} active at most; among the least valuable")
        assert "importance" in r.detail and "last used" in r.detail and "recalled" in r.detail
    assert (result.active, result.kept) == (7, 7 - len(retired))
    assert result.over_max == max(0, result.kept - max_active)


def test_the_bound_never_takes_a_summary_and_says_what_is_left_over() -> None:
    summary = doc("s", age=1, tags=("summary", "travel"), importance=1)
    keep = DEFAULTS.keep_importance
    docs = [summary, doc("f", "semantic", age=1, importance=keep), doc("e", age=1, importance=1)]
    result = plan(docs, rules(max_active=1))
    assert why(result) == {"e": "over-max"}
    assert (result.kept, result.over_max) == (2, 1)


def test_a_summary_counts_as_one_active_memory() -> None:
    docs = [*group(3), doc("e-new", age=1, tags=("x",)), doc("f", "semantic", age=1)]
    assert why(plan(docs, rules(max_active=3))) == dict.fromkeys(("t0", "t1", "t2"), "summarized")
    over = plan(docs, rules(max_active=2))
    assert why(over)["e-new"] == "over-max"
    assert over.kept == 2


@pytest.mark.parametrize(("size", "parts"), [(20, [20]), (21, [11, 10]), (45, [15, 15, 15])])
def test_a_busy_month_is_summarised_in_runs_of_at_most_summarize_max_group(
    size: int, parts: list[int]
) -> None:
    docs = group(size)
    summaries = plan(docs).summaries
    assert [len(s.members) for s in summaries] == parts
    assert [m for s in summaries for m in s.members] == [d.id for d in reversed(docs)]
    assert len({s.id for s in summaries}) == len(parts)
    if len(parts) > 1:
        assert all(re.search(r"travel, \d+(-\d+)? \w+ \d{4}$", s.title) for s in summaries)


def test_a_summary_line_does_not_repeat_a_title_that_opens_the_text() -> None:
    docs = [
        doc(f"g{i}", age=40 + i, tags=("travel",))._replace(
            title="Took the ferry to", preview="Took the ferry to the island at dawn."
        )
        for i in range(3)
    ]
    (summary,) = plan(docs).summaries
    lines = [line for line in summary.memory.body.splitlines() if line.startswith("- ")]
    assert len(lines) == 3
    assert all(line.endswith(": Took the ferry to the island at dawn.") for line in lines)


# -- grouping by meaning --------------------------------------------------------------------


def test_untagged_episodes_of_a_month_are_grouped_by_meaning() -> None:
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(7)
    topics = [np.eye(16)[0], np.eye(16)[1], np.eye(16)[2]]
    docs, vectors = [], {}
    for t, centre in enumerate(topics):
        for n in range(4 if t < 2 else 1):  # two topics of 4, and one stray episode
            mem_id = f"t{t}n{n}"
            docs.append(doc(mem_id, age=200.0 + n * 0.01 + t * 0.1))
            v = centre + 0.15 * rng.standard_normal(16)
            vectors[mem_id] = (v / np.linalg.norm(v)).astype(np.float32)
    by_words = plan(docs)
    assert [len(s.members) for s in by_words.summaries] == [9]  # one month, no tags: one
    settings = rules(summarize_min_group=3)
    grouped = plan_prune(docs, {}, settings, NOW, vectors=vectors)
    groups = sorted(sorted(s.members) for s in grouped.summaries)
    assert groups == [[f"t0n{n}" for n in range(4)], [f"t1n{n}" for n in range(4)]]
    assert why(grouped).get("t2n0") != "summarized"  # a group of one is no summary
    assert all(s.memory.tags == ("summary",) for s in grouped.summaries)
