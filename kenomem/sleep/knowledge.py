"""What the vault already knows, as the sleep cycle plans a day: the current value of
each fact, which memories a day gave in an earlier run, and whose a fact is.

A rerun of a day (after an interruption, or with `--date`) must plan what the first run
did, so what that day itself wrote is looked through: its facts are not the current
ones, and its memories' words are not what made its entries novel.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from kenomem.files.buffer import Day, Entry
from kenomem.files.memory import Memory
from kenomem.index import Doc, Filters
from kenomem.vault.core import CoreVault

# Speakers whose "I" is not the user's: their entries give no facts about the user.
AGENTS = frozenset({"assistant", "bot", "ai", "agent", "system", "kenomem", "model"})


class Knowledge:
    """What the vault knows of facts, plus what this run has planned so far (so a later
    day's plan sees an earlier day's facts, in a dry run too)."""

    def __init__(self, vault: CoreVault) -> None:
        self.vault = vault
        self.planned: dict[str, tuple[str, str]] = {}  # fact key -> (id, value)
        self._read: dict[str, list[tuple[Doc, Memory]]] = {}  # see `prefetch`
        self.notes: list[str] = []  # what went wrong comparing by meaning

    def same_value(self, known: str, said: str) -> bool:
        """Whether a fact's new value says what its known one does: the same words, or,
        with an embeddings provider, the same in other words ("a software developer" for
        "a software engineer"). A provider that fails leaves the words alone to judge."""
        if " ".join(known.lower().split()) == " ".join(said.lower().split()):
            return True
        meaning = self.vault.meaning
        if meaning is None or self.notes:
            return False
        from kenomem.embed.provider import EmbeddingsUnavailable

        try:
            cosine = self.vault.settings.remember.paraphrase_cosine
            return meaning.says_the_same(known, said, cosine)
        except EmbeddingsUnavailable as exc:
            self.notes.append(f"facts compared by their words alone ({exc})")
            return False

    def prefetch(self, keys: Iterable[str]) -> None:
        """Read the stored facts of these keys in one search (a day's, before it is
        planned), for `fact` to use until `prefetch` is called again; () forgets them."""
        self._read = {key: [] for key in keys}
        for doc, mem in self._stored(tuple(self._read)):
            self._read[doc.factkey].append((doc, mem))

    def _stored(self, keys: tuple[str, ...]) -> list[tuple[Doc, Memory]]:
        if not keys:
            return []
        wanted = Filters(statuses=("active", "superseded"), factkeys=keys)
        return [(hit.doc, self.vault.load(hit.doc.path)) for hit in self.vault.browse(wanted).hits]

    def fact(self, key: str, day: str = "") -> tuple[str, str] | None:
        """(id, value) of the newest active fact with this key, if any, as it was before
        the buffer file `day`: a fact that day gave (in an earlier or interrupted run) does
        not count, and one it superseded still does, so a rerun plans the same."""
        if key in self.planned:
            return self.planned[key]
        found = self._read[key] if key in self._read else self._stored((key,))
        own = {doc.id for doc, mem in found if day and from_day(mem, day)}
        for doc, mem in found:
            if doc.id not in own and (doc.status == "active" or mem.superseded_by in own):
                return doc.id, str(mem.extra.get("value", ""))
        return None


def from_day(mem: Memory, day: str) -> bool:
    """Whether the cycle wrote `mem` from the buffer file `day`."""
    if mem.source != "consolidate":
        return False
    origin = str(mem.extra.get("buffer") or "")
    sources = [str(s) for s in mem.extra.get("sources") or []]
    learned = [str(s) for s in mem.extra.get("learned_from") or []]
    return (
        origin == day
        or origin.startswith(f"{day}#")
        or (bool(sources) and sources[0].startswith(f"{day}#"))
        or (bool(learned) and learned[-1] == day)
    )


def own_ids(vault: CoreVault, day: Day) -> set[str]:
    """The memories an earlier run over `day` wrote (all are dated within the day)."""
    start = datetime(day.date.year, day.date.month, day.date.day, tzinfo=UTC).timestamp()
    within = Filters(statuses=(), since=start, until=start + 86400)
    return {
        hit.doc.id
        for hit in vault.browse(within).hits
        if from_day(vault.load(hit.doc.path), day.path)
    }


_USER = frozenset({"user", "the user", "i", "me", "myself", "speaker", "the speaker"})


def subject_of(subject: str, entry: Entry, people: frozenset[str]) -> str:
    """A fact's subject key, the same from the heuristics and from an LLM: for "user"
    or "I", the entry's speaker (`user` if unnamed; the day's one person if an agent
    speaks), else the name given; in lower case."""
    key = " ".join(subject.lower().split())
    if key not in _USER:
        return key
    who = entry.who.lower()
    if not who or who not in AGENTS:
        return who or "user"
    humans = {p.lower() for p in people}
    return humans.pop() if len(humans) == 1 else "user"
