"""The concept graph's nodes come from what a memory is about: real names, its own tags and
links; never from its markdown (headings, bullets, times) nor from a tag that only says
what kind of memory it is (every summary has `summary`)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kenomem.api import Vault
from kenomem.capture.log import LogRequest
from kenomem.capture.log import log as log_entry
from kenomem.index.concepts import KIND_TAGS, extract, names
from kenomem.sleep.consolidate import ConsolidateRequest, consolidate
from kenomem.vault.core import CoreVault
from tests.recall.helpers import recall_settings


def test_headings_give_no_names() -> None:
    body = "## Task\nShip it.\n### Next Steps\nCall Priya.\n#hashtag is no heading\n"
    assert names(body) == ["priya"]


@pytest.mark.parametrize(
    "line",
    [
        "- Fixed the build",
        "* Fixed the build",
        "+ Fixed the build",
        "1. Fixed the build",
        "12) Fixed the build",
        "> Fixed the build",
        "- [ ] Fixed the build",
        "- [x] Fixed the build",
        "- 14:30 Fixed the build",
        "- 14:30:05 Fixed the build",
        "  - **Fixed** the build",
        "> - Fixed the build",
    ],
)
def test_the_first_word_after_a_bullet_starts_a_sentence(line: str) -> None:
    assert names(f"Notes\n{line}\n") == []
    assert names(f"{line} with Priya\n") == ["priya"]


def test_a_summary_bullet_list_links_nothing_but_its_names() -> None:
    body = (
        "3 entries, 2 kept as episodes, 1 trivia.\n\nHighlights:\n"
        "- 09:00 Deployed the app with Bailey\n- 09:30 Rotated the keys\n"
    )
    assert extract("Day summary 2026-03-03", body, ["summary"]) == ("name:bailey",)


def test_kind_tags_are_no_concepts_but_other_tags_are() -> None:
    assert {"summary", "fact", "learned"} <= KIND_TAGS
    assert extract("", "text", ["summary", "Fact", "learned", "deploy"]) == ("tag:deploy",)


_MARKS = st.lists(
    st.sampled_from(["-", "*", "+", ">", "1.", "12)", "[ ]", "[x]", "14:30", "09:15:02"]),
    max_size=3,
).map(lambda marks: "".join(f"{mark} " for mark in marks))


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["", "  ", "\t"]),
            _MARKS,
            st.sampled_from(["", "**", "_"]),
            st.sampled_from(["Fixed", "Task", "Deployed", "Notes"]),
        ),
        max_size=6,
    )
)
def test_markdown_never_makes_a_name(lines: list[tuple[str, str, str, str]]) -> None:
    """Lines that open with any run of markdown marks and a capitalised word, then words
    in lower case: no names at all."""
    text = "\n".join(
        f"{indent}{marks}{em}{word}{em} the build" for indent, marks, em, word in lines
    )
    assert names(text) == []
    assert names("## " + text.replace("\n", " ")) == []


def test_summaries_are_not_linked_to_each_other_in_recall(vault_dir: Path) -> None:
    """Two days, each with its summary: a recall about one day's matter reaches its episode
    and that day's summary, never the other day's summary through the `summary` tag."""
    vault = CoreVault.open(vault_dir)
    said = {
        1: "Remember this: the Falcon launch moved to the Orion pad.",
        2: "Remember this: the quarterly tax filing is due in April.",
    }
    for day, text in said.items():
        at = datetime(2026, 3, day, 9, 0, tzinfo=UTC)
        log_entry(vault, LogRequest(text, who="Adrian", at=at))
    consolidate(vault, ConsolidateRequest(), now=datetime(2026, 3, 5, 4, 0, tzinfo=UTC))
    recall_settings(vault_dir, feedback_words=0)
    found = Vault(vault_dir).recall("Falcon launch", touch=False, limit=10).results
    titles = [r.title for r in found]
    assert titles[:2] == [said[1].removesuffix("."), "Day summary 2026-03-01"]
    assert "Day summary 2026-03-02" not in titles
