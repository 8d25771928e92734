"""The concept graph: what a memory's concepts are, and how recall spreads activation
along them to memories that share none of the query's words."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from kenomem.api import Vault
from kenomem.index import Doc, Hit, SearchResult
from kenomem.index.concepts import MAX_CONCEPTS, extract, names
from kenomem.recall.spread import lift, spread
from tests.recall.helpers import recall_settings


def test_names_skip_sentence_starts_and_greetings() -> None:
    text = (
        "Caroline: Thanks, Melanie! We adopted a cat named Bailey. Yesterday I went to "
        "the LGBTQ support group in New York City. Hey Mel, it was great."
    )
    assert names(text) == ["melanie", "bailey", "lgbtq", "new york city", "mel"]


def test_a_sentence_that_opens_with_a_name_keeps_the_rest_of_it() -> None:
    assert names("Went to Lisbon with Dana Scully") == ["lisbon", "dana scully"]
    assert names("I think Priya's talk was good") == ["priya"]


def test_concepts_are_tags_links_and_names() -> None:
    found = extract(
        "Deploy notes",
        "See [[Runbook|the runbook]] and [[db.md]] before Friday with Priya.",
        ["Ops", "db"],
    )
    assert found == ("tag:ops", "tag:db", "link:runbook", "link:db", "name:priya")


def test_a_long_note_keeps_its_first_concepts_only() -> None:
    body = " ".join(f"and Name{i:02d}" for i in range(40))
    found = extract("", body, [])
    assert len(found) == MAX_CONCEPTS and found[0] == "name:name00"


@given(st.text(max_size=300), st.lists(st.text(max_size=12), max_size=4))
def test_concept_keys_are_lower_case_and_free_of_commas(body: str, tags: list[str]) -> None:
    for key in extract("", body, tags):
        assert key == key.lower() and "," not in key
        assert key.split(":", 1)[1].strip() == key.split(":", 1)[1] != ""


def test_spread_passes_more_through_rare_concepts_and_none_through_common_ones() -> None:
    passed = spread(
        [(("name:bailey", "name:caroline"), 1.0), (("name:lisbon",), 0.5)],
        {"name:bailey": 2, "name:caroline": 900, "name:lisbon": 8},
        total_docs=1000,
    )
    assert set(passed) == {"name:bailey", "name:lisbon"}
    assert passed["name:bailey"] > passed["name:lisbon"] > 0
    assert spread([(("name:solo",), 1.0)], {"name:solo": 1}, 1000) == {}


def _doc(doc_id: str, concepts: tuple[str, ...]) -> Doc:
    return Doc(
        doc_id, "", "semantic", "active", "global", "", (), "", 0.0, 0.0, 0.0, 0.0, 0, 0, 5,
        False, concepts=concepts,
    )  # fmt: skip


def test_lift_raises_linked_memories_but_not_their_sources() -> None:
    found = SearchResult(
        [Hit(_doc("top", ("name:bailey",)), 10.0), Hit(_doc("other", ("name:bailey",)), 2.0)],
        ("cat",),
    )
    reached = SearchResult([Hit(_doc("new", ("name:bailey",))), Hit(_doc("top", ()))], ())
    out, gained = lift(found, reached, {"name:bailey": 1.0}, share=0.3, sources=("top",))
    scores = {hit.doc.id: hit.score for hit in out.hits}
    assert scores == {"top": 10.0, "other": pytest.approx(5.0), "new": pytest.approx(3.0)}
    # what each gained, and through what: `--explain` shows it apart from the bm25
    assert gained == {
        "other": (pytest.approx(3.0), "name bailey"),
        "new": (pytest.approx(3.0), "name bailey"),
    }
    assert [hit.doc.id for hit in out.hits] == ["top", "other", "new"]


def _memories(vault_dir: Path) -> None:
    notes = {
        "pet.md": "We adopted a rescue cat and named her Bailey; the cat sleeps all day.",
        "vet.md": "The vet said Bailey needs her vaccine booster in March.",
        "deploy.md": "Deploys go through the staging cluster first.",
        "tea.md": "Prefers green tea in the afternoon.",
    }
    for name, text in notes.items():
        (vault_dir / "semantic" / name).write_text(text + "\n", encoding="utf-8")


@pytest.mark.both_engines
def test_recall_reaches_a_memory_linked_by_a_name_it_shares_with_a_hit(vault_dir: Path) -> None:
    _memories(vault_dir)
    recall_settings(vault_dir, feedback_words=0)
    found = [r.path for r in Vault(vault_dir).recall("rescue cat", touch=False).results]
    assert found == ["semantic/pet.md", "semantic/vet.md"]


@pytest.mark.both_engines
def test_without_spreading_only_the_words_count(vault_dir: Path) -> None:
    _memories(vault_dir)
    recall_settings(vault_dir, feedback_words=0, spread_share=0)
    found = [r.path for r in Vault(vault_dir).recall("rescue cat", touch=False).results]
    assert found == ["semantic/pet.md"]


@pytest.mark.both_engines
def test_concepts_follow_hand_edits(vault_dir: Path) -> None:
    _memories(vault_dir)
    recall_settings(vault_dir, feedback_words=0)
    v = Vault(vault_dir)
    assert len(v.recall("rescue cat", touch=False).results) == 2
    (vault_dir / "semantic" / "vet.md").write_text("The vet said Rex is fine.\n", "utf-8")
    assert [r.path for r in v.recall("rescue cat", touch=False).results] == ["semantic/pet.md"]


def _names_reference(text: str) -> list[str]:
    """`names` as first written, before its shortcut for a sentence's lone first word."""
    import re

    from kenomem.index import concepts

    found: dict[str, None] = {}
    for match in re.finditer(concepts._NAME, text):
        words = match.group(0).split()
        if concepts._starts_sentence(text, match.start()):
            words = words[1:]
        while words and words[0].lower().strip("'’") in concepts._NOT_NAMES:
            words = words[1:]
        if not words or (len(words) == 1 and len(words[0]) < 2):
            continue
        key = concepts._key(" ".join(words).strip("'’-").removesuffix("'s").removesuffix("’s"))
        if key and key not in concepts._NOT_NAMES:
            found[key] = None
    return list(found)


@given(
    st.lists(
        st.sampled_from(
            [
                "Ana",
                "Bo",
                "I",
                "The",
                "NASA",
                "new",
                "York",
                "said",
                ".",
                "!",
                " - ",
                "\n",
                "\t",
                " ",
                "  ",
                "Priya's",
                "X",
                "ok",
                "(",
                '"',
                "May",
                "it",
                "-Lee",
            ]
        ),
        max_size=40,
    ).map("".join)
)
# A list bullet taken off left "-Lee" at the line's start, where the hyphen counted as joined
# to the word, while after a blank (the reference reads the bullet still there) it opened an
# aside: ['lee'] against [].
@example(" - -Lee")
def test_names_are_the_same_as_before_the_shortcut(text: str) -> None:
    assert names(text) == _names_reference(text)


def test_a_hyphen_joined_to_a_word_is_no_aside() -> None:
    assert names(" - -Lee") == names("-Lee") == names("See you\n-Lee") == ["lee"]
    assert names("Dinner with Ana -Lee") == ["ana", "lee"]
    assert names("Dinner with Ana - Lee came too") == ["ana"]  # an aside's lone first word
    assert names("- Lee came") == names(" - Lee came") == []  # a bullet's
