"""Facts stated in a day's log: (subject, attribute, value), single- or many-valued."""

from __future__ import annotations

import pytest

from kenomem.sleep.facts import extract

# text -> the facts it states, as (subject, attribute, value, many).
TABLE = [
    # identity
    ("My name is Adrian Popescu.", [("user", "name", "Adrian Popescu", False)]),
    ("Call me Ade.", [("user", "name", "Ade", False)]),
    # places
    ("I live in Lisbon.", [("user", "lives in", "Lisbon", False)]),
    ("I'm now living in Porto these days.", [("user", "lives in", "Porto", False)]),
    ("I moved to Berlin last year.", [("user", "lives in", "Berlin", False)]),
    ("I'm from Romania.", [("user", "from", "Romania", False)]),
    # jobs
    ("I work at Acme Corp.", [("user", "works at", "Acme Corp", False)]),
    ("I work as a nurse.", [("user", "job", "nurse", False)]),
    ("My job is teaching math.", [("user", "job", "teaching math", False)]),
    # relationships
    ("My wife is called Maria.", [("user", "wife", "Maria", False)]),
    ("My best friend is Joao.", [("user", "best friend", "Joao", False)]),
    ("My dog's name is Rex.", [("user", "dog", "Rex", False)]),
    # dates
    ("My birthday is on March 3.", [("user", "birthday", "March 3", False)]),
    ("I was born in 1990.", [("user", "born", "1990", False)]),
    ("Maria's birthday is June 5.", [("maria", "birthday", "June 5", False)]),
    # possessions
    ("My car is a Skoda Octavia.", [("user", "car", "Skoda Octavia", False)]),
    ("I own a bicycle.", [("user", "owns", "bicycle", True)]),
    ("I'm allergic to peanuts.", [("user", "allergic to", "peanuts", True)]),
    # favourites, both spellings
    ("My favourite band is Radiohead.", [("user", "favorite band", "Radiohead", False)]),
    ("My favorite color is green.", [("user", "favorite color", "green", False)]),
    # opinions
    ("I like coffee.", [("user", "opinion of coffee", "likes", False)]),
    ("I love hiking.", [("user", "opinion of hiking", "likes", False)]),
    ("I don't like coffee anymore.", [("user", "opinion of coffee", "dislikes", False)]),
    ("I no longer like jazz.", [("user", "opinion of jazz", "dislikes", False)]),
    ("I hate Mondays.", [("user", "opinion of mondays", "dislikes", False)]),
    ("I prefer tea.", [("user", "opinion of tea", "prefers", False)]),
    (
        "I really like spicy food but I hate cilantro.",
        [
            ("user", "opinion of spicy food", "likes", False),
            ("user", "opinion of cilantro", "dislikes", False),
        ],
    ),
    # not facts
    ("I like it when you are short.", []),
    ("I like that.", []),
    ("I'd like to go home", []),
    ("The weather is nice.", []),
    ("ok thanks", []),
]


@pytest.mark.parametrize(("text", "expected"), TABLE, ids=[t[0][:30] for t in TABLE])
def test_facts_table(text: str, expected: list[tuple[str, str, str, bool]]) -> None:
    found = {(f.subject, f.attribute, f.value, f.many) for f in extract(text)}
    assert found == set(expected)


def test_the_speaker_is_the_subject_of_what_they_say_of_themselves() -> None:
    (fact,) = extract("I live in Lisbon", subject="adrian")
    assert (fact.subject, fact.key) == ("adrian", "adrian|lives in")
    assert fact.text == "Lives in Lisbon"
    assert fact.frontmatter() == {"subject": "adrian", "attribute": "lives in", "value": "Lisbon"}


def test_a_new_place_has_the_same_key_so_it_replaces_the_old_one() -> None:
    (lisbon,) = extract("I live in Lisbon.")
    (porto,) = extract("I moved to Porto.")
    assert lisbon.key == porto.key
    assert (lisbon.value, porto.value) == ("Lisbon", "Porto")
    assert not lisbon.many and not porto.many


def test_a_changed_opinion_has_the_same_key_and_a_new_value() -> None:
    (likes,) = extract("I like coffee.")
    (dislikes,) = extract("I don't like coffee anymore.")
    assert likes.key == dislikes.key
    assert (likes.value, dislikes.value) == ("likes", "dislikes")
    assert (likes.text, dislikes.text) == ("Likes coffee", "Dislikes coffee")


def test_opinions_of_different_things_are_different_keys() -> None:
    (coffee,) = extract("I like coffee.")
    (tea,) = extract("I like tea.")
    assert coffee.key != tea.key


def test_many_valued_facts_have_a_key_per_value() -> None:
    (peanuts,) = extract("I'm allergic to peanuts.")
    (shellfish,) = extract("I'm allergic to shellfish.")
    (again,) = extract("I am allergic to Peanuts.")
    assert peanuts.many and shellfish.many
    assert peanuts.key != shellfish.key
    assert peanuts.key == again.key  # the same value, said again: the same fact
    assert peanuts.frontmatter()["many"] is True


def test_someone_elses_birthday_is_about_them() -> None:
    (fact,) = extract("Maria's birthday is June 5.", subject="adrian")
    assert (fact.subject, fact.attribute, fact.value) == ("maria", "birthday", "June 5")
    assert fact.text == "Maria's birthday: June 5"


def test_the_value_ends_at_the_clause() -> None:
    (fact,) = extract("I live in Lisbon, and it is sunny")
    assert fact.value == "Lisbon"
    (job,) = extract("I work at Acme because the pay is good")
    assert job.value == "Acme"
