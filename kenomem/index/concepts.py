"""The concept graph's nodes: the concepts each memory holds, kept in the index.

Each memory's concepts are its tags, the targets of its `[[wikilinks]]` and the names
its text holds (capitalised words and runs of them away from a sentence's start:
"Bailey", "LGBTQ", "Embracing Identity"). Markdown structure is no name: headings
(`## Task`) give none, and the first word after a list bullet, a number, a quote mark, a
checkbox or a clock time (`- 14:30 Fixed the build`) starts a sentence. Nor are the tags
that only say what kind of memory it is (`KIND_TAGS`: every summary, fact or learned
pattern has one): shared by all of their kind, they would link unrelated memories.

They are kept in the index, made from the files on every (re)index like everything else
there, so two memories are linked when they share a concept: the graph is never stored
apart and cannot drift from the files.

Recall spreads activation along them: `recall/spread.py`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MAX_CONCEPTS = 24  # per memory: a long note's first names are its topic
NAMES_SCAN = 1_000  # characters of the body read for names, for the same reason

# Patterns, compiled by `re`'s cache when first used: only the making of a document
# (a sync, a rebuild) needs them.
_LINK = r"\[\[([^\]|#\n]+)(?:[#|][^\]\n]*)?\]\]"
# A name: a capitalised word or an acronym, and the capitalised words that follow it.
_NAME = r"\b[A-Z][\w'’-]*(?:[ \t]+[A-Z][\w'’-]*)*"
_SENTENCE_ENDS = frozenset('.!?:;"“(\n')
# A markdown heading line (ATX, up to three spaces in): no names in it.
_HEADING = r"(?m)^[ \t]{0,3}#{1,6}(?:[ \t].*)?$"
# What opens a line without being its words: bullets, numbers, quote marks, a checkbox, a
# clock time, emphasis. Taken off, the line's first word starts a sentence.
_LINE_MARKS = (
    r"(?m)^(?:[ \t]*(?:[-*+>]|\d{1,9}[.)]|\[[ xX]\]|\d{1,2}:\d\d(?::\d\d)?)[ \t]+|[ \t]*>)*"
    r"(?:[ \t]*[*_]{1,3}(?=\w))?"
)
# Tags kenomem gives every memory of a kind (prune's and the sleep cycle's summaries, the
# cycle's facts and learned patterns): what they are, not what they are about.
KIND_TAGS = frozenset({"summary", "fact", "learned"})
# Capitalised words that are no names even away from a sentence's start.
_NOT_NAMES = frozenset(
    """i i'm i've i'd i'll im ive id ok okay yes no hey hi hello thanks thank wow oh
    omg lol yeah yep sure great cool awesome nice congrats congratulations good well so
    and but or the a an my your our their his her its this that these those what when
    where who why how monday tuesday wednesday thursday friday saturday sunday january
    february march april may june july august september october november december""".split()
)


def extract(title: str, body: str, tags: Iterable[str]) -> tuple[str, ...]:
    """A memory's concepts: `tag:…`, `link:…` and `name:…` keys, lower case."""
    found: dict[str, None] = {}
    for tag in tags:
        key = _key(tag)
        if key and key not in KIND_TAGS:
            found[f"tag:{key}"] = None
    for match in re.finditer(_LINK, body):
        key = _key(match.group(1).removesuffix(".md"))
        if key:
            found[f"link:{key}"] = None
    for text in (title, re.sub(_LINK, " ", body[:NAMES_SCAN])):  # a link's target is one already
        for name in names(text):
            found[f"name:{name}"] = None
            if len(found) >= MAX_CONCEPTS:
                return tuple(found)
    return tuple(found)[:MAX_CONCEPTS]


def names(text: str) -> list[str]:
    """The names in `text`, lower case, in order, each once (none from its markdown)."""
    found: dict[str, None] = {}
    if "#" in text:
        text = re.sub(_HEADING, "", text)
    text = re.sub(_LINE_MARKS, "", text)
    for match in re.finditer(_NAME, text):
        run = match.group(0)
        if _starts_sentence(text, match.start()):
            if " " not in run and "\t" not in run:
                continue  # a sentence's first word alone: most matches, checked cheaply
            words = run.split()[1:]  # a sentence's first word is capitalised anyway
        else:
            words = run.split()
        while words and words[0].lower().strip("'’") in _NOT_NAMES:
            words = words[1:]
        if not words or (len(words) == 1 and len(words[0]) < 2):
            continue
        key = _key(" ".join(words).strip("'’-").removesuffix("'s").removesuffix("’s"))
        if key and key not in _NOT_NAMES:
            found[key] = None
    return list(found)


def _starts_sentence(text: str, at: int) -> bool:
    """Whether `at` is the first word of a sentence, a line or a " - " aside. The dash of
    an aside stands apart, a blank after it and a blank or a line's start before it: a
    hyphen joined to the word ("-Lee") is part of that word, wherever it stands."""
    before = text[max(0, at - 8) : at]
    stripped = before.rstrip(" \t")
    if not stripped:
        return True  # the text's start (or only blanks before it)
    if stripped[-1] in _SENTENCE_ENDS:
        return True
    dash = at - (len(before) - len(stripped)) - 1  # where `stripped` ends in `text`
    return stripped[-1] == "-" and dash < at - 1 and (dash == 0 or text[dash - 1] in " \t\n")


def _key(text: str) -> str:
    # Commas separate a stored list of keys: never part of one.
    return " ".join(text.replace(",", " ").split()).lower()
