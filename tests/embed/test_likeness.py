"""The judgement of remember by meaning: same, may contradict, or another fact."""

from __future__ import annotations

import pytest

from kenomem.embed.likeness import judge, specifics

SAME, RELATED = 0.955, 0.88


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("Adrian lives in Porto.", {"porto"}),
        ("The API allows 100 requests a minute.", {"100", "api"}),
        ("Deploys go out on Tuesdays. Maria runs them.", {"tuesdays"}),
        ("the database is db1.internal", {"db1.internal"}),
        ("nothing specific here", set()),
    ],
)
def test_specifics_are_numbers_and_names_not_a_sentences_first_word(
    text: str, found: set[str]
) -> None:
    assert specifics(text) == found


@pytest.mark.parametrize(
    ("old", "new", "cosine", "verdict"),
    [
        ("Adrian's home is in Porto.", "Adrian lives in Porto.", 0.97, "same"),
        ("Adrian lives in Porto.", "Adrian moved to Madrid.", 0.90, "contradicts"),
        ("Sara's birthday is on 14 March.", "Sara's birthday is on 21 April.", 0.94, "contradicts"),
        ("The team uses Postgres 15.", "The team now uses Postgres 15.", 0.97, "contradicts"),
        ("The user likes tea.", "The user likes green tea.", 0.92, "different"),
        ("Adrian lives in Porto.", "Adrian moved to Madrid.", 0.80, "different"),  # far apart
        ("The office is on floor 4.", "The office is on floor 7.", 0.99, "contradicts"),
    ],
)
def test_the_verdicts(old: str, new: str, cosine: float, verdict: str) -> None:
    assert judge(old, new, cosine, SAME, RELATED) == verdict


def test_a_text_is_the_same_as_itself() -> None:
    text = "Deploys go out on Tuesdays after the 10:00 stand-up."
    assert judge(text, text, 1.0, SAME, RELATED) == "same"
