"""kenomem.recall.scoring: the Generative Agents recall score."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kenomem.recall.scoring import DAY, Terms, Weights, combine, importance, recency, relevance

NOW = 1_771_065_000.0  # 2026-02-14T10:30:00Z
PROPERTY = settings(max_examples=150, deadline=None)


# -- recency ----------------------------------------------------------------------------


def test_recency_is_one_when_just_accessed() -> None:
    assert recency(NOW, NOW, 30.0) == 1.0


def test_recency_halves_at_each_half_life() -> None:
    assert recency(NOW - 30 * DAY, NOW, 30.0) == pytest.approx(0.5)
    assert recency(NOW - 60 * DAY, NOW, 30.0) == pytest.approx(0.25)
    assert recency(NOW - 7 * DAY, NOW, 7.0) == pytest.approx(0.5)
    assert recency(NOW - 15 * DAY, NOW, 30.0) == pytest.approx(math.sqrt(0.5))


def test_pinned_never_fades() -> None:
    assert recency(NOW - 3650 * DAY, NOW, 30.0, pinned=True) == 1.0
    assert recency(0.0, NOW, 1.0, pinned=True) == 1.0


def test_no_half_life_means_no_decay() -> None:
    assert recency(NOW - 100 * DAY, NOW, 0.0) == 1.0
    assert recency(NOW - 100 * DAY, NOW, -5.0) == 1.0


def test_future_access_counts_as_now() -> None:
    assert recency(NOW + 5 * DAY, NOW, 30.0) == 1.0


@PROPERTY
@given(
    st.floats(0, 1e5 * DAY, allow_nan=False),
    st.floats(0, 1e4 * DAY, allow_nan=False),
    st.floats(0.01, 1e4, allow_nan=False),
)
def test_recency_in_unit_interval_and_older_is_lower(age: float, more: float, half: float) -> None:
    newer = recency(NOW - age, NOW, half)
    older = recency(NOW - age - more, NOW, half)
    assert 0.0 <= older <= newer <= 1.0


@PROPERTY
@given(st.floats(0, 1e4, allow_nan=False), st.floats(0.1, 1e3, allow_nan=False))
def test_recency_one_more_half_life_halves(age_days: float, half: float) -> None:
    now_value = recency(NOW - age_days * DAY, NOW, half)
    later = recency(NOW - (age_days + half) * DAY, NOW, half)
    assert later == pytest.approx(now_value / 2, rel=1e-9, abs=1e-300)


# -- importance -------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "expected"), [(1, 0.0), (10, 1.0), (5, 4 / 9), (6, 5 / 9)])
def test_importance_maps_1_to_10_onto_0_to_1(value: int, expected: float) -> None:
    assert importance(value) == pytest.approx(expected)


def test_importance_out_of_range_is_clamped() -> None:
    assert importance(0) == 0.0
    assert importance(-4) == 0.0
    assert importance(11) == 1.0
    assert importance(10, reinforced=50) == 1.0


def test_reinforcement_raises_one_step_per_doubling() -> None:
    assert importance(5, reinforced=0) == pytest.approx(importance(5))
    assert importance(5, reinforced=1) == pytest.approx(importance(6))
    assert importance(5, reinforced=3) == pytest.approx(importance(7))
    assert importance(5, reinforced=7) == pytest.approx(importance(8))
    assert importance(1, reinforced=1) == pytest.approx(1 / 9)


def test_negative_reinforcement_is_ignored() -> None:
    assert importance(5, reinforced=-3) == importance(5)


@PROPERTY
@given(st.integers(-5, 15), st.integers(0, 10_000), st.integers(0, 10_000))
def test_importance_monotonic_and_bounded(value: int, reinforced: int, extra: int) -> None:
    low = importance(value, reinforced)
    high = importance(value, reinforced + extra)
    assert 0.0 <= low <= high <= 1.0
    assert importance(value, reinforced) <= importance(value + 1, reinforced)


# -- relevance --------------------------------------------------------------------------


def test_relevance_divides_by_the_best() -> None:
    assert relevance([2.0, 1.0, 0.0]) == [1.0, 0.5, 0.0]
    assert relevance([0.5, 4.0]) == [0.125, 1.0]


def test_relevance_without_scores() -> None:
    assert relevance([]) == []
    assert relevance([0.0, 0.0]) == [0.0, 0.0]


@PROPERTY
@given(st.lists(st.floats(0, 1e6, allow_nan=False), max_size=20))
def test_relevance_normalised(scores: list[float]) -> None:
    out = relevance(scores)
    assert len(out) == len(scores)
    assert all(0.0 <= r <= 1.0 for r in out)
    if scores and max(scores) > 0:
        assert out[scores.index(max(scores))] == 1.0
        # A better score never gets a lower relevance.
        for a, b, ra, rb in zip(scores, scores[1:], out, out[1:], strict=False):
            if a <= b:
                assert ra <= rb


# -- combine ----------------------------------------------------------------------------


def test_combine_weights_the_three_terms() -> None:
    terms = combine(Weights(recency=0.5, importance=0.5, relevance=1.0), 0.8, 0.4, 1.0)
    assert terms == Terms(0.8, 0.4, 1.0, pytest.approx(0.4 + 0.2 + 1.0))
    assert combine(Weights(0, 0, 0), 1, 1, 1).score == 0


def test_default_weights_are_the_settings_defaults() -> None:
    from kenomem.config import RecallSettings

    settings = RecallSettings()
    expected = (settings.w_recency, settings.w_importance, settings.w_relevance)
    assert Weights() == Weights(*expected) == Weights(recency=0.1, importance=0.5, relevance=1.0)


@PROPERTY
@given(
    st.tuples(*[st.floats(0, 10, allow_nan=False)] * 3),
    st.tuples(*[st.floats(0, 1, allow_nan=False)] * 3),
)
def test_combine_is_the_weighted_sum(w: tuple[float, float, float], t: tuple[float, ...]) -> None:
    weights = Weights(*w)
    terms = combine(weights, *t)
    assert (terms.recency, terms.importance, terms.relevance) == t
    assert terms.score == pytest.approx(w[0] * t[0] + w[1] * t[1] + w[2] * t[2])
    assert 0.0 <= terms.score <= sum(w) + 1e-9
