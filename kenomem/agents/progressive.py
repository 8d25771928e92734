"""A long session in a small budget: progressive summarisation of its buffer entries.

When a session's entries do not fit their share of `context`, the latest ones stay
verbatim and older stretches are shown as one-line summaries, coarser the older they are:
stretches of 4 entries, then 16, then 64, then 256. Stretches are cut at fixed positions
counted from the session's first entry, so a stretch's summary stays the same as the
session grows and can be kept: summaries are derived files under
`.kenomem/summaries/<session>/`, regenerated whenever they are missing. The buffer itself
is never changed.

When the query names something that only older entries hold, those entries come back
verbatim (on-demand recall) before any summary is drawn.

The choice of what to show (`plan_chat`) is pure; `SummaryCache` is the only effect.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

from kenomem.sleep import salience

SUMMARIES_DIR = "summaries"  # in .kenomem/, a folder per session
STRETCH = 4  # entries in a finest summary; each level is this many times coarser
PER_LEVEL = 2  # stretches summarised at one level before going coarser
TAIL_SHARE = 0.5  # of the chat budget, for the latest entries verbatim
PULLED_SHARE = 0.25  # for older entries the query names
_WORDS = (14, 10, 8, 6)  # words of gist per summarised entry, by level
_SENTENCE = re.compile(r"^(.+?[.!?])(?:\s|$)")


class ChatEntry(NamedTuple):
    key: str  # stable reference: "buffer/2026-11-22.md#14:30:05"
    clock: str  # "14:30", or "2026-11-21 14:30" for another day
    who: str
    text: str


class ChatLine(NamedTuple):
    position: int  # of the first entry it covers, for the order of the lines
    text: str
    entries: int  # how many entries it stands for
    kind: str  # verbatim | recalled | summary


class ChatPlan(NamedTuple):
    lines: list[ChatLine]
    left_out: int  # entries neither shown nor summarised
    summarised: int  # entries shown only through a summary


Summarize = Callable[[Sequence[ChatEntry], int], str]


def verbatim(entry: ChatEntry) -> str:
    who = f" {entry.who}:" if entry.who else ""
    return f"- {entry.clock}{who} " + " ".join(entry.text.split())


def plan_chat(
    entries: Sequence[ChatEntry],
    allowance: float,
    count: Callable[[str], int],
    summarize: Summarize,
    wanted: Callable[[str], int] | None = None,
) -> ChatPlan:
    """What of `entries` (oldest first) to show in `allowance` tokens.

    `wanted(text)` says how many of the query's terms an entry holds (0: none);
    `summarize(stretch, level)` gives a stretch's one-line gist.
    """
    every = [ChatLine(i, verbatim(e), 1, "verbatim") for i, e in enumerate(entries)]
    if sum(count(line.text + "\n") for line in every) <= allowance:
        return ChatPlan(every, 0, 0)

    shown: list[ChatLine] = []
    used = 0

    def fits(text: str, limit: float) -> bool:
        return used + count(text + "\n") <= limit

    # The latest entries, verbatim, newest first until their share is spent.
    start = len(entries)
    while start > 0 and fits(every[start - 1].text, allowance * (TAIL_SHARE if shown else 1)):
        start -= 1
        shown.append(every[start])
        used += count(every[start].text + "\n")
    older = list(range(start))

    # Older entries the query names come back whole, the best matches first.
    pulled: set[int] = set()
    if wanted is not None:
        scored = [(wanted(entries[i].text), i) for i in older]
        limit = used + allowance * PULLED_SHARE
        for hits, i in sorted(scored, key=lambda s: (-s[0], -s[1])):
            if hits and fits(every[i].text, limit):
                line = every[i]._replace(text=every[i].text + " (recalled)", kind="recalled")
                shown.append(line)
                used += count(line.text + "\n")
                pulled.add(i)

    # The rest, newest first, in stretches that grow coarser with age.
    rest = [i for i in older if i not in pulled]
    summarised = 0
    end = len(rest)
    level, done_at_level = 0, 0
    while end > 0:
        size = STRETCH ** (level + 1)
        last = rest[end - 1]
        first_allowed = (last // size) * size  # fixed cuts: the same stretch every time
        begin = end - 1
        while begin > 0 and rest[begin - 1] >= first_allowed:
            begin -= 1
        stretch = [entries[i] for i in rest[begin:end]]
        text = summarize(stretch, level)
        if not fits(text, allowance):
            break
        shown.append(ChatLine(rest[begin], text, len(stretch), "summary"))
        used += count(text + "\n")
        summarised += len(stretch)
        end = begin
        done_at_level += 1
        if done_at_level == PER_LEVEL and level < len(_WORDS) - 1:
            level, done_at_level = level + 1, 0
    shown.sort(key=lambda line: line.position)
    return ChatPlan(shown, end, summarised)


def heuristic_summary(stretch: Sequence[ChatEntry], level: int) -> str:
    """'- 09:14–09:40, 6 entries (Dana, assistant): gist; gist' from the most salient
    entries' first sentences; fewer and shorter the coarser the level."""
    words = _WORDS[min(level, len(_WORDS) - 1)]
    best = sorted(
        range(len(stretch)),
        key=lambda i: (-salience.score(stretch[i].text).importance, i),
    )[: 2 if level == 0 else 1]
    gists = [_gist(stretch[i].text, words) for i in sorted(best)]
    people = ", ".join(dict.fromkeys(e.who for e in stretch if e.who))
    span = stretch[0].clock if len(stretch) == 1 else f"{stretch[0].clock}–{stretch[-1].clock}"
    with_whom = f" ({people})" if people else ""
    noun = "entry" if len(stretch) == 1 else "entries"
    return f"- {span}, {len(stretch)} {noun}{with_whom}: " + "; ".join(g for g in gists if g)


