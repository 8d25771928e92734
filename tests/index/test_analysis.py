"""The analysis both engines share: the stop list, and when a title is searched apart."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from kenomem.files.memory import title_from_text
from kenomem.index import stemming
from kenomem.index.analysis import STOP_WORDS, title_adds
from kenomem.vault.core import CoreVault


def test_title_made_from_the_body_is_not_searched_again() -> None:
    assert not title_adds("Prefers tea over coffee", "Prefers tea over coffee.\n")
    assert not title_adds("hey there", "Dana: hey there, how are you\n")
    assert not title_adds("The release moved to…", "The release moved to March, sadly\n")


def test_a_title_that_says_something_else_is_searched() -> None:
    assert title_adds("Setup notes", "We set up the build server today\n")
    assert title_adds("Deploys", "# Deploys\n\nThey go out on Tuesdays\n")
    assert title_adds("Only a title", "")


@given(st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=200))
def test_remembers_own_titles_never_count_twice(text: str) -> None:
    first = text.strip().splitlines()[0] if text.strip() else ""
    title = title_from_text(text)
    if first.lstrip().startswith("#") or not title:
        return
    assert not title_adds(title, text)


def test_question_words_are_stop_words(vault: CoreVault) -> None:
    vault.sync()
    assert {"what", "did", "how", "her", "when", "where", "who"} <= STOP_WORDS
    assert vault.engine.analyze("What did Caroline paint?") == ["carolin", "paint"]


def test_stop_words_are_what_the_index_drops(vault: CoreVault) -> None:
    vault.sync()
    assert vault.engine.analyze(" ".join(sorted(STOP_WORDS))) == []


@settings(max_examples=500, deadline=None)
@given(
    st.text(alphabet=st.sampled_from("aBz09_*. .,;:-'\"!?()\n\t\x00\x0b\x1c\x7fthe"), max_size=80)
)
def test_ascii_words_are_the_word_patterns(text: str) -> None:
    """ASCII text takes a faster way to its words than the word pattern: the same words."""
    assert stemming._words(text) == stemming.WORD.findall(text.lower())


def _first_line_title_adds(title: str, body: str) -> bool:
    """title_adds as the rule reads: on the first line of `body` that is not blank."""
    head = re.findall(r"\w+", title.lower())
    if not head:
        return False
    lines = [line.strip() for line in body.splitlines() if line.strip()]
    if not lines:
        return True
    if lines[0].startswith("#"):
        return True
    words = re.findall(r"\w+", lines[0].lower())
    return not any(words[i : i + len(head)] == head for i in range(min(4, len(words))))


@settings(max_examples=500, deadline=None)
@given(
    st.sampled_from(["a", "a b", "b", "#", ""]),
    st.lists(st.sampled_from(["a", "b", " ", "#", "\n", "\r", "\v", "\x1c", "\x1f", "\x85"])),
)
def test_the_first_line_is_found_past_every_kind_of_blank(title: str, parts: list[str]) -> None:
    body = "".join(parts)
    assert title_adds(title, body) == _first_line_title_adds(title, body)
