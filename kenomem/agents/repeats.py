"""What the context block must not say twice: a text shown once, in the place that
matters most. Pure: the block's entries come in, the ones to leave out or cut go out.

A memory is cut into pieces, its sentences (a list item is one piece). A piece is
*shown already* when its words, in order and together, are in a sentence shown before it
(compared lower-cased, words only, without a leading bullet, date or clock; "Dana: "
before a sentence may be there or not). The places, first to last:

1. the conversation ("This conversation": turns already said are not repeated as
   memories), the foundation, how to behave, the working memory;
2. then the retrieved memories in the block's order: patterns, facts, recent days.

A memory whose counted pieces are all shown already is left out; one with some is shown
without them. A summary's own account of itself ("4 entries, 1 trivia.", "With: Dana.",
"Highlights:") does not count, what it reports does, so a day summary is left out when
its episodes are in, and an episode when its summary is in. A fact drawn from a
logged turn (its `sources`) is left out when that turn is in the block, as an episode or
in the conversation: the turn says it in its own words, with who and when.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple


class Piece(NamedTuple):
    text: str  # as shown
    counts: bool = True  # whether it must be shown elsewhere for its memory to go


_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")
_BULLET = re.compile(r"^\s*[-*+]\s+")
# A date, a clock or a span of them at a line's start: "2026-03-01: ", "09:01 ",
# "11-21 14:30 ", "09:14–09:40, ", "01 Mar: ".
_STAMP = re.compile(
    r"^(?:\d{4}-\d{2}-\d{2}|\d{2}-\d{2}|\d{1,2} [A-Z][a-z]{2})?\s*"
    r"(?:\d{1,2}:\d{2}(?::\d{2})?(?:\s*[–-]\s*(?:\d{2}-\d{2} )?\d{1,2}:\d{2})?)?[:,]?\s+"
)
_SPEAKER = re.compile(r"^([A-Z][\w'.-]*(?: [A-Z][\w'.-]*){0,2}):\s+(?=\S)")
_WORD = re.compile(r"\w+")
# What a summary says of itself, not of what happened.
_ACCOUNT = re.compile(r"^(?:\d+ (?:entry|entries|episode|episodes)\b|with:|highlights:)", re.I)


def pieces(body: str, summary: bool = False) -> tuple[Piece, ...]:
    """A memory's text in pieces: each line's sentences, a list item as one piece. In a
    summary, its account of itself does not count."""
    out: list[Piece] = []
    for line in body.splitlines():
        line = line.strip().lstrip("#").strip()
        if not line:
            continue
        said = [line] if _BULLET.match(line) else _SENTENCE_END.split(line)
        for piece in (p.strip() for p in said):
            if piece:
                out.append(Piece(piece, not (summary and _ACCOUNT.match(piece))))
    return tuple(out)


def sentences(text: str) -> list[str]:
    """The sentences of shown text (a line of the block, a turn), each as its key."""
    keys = []
    for line in text.splitlines():
        line = _BULLET.sub("", line.strip())
        line = _STAMP.sub("", line, count=1)
        for sentence in _SENTENCE_END.split(line):
            key = _key(sentence)
            if key:
                keys.append(key)
    return keys


def _key(sentence: str) -> str:
    return " ".join(_WORD.findall(sentence.lower()))


def variants(piece: str) -> list[str]:
    """A piece's keys: as written, and without its speaker ("Dana: ") when it has one."""
    line = _STAMP.sub("", _BULLET.sub("", piece.strip()), count=1)
    keys = [_key(line)]
    m = _SPEAKER.match(line)
    if m:
        keys.append(_key(line[m.end() :]))
    return [k for k in keys if k]


class Seen:
    """The sentences shown so far."""

    def __init__(self) -> None:
        self._text = " | "
        self.origins: set[str] = set()

    def add(self, text: str) -> None:
        for key in sentences(text):
            self._text += key + " | "

    def holds(self, piece: str) -> bool:
        """Whether the piece's words, in order and together, are in a sentence shown."""
        keys = variants(piece)
        return bool(keys) and any(f" {k} " in self._text for k in keys)


class Shown(NamedTuple):
    """An entry of the block as the walk sees it."""

    text: str
    pieces: tuple[Piece, ...] = ()  # none: shown as it is, never cut (a turn, a rule)
    origin: str = ""  # the logged turn it is ("buffer/<day>.md#HH:MM:SS"), if it is one
    drawn_from: tuple[str, ...] = ()  # the logged turns a fact was drawn from


class Verdict(NamedTuple):
    keep: bool
    pieces: tuple[Piece, ...]  # what of it to show (all of them when nothing is cut)


def walk(first: Iterable[Shown], then: Sequence[Shown]) -> list[Verdict]:
    """For each of `then` (the retrieved memories, in the block's order), whether it is
    shown and with which pieces, given `first` (the conversation and the other fixed
    parts, shown whole). A fact drawn from turns all in the block goes first."""
    seen = Seen()
    firsts = list(first)
    origins = {e.origin for e in (*firsts, *then) if e.origin}
    for entry in firsts:
        seen.add(entry.text)
    verdicts = []
    for entry in then:
        if entry.drawn_from and all(o in origins for o in entry.drawn_from):
            verdicts.append(Verdict(False, ()))
            continue
        if not entry.pieces:
            seen.add(entry.text)
            verdicts.append(Verdict(True, ()))
            continue
        kept = []
        speaker = ""  # of a sentence cut: the next one kept says who speaks
        for piece in entry.pieces:
            own = _SPEAKER.match(piece.text.strip())
            if not seen.holds(piece.text):
                seen.add(piece.text)
                if speaker and not own:
                    piece = piece._replace(text=speaker + piece.text.strip())
                kept.append(piece)
                speaker = ""
            elif own:
                speaker = own.group(0)
        counted = [p for p in entry.pieces if p.counts]
        if counted and not any(p.counts for p in kept):
            verdicts.append(Verdict(False, ()))
        else:
            verdicts.append(Verdict(True, tuple(kept)))
    return verdicts
