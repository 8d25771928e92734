"""The keyword side weighed by how much of the query a hit holds, and the one test of
"related enough" by meaning (recall/fusion.py `covered`, `near`; recall/search.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kenomem.config import RecallSettings
from kenomem.recall.confidence import share
from kenomem.recall.fusion import closeness, covered, fuse, near, near_bar

DEFAULTS = RecallSettings()


def ranked_first(
    keyword: list[float],
    held: list[float],
    cosine: list[float | None],
    coverage: float = DEFAULTS.coverage,
    weight: float = DEFAULTS.semantic_weight,
) -> int:
    """Which candidate the default fusion puts first, the keyword side weighed by `held`
    (with `coverage` 0: the blend as it was, no coverage at all)."""
    typical = 0.80
    fusion = DEFAULTS.fusion if coverage else "blend"
    kept = covered(keyword, held, coverage)
    fused = fuse(kept, cosine, fusion, weight, DEFAULTS.rrf_k, typical, max(held))
    return max(range(len(fused)), key=lambda i: fused[i])


# (the distractor: the best keyword hit, holding one common word of the query's four; the
# paraphrase: no word in common, much nearer in meaning)
TABLE = [
    # keyword, held share, cosine (typical 0.80)
    pytest.param([1.0, 0.0], [0.15, 0.0], [0.86, 0.89], id="one common word of four"),
    pytest.param([1.0, 0.0], [0.25, 0.0], [0.85, 0.90], id="one word of three"),
    pytest.param([1.0, 0.2], [0.2, 0.1], [0.84, 0.88], id="both hold a word"),
]


@pytest.mark.parametrize(("keyword", "held", "cosine"), TABLE)
def test_a_paraphrase_outranks_a_stranger_sharing_one_common_word(
    keyword: list[float], held: list[float], cosine: list[float | None]
) -> None:
    assert ranked_first(keyword, held, cosine) == 1
    # Before (the blend, no coverage): the best keyword hit had keyword relevance 1.0
    # however little of the query it held, and won.
    assert ranked_first(keyword, held, cosine, coverage=0.0) == 0


def test_a_hit_holding_the_whole_query_still_wins_over_a_paraphrase() -> None:
    # Every word of the query, and near in meaning too: the words are not thrown away.
    assert ranked_first([1.0, 0.0], [1.0, 0.0], [0.88, 0.90]) == 0


@pytest.mark.parametrize(
    ("coverage", "expected"),
    [(0.0, [1.0, 0.5, 0.0]), (1.0, [0.25, 0.5, 0.0]), (0.5, [0.625, 0.5, 0.0])],
)
def test_covered_weighs_each_hit_by_its_share(coverage: float, expected: list[float]) -> None:
    assert covered([1.0, 0.5, 0.0], [0.25, 1.0, 0.7], coverage) == pytest.approx(expected)


@pytest.mark.parametrize(("held", "meaning_first"), [(0.1, True), (0.9, False)])
def test_covered_trusts_meaning_more_when_no_hit_holds_much_of_the_query(
    held: float, meaning_first: bool
) -> None:
    # Keyword relevance 1.0 against a nearer cosine; only the best hit's share differs.
    fused = fuse([1.0, 0.0], [0.85, 0.90], "covered", 0.5, 60.0, 0.80, held)
    assert (fused[1] > fused[0]) is meaning_first
    # The blend ignores it.
    plain = fuse([1.0, 0.0], [0.85, 0.90], "blend", 0.5, 60.0, 0.80, held)
    assert plain[0] > plain[1]


def test_share_weighs_rare_terms_more() -> None:
    weight = {"said": 0.2, "kafka": 3.0, "owner": 1.8}
    assert share({"said"}, weight) == pytest.approx(0.2 / 5.0)
    assert share({"kafka", "owner"}, weight) == pytest.approx(4.8 / 5.0)
    assert share(set(), weight) == 0.0
    assert share({"kafka"}, {}) == 0.0


@pytest.mark.parametrize(
    ("cosine", "typical", "threshold", "expected"),
    [
        (0.80, 0.80, 0.2, False),  # no nearer than the vault's typical memory
        (0.79, 0.80, 0.0, False),  # farther than most
        (0.85, 0.80, 0.2, True),  # a quarter of the way from typical to 1
        (0.83, 0.80, 0.2, False),
        (0.90, 0.80, 0.2, True),
        (0.30, 0.10, 0.2, True),  # another model's scale: the same share of the way
        (0.20, 0.10, 0.2, False),
    ],
)
def test_near_is_a_share_of_the_way_from_typical_to_1(
    cosine: float, typical: float, threshold: float, expected: bool
) -> None:
    assert near(cosine, typical, threshold) is expected


@given(
    cosine=st.floats(-1, 1),
    typical=st.floats(-1, 0.999),
    threshold=st.floats(0, 1),
)
def test_near_agrees_with_closeness(cosine: float, typical: float, threshold: float) -> None:
    assert near(cosine, typical, threshold) == (closeness(cosine, typical) >= threshold)
    if cosine <= typical:
        assert closeness(cosine, typical) <= 0


@pytest.mark.parametrize(
    ("held", "bar"),
    [(0.0, 0.2), (0.5, 0.1), (1.0, 0.0), (-0.1, 0.2), (1.5, 0.0)],
)
def test_the_bar_for_meaning_alone_lowers_as_the_words_find_the_query(
    held: float, bar: float
) -> None:
    # No word of the query anywhere: meaning alone must stand clear of the vault's memories.
    assert near_bar(0.2, held) == pytest.approx(bar)
