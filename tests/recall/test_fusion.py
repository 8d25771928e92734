"""Fusing the keyword and the meaning rankings (recall/fusion.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kenomem.index import Filters
from kenomem.recall.fusion import fuse
from kenomem.recall.search import _nearest_allowed
from kenomem.vault.core import CoreVault
from tests.conftest import write

scores = st.lists(st.floats(0, 1), min_size=1, max_size=30)


@st.composite
def pairs(draw: st.DrawFn) -> tuple[list[float], list[float | None]]:
    keyword = draw(scores)
    semantic = draw(
        st.lists(st.none() | st.floats(-1, 1), min_size=len(keyword), max_size=len(keyword))
    )
    return keyword, semantic


@pytest.mark.parametrize("how", ["rrf", "blend"])
@given(pair=pairs(), weight=st.floats(0, 1))
def test_fused_relevance_lies_in_0_1_with_a_best_of_1(
    how: str, pair: tuple[list[float], list[float | None]], weight: float
) -> None:
    keyword, semantic = pair
    fused = fuse(keyword, semantic, how, weight)
    assert len(fused) == len(keyword)
    assert all(0.0 <= f <= 1.0 for f in fused)
    if any(f > 0 for f in fused):
        assert max(fused) == pytest.approx(1.0)


@pytest.mark.parametrize("how", ["rrf", "blend"])
@given(keyword=scores)
def test_without_meaning_the_keyword_order_stands(how: str, keyword: list[float]) -> None:
    fused = fuse(keyword, [None] * len(keyword), how, 0.5)
    for a in range(len(keyword)):
        for b in range(len(keyword)):
            if keyword[a] > keyword[b] > 0:
                assert fused[a] >= fused[b]


@pytest.mark.parametrize("how", ["rrf", "blend"])
def test_a_memory_found_by_meaning_alone_is_relevant(how: str) -> None:
    # keyword hits 0 and 1; candidate 2 shares no word but is the nearest in meaning
    fused = fuse([1.0, 0.5, 0.0], [0.2, 0.1, 0.9], how, 0.5)
    assert fused[2] > 0.4


@pytest.mark.parametrize("how", ["rrf", "blend"])
def test_the_weight_moves_the_balance(how: str) -> None:
    keyword, semantic = [1.0, 0.2], [0.1, 0.9]
    words = fuse(keyword, semantic, how, weight=0.0)
    meaning = fuse(keyword, semantic, how, weight=1.0)
    assert words[0] > words[1] and meaning[1] > meaning[0]


def test_rrf_counts_ranks_not_scores() -> None:
    a = fuse([10.0, 9.0, 1.0], [0.9, 0.8, 0.7], "rrf", 0.5, k=1)
    b = fuse([1.0, 0.9, 0.1], [0.3, 0.2, 0.1], "rrf", 0.5, k=1)
    assert a == pytest.approx(b)


def test_blend_calibrates_the_cosine_above_the_floor() -> None:
    fused = fuse([0.0, 0.0], [0.9, 0.75], "blend", weight=1.0, floor=0.75)
    assert fused == pytest.approx([1.0, 0.0])


def test_an_unknown_fusion_is_refused() -> None:
    with pytest.raises(ValueError, match="fusion"):
        fuse([1.0], [None], "mean")


def test_adaptive_trusts_meaning_more_when_the_two_searches_disagree() -> None:
    # candidate 0: the words' best, far in meaning; candidate 1: the nearest, no shared word
    keyword, semantic = [1.0, 0.0, 0.5], [0.1, 0.9, 0.2]
    blend = fuse(keyword, semantic, "blend", 0.5)
    adaptive = fuse(keyword, semantic, "adaptive", 0.5)
    assert blend[0] > blend[1] and adaptive[1] > adaptive[0]


def test_adaptive_is_the_blend_when_the_two_searches_agree() -> None:
    keyword, semantic = [1.0, 0.6, 0.0], [0.9, 0.7, 0.1]
    assert fuse(keyword, semantic, "adaptive", 0.5) == pytest.approx(
        fuse(keyword, semantic, "blend", 0.5)
    )


@pytest.mark.both_engines
@pytest.mark.parametrize("wanted", [1, 3, 8, 20])
def test_the_nearest_allowed_are_those_a_whole_lookup_would_keep(
    vault_dir: Path, wanted: int
) -> None:
    """Looked up a slice at a time, nearest first: the same memories, in the same order,
    as filtering every one the vector search brought."""
    for n in range(24):
        kind = "semantic" if n % 3 == 0 else "episodic"
        write(vault_dir, f"{kind}/m{n:02}.md", f"---\nid: m{n:02}\ntype: {kind}\n---\nNote {n}.\n")
    vault = CoreVault.open(vault_dir)
    vault.sync()
    near = [(f"m{n:02}", 1.0 - n / 100) for n in (5, 0, 17, 3, 9, 12, 21, 1, 6, 15, 18, 2)]
    near += [("gone", 0.5)]  # a vector whose memory the index no longer has
    only = Filters(types=("semantic",), statuses=("active",))
    brought = [h.doc.id for h in _nearest_allowed(vault, near, only, wanted)]
    every = {h.doc.id for h in vault.browse(only).hits}
    assert brought == [mem_id for mem_id, _ in near if mem_id in every][:wanted]