def _gist(text: str, words: int) -> str:
    flat = " ".join(text.split())
    m = _SENTENCE.match(flat)
    sentence = m.group(1) if m else flat
    parts = sentence.split()
    return " ".join(parts[:words]) + ("…" if len(parts) > words else "")


class SummaryCache:
    """Stretch summaries kept under `.kenomem/summaries/`: derived, safe to delete.

    `folder` is the cache's folder in `state_dir` (the vault's `.kenomem/`), whose files
    are read and written held by descriptor, never through a link (`paths.read_private`,
    `write_private`): a symlink in a summary's place is made again over, one in a
    folder's place is `UnsafePath`."""

    def __init__(self, state_dir: Path, folder: str, make: Summarize, fsync: bool = False) -> None:
        self.state_dir = state_dir
        self.folder = folder
        self.make = make
        self.fsync = fsync
        self.written = 0

    def __call__(self, stretch: Sequence[ChatEntry], level: int) -> str:
        from kenomem.errors import UnsafePath
        from kenomem.files.paths import read_private, write_private

        rel = f"{self.folder}/{level}-{_digest(stretch, level)}.md"
        try:
            return read_private(self.state_dir, rel).decode("utf-8").rstrip("\n")
        except (OSError, UnicodeDecodeError, UnsafePath):
            pass  # none, unreadable, or a link: made again, and the link replaced
        text = self.make(stretch, level)
        try:
            data = (text + "\n").encode("utf-8")
            write_private(self.state_dir, rel, data, fsync=self.fsync, sync_dir=False)
            self.written += 1
        except OSError:
            pass  # a cache that cannot be written is only slower
        return text


def _digest(stretch: Iterable[ChatEntry], level: int) -> str:
    h = hashlib.blake2b(digest_size=10)
    h.update(str(level).encode())
    for e in stretch:
        h.update(f"\0{e.key}\0{e.who}\0{e.text}".encode())
    return h.hexdigest()
