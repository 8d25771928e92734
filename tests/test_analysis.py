"""The analysis both engines share: the stop list, and when a title is searched apart."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kenomem.index.analysis import STOP_WORDS, title_adds
from kenomem.memory import title_from_text
from kenomem.vault import Vault


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


def test_question_words_are_stop_words(vault: Vault) -> None:
    vault.sync()
    assert {"what", "did", "how", "her", "when", "where", "who"} <= STOP_WORDS
    assert vault.engine.analyze("What did Caroline paint?") == ["carolin", "paint"]


def test_stop_words_are_what_the_index_drops(vault: Vault) -> None:
    vault.sync()
    assert vault.engine.analyze(" ".join(sorted(STOP_WORDS))) == []
