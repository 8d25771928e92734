"""Planning a day of the sleep cycle, as a pure decision: from the day's entries and what
the vault already knows, every memory to create, reinforce, supersede or propose, and the
day's summary. `apply.py` carries a plan out; `llm.py` makes one with a language model.

Nothing told is lost to recall: every entry but trivia (`salience.is_trivia`:
acknowledgements, greetings, thanks; never an entry holding a number or a name) becomes
an episode holding it verbatim with its speaker named, at the importance its salience
gives; the trivia dropped is listed in the plan (`DayPlan.dropped`).

Every memory the cycle writes has an id derived from the day, the entry and the content
(`made_id`), and every reinforcement records its source, so applying a plan twice, or
after an interruption at any point, ends in the same vault as applying it once.

Chats are kept apart: an episode drawn from an entry of session X has `scope: X` (an
entry without a session makes a global one), and each chat gets its own day summary, made
only from its own entries (`scopes`), so no memory holds one chat's words where another
chat sees them. The scope always comes from the entries, never from an LLM's answer.
Facts and patterns stay global: what a person says about themselves, or a fix that
worked, holds in every chat (the buffer holds no chat-only marks: `<chat-memory>` is
stored at once by `extract`, never logged).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, NamedTuple

from kenomem.errors import InvalidInput
from kenomem.files import buffer
from kenomem.files.buffer import Day, Entry
from kenomem.files.memory import Memory, pattern_title, title_from_text
from kenomem.files.paths import check_label
from kenomem.files.plural import counted
from kenomem.sleep.facts import Fact
from kenomem.sleep.facts import extract as extract_facts
from kenomem.sleep.knowledge import AGENTS, Knowledge, own_ids, subject_of
from kenomem.sleep.patterns import Proposal
from kenomem.sleep.pending import Pending
from kenomem.sleep.salience import BASE, is_trivia, names, score
from kenomem.vault.core import CoreVault

GLOBAL = "global"  # the scope of what every chat sees
# A day summary: its lines, each an informative entry's gist with its speaker, and its
# importance, below an ordinary episode's so that it leads to them, not over them.
SUMMARY_LINES = 5
SUMMARY_IMPORTANCE = 4
GIST_WORDS = 8  # words that make an entry without a signal informative
GIST_CHARS = 200
_WORD = re.compile(r"\w+")


class Planned(NamedTuple):
    """One thing the cycle will do."""

    action: str  # create | reinforce | supersede | propose | summarize
    id: str  # the memory created, or the one reinforced
    type: str
    title: str
    why: str
    memory: Memory | None = None  # what to write (not for reinforce)
    target: str = ""  # the memory superseded
    source: str = ""  # buffer day and time, recorded on what it reinforces
    scope: str = GLOBAL  # the chat of what it creates (global: every chat sees it)


class Dropped(NamedTuple):
    """An entry dropped as trivia ("ok thanks"): no memory holds it."""

    at: str  # its time of day, HH:MM:SS
    who: str
    text: str


class DayPlan(NamedTuple):
    day: str  # the buffer file
    entries: int  # planned now: the day's entries not consolidated before
    trivia: int
    actions: list[Planned]
    method: str  # heuristics | llm
    warnings: list[str]
    upto: int = 0  # the day's entries consolidated once the plan is applied
    dropped: tuple[Dropped, ...] = ()  # the entries dropped as trivia, each named


def scope_of(entry: Entry) -> str:
    """The chat an entry belongs to: its session; global without one. A session written
    by hand that is no valid label (`log` refuses those) still makes a chat of its own,
    `chat-` and a digest of it, never global."""
    if not entry.session:
        return GLOBAL
    try:
        return check_label(entry.session, "session id")
    except InvalidInput:
        digest = hashlib.blake2b(entry.session.encode("utf-8", "replace"), digest_size=6)
        return f"chat-{digest.hexdigest()}"


def scopes(day: Day) -> dict[str, Day]:
    """The day's entries split by chat, global first, each part a day of its own (the
    entries keep their positions)."""
    parts: dict[str, list[Entry]] = {}
    for entry in day.entries:
        parts.setdefault(scope_of(entry), []).append(entry)
    order = sorted(parts, key=lambda scope: (scope != GLOBAL, scope))
    return {scope: day._replace(entries=parts[scope]) for scope in order}


def upto(day: Day) -> int:
    """How many of the day's entries are done once `day` (a part of it) is."""
    return max((e.position + 1 for e in day.entries), default=day.done)


# -- deciding --------------------------------------------------------------------------------


def plan_day(
    day: Day,
    vault: CoreVault,
    knowledge: Knowledge,
    proposals: list[Proposal],
    pending: Pending | None = None,
) -> DayPlan:
    """`day`: its entries still to consolidate (`Day.unconsolidated`), or all of them;
    `pending`: what this run wrote for earlier days and has not indexed yet."""
    pending = pending or Pending()
    own = own_ids(vault, day)  # what novelty is judged without: the day's own memories
    novelty = _novelty(vault, [e.text for e in day.entries], own, pending.terms)
    people = people_of(day)
    actions: list[Planned] = []
    trivia: set[int] = set()  # positions
    kept: list[tuple[Entry, int]] = []
    said = [[] if e.who.lower() in AGENTS else _facts(e, people) for e in day.entries]
    knowledge.prefetch({fact.key for facts in said for fact in facts})
    for entry, facts in zip(day.entries, said, strict=True):
        agent = entry.who.lower() in AGENTS
        judged = score(entry.text, novelty, people, agent=agent, states_fact=bool(facts))
        if judged.trivia:
            trivia.add(entry.position)
            continue
        # Every entry that is not trivia is kept, verbatim: what it did not score is kept
        # at the low importance it has, for recall to find and prune to retire.
        kept.append((entry, judged.importance))
        actions.append(episode(day, entry, judged.importance, judged.reasons, people))
        for fact in facts:
            action = fact_action(day, entry, fact, knowledge)
            if action is not None:
                actions.append(action)
    knowledge.prefetch(())  # what it read may change once the day is applied
    actions.extend(_pattern_actions(day, proposals, vault, own, set(pending.new)))
    actions.extend(day_summaries(day, kept, trivia))
    dropped = dropped_entries(day, trivia)
    return DayPlan(
        day.path, len(day.entries), len(trivia), actions, "heuristics", [], upto(day), dropped
    )


def dropped_entries(day: Day, trivia: set[int]) -> tuple[Dropped, ...]:
    """The entries dropped as trivia, as the output lists them."""
    return tuple(
        Dropped(f"{e.at:%H:%M:%S}", e.who, e.text) for e in day.entries if e.position in trivia
    )


def _facts(entry: Entry, people: frozenset[str]) -> list[Fact]:
    """The facts an entry states, their text naming the speaker when they are someone
    ("Caroline likes hiking"; the vault's unnamed user: "Likes hiking")."""
    subject = subject_of("user", entry, people)
    name = next((p for p in people if p.lower() == subject and subject != "user"), "")
    return extract_facts(entry.text, subject, name)


def _novelty(
    vault: CoreVault, texts: list[str], own: set[str], unindexed: set[str]
) -> Callable[[str], float]:
    """novelty(text): the share of its terms no memory holds (the day's own left out);
    `unindexed` are the words of memories written but not indexed yet.

    The index is asked once for the terms of all the day's entries worth judging: one
    reader, not one per entry.
    """
    terms = {t: list(dict.fromkeys(vault.engine.analyze(t))) for t in texts if not is_trivia(t)}
    every = {w for ws in terms.values() for w in ws}
    known = vault.engine.known_terms(every - unindexed, own) | (every & unindexed)

    def novelty(text: str) -> float:
        words = terms.get(text)
        if words is None:  # not one of the day's: asked on its own
            words = list(dict.fromkeys(vault.engine.analyze(text)))
            held = vault.engine.known_terms(words, own) | (set(words) & unindexed)
        else:
            held = known
        if not words:
            return 0.0
        return 1 - sum(w in held for w in words) / len(words)

    return novelty


def people_of(day: Day) -> frozenset[str]:
    return frozenset(e.who for e in day.entries if e.who and e.who.lower() not in AGENTS)


def _source(day: Day, entry: Entry) -> str:
    return f"{day.path}#{entry.at:%H:%M:%S}"


def made_id(moment: datetime, *parts: str) -> str:
    """A memory id the cycle gives the same way every time it plans the same thing."""
    digest = hashlib.blake2b("|".join(parts).encode(), digest_size=3).hexdigest()
    return f"mem_{moment:%Y%m%d_%H%M%S}_{digest}"


def episode(
    day: Day, entry: Entry, importance: int, reasons: tuple[str, ...], people: frozenset[str]
) -> Planned:
    participants = list(
        dict.fromkeys([entry.who, *names(entry.text)] if entry.who else names(entry.text))
    )
    mem = Memory(
        id=made_id(entry.at, day.path, str(entry.position), "episode", entry.text),
        type="episodic",
        title=title_from_text(entry.text) or "entry",
        body=said_by(entry) + "\n",
        path="",
        tags=tuple(r for r in reasons if r not in ("novel", "banter")),
        created=entry.at,
        last_accessed=entry.at,
        importance=importance,
        source="consolidate",
        scope=scope_of(entry),
        session=entry.session or None,
        when=entry.at,
        extra=_clean(
            {
                "participants": participants,
                "channel": entry.channel,
                "buffer": _source(day, entry),
            }
        ),
    )
    why = f"importance {importance} ({', '.join(reasons) or 'novel'})"
    return Planned("create", mem.id, "episodic", mem.title, why, mem, scope=mem.scope)


def said_by(entry: Entry) -> str:
    """An entry's text with its speaker named ("Dana: the wifi is Otter5G"), as an
    imported turn's body reads; the text alone when nobody is named."""
    return f"{entry.who}: {entry.text}" if entry.who else entry.text


def fact_action(day: Day, entry: Entry, fact: Fact, knowledge: Knowledge) -> Planned | None:
    source = _source(day, entry)
    known = knowledge.fact(fact.key, day.path)
    if known is not None and knowledge.same_value(known[1], fact.value):
        return Planned(
            "reinforce", known[0], "semantic", fact.text, "already known", None, "", source
        )
    if known is None:
        known = _said_otherwise(knowledge, day, fact)
    mem = Memory(
        id=made_id(entry.at, day.path, str(entry.position), "fact", fact.key, fact.value),
        type="semantic",
        title=fact.text,
        body=fact.text + "\n",
        path="",
        tags=("fact",),
        created=entry.at,
        last_accessed=entry.at,
        importance=6,
        source="consolidate",
        supersedes=known[0] if known else None,
        extra={**fact.frontmatter(), "sources": [source]},
    )
    knowledge.planned[fact.key] = (mem.id, fact.value)
    if known is None:
        return Planned("create", mem.id, "semantic", mem.title, "a new fact", mem)
    return Planned(
        "supersede", mem.id, "semantic", mem.title, f"was {known[1]!r}", mem, target=known[0]
    )


def _said_otherwise(knowledge: Knowledge, day: Day, fact: Fact) -> tuple[str, str] | None:
    """An active global fact, said in other words (one `remember` stored: "Lives in
    Porto" against the day's "Moved to Madrid"), that `fact` surely gives a new value
    for: `remember`'s own judge (`vault/conflicts.py`), sure verdicts only, so a fact
    that merely looks alike is never hidden. (id, its title).

    Only what was stored before the day and not by the cycle counts: the cycle's own
    facts are followed by their key, and a run killed midway and run again must plan
    what one run plans, whatever the first one left in the index."""
    from kenomem.vault.conflicts import conflicting

    before = _day_start(day)
    for found in conflicting(knowledge.vault, fact.text, GLOBAL):
        if found.level != "sure":
            continue
        mem = knowledge.vault.load(found.path)
        if mem.source != "consolidate" and mem.created < before:
            return found.id, found.title
    return None


def _pattern_actions(
    day: Day, proposals: list[Proposal], vault: CoreVault, own: set[str], written: set[str]
) -> list[Planned]:
    """Patterns the day completes; `written`: ids this run created, not indexed yet."""
    actions = []
    for proposal in proposals:
        if proposal.learned_from[-1] != day.path:
            continue  # proposed on the day that completed it, once
        first = buffer.date_of(proposal.learned_from[0])
        planned = pattern(
            proposal.trigger,
            proposal.response,
            title=pattern_title(proposal.trigger, proposal.response),
            since=datetime(first.year, first.month, first.day, tzinfo=UTC),
            created=_end_of(day),
            confidence=proposal.confidence,
            learned_from=list(proposal.learned_from),
            why=(
                f"seen on {counted(len(proposal.learned_from), 'day')}, "
                f"confidence {proposal.confidence}"
            ),
        )
        if planned.id not in own and (planned.id in written or vault.engine.lookup([planned.id])):
            continue  # proposed before: approve or reject decides
        actions.append(planned)
    return actions


def pattern(
    trigger: str,
    response: str,
    *,
    title: str,
    since: datetime,
    created: datetime,
    confidence: float,
    learned_from: list[str],
    why: str,
) -> Planned:
    """A procedural pattern proposed for approval (`kenomem approve`); its id comes from
    its trigger and the day it was first seen (`since`), so it is proposed once."""
    mem = Memory(
        id=made_id(since, "pattern", trigger),
        type="procedural",
        title=title,
        body=response + "\n",
        path="",
        tags=("learned",),
        created=created,
        last_accessed=created,
        importance=6,
        source="consolidate",
        status="proposed",
        extra={
            "trigger": trigger,
            "confidence": confidence,
            "usage_count": 0,
            "learned_from": learned_from,
        },
    )
    return Planned("propose", mem.id, "procedural", mem.title, why, mem)


def _end_of(day: Day) -> datetime:
    return max((e.at for e in day.entries), default=_day_start(day))


def _day_start(day: Day) -> datetime:
    return datetime(day.date.year, day.date.month, day.date.day, tzinfo=UTC)


def day_summaries(
    day: Day, kept: list[tuple[Entry, int]], trivia: set[int], notes: dict[str, str] | None = None
) -> list[Planned]:
    """A summary for each chat of the day that kept an episode (or that an LLM summed up,
    trivia aside), made from that chat's entries alone and scoped to it (the entries
    without a session: a global one); none for a day of trivia, or of nothing worth
    keeping. `notes`: a text to put first, by scope (an LLM's summary of that chat's
    entries)."""
    notes = notes or {}
    start = day.entries[0] if day.entries and day.entries[0].position > 0 else None
    kept_by_scope: dict[str, list[tuple[Entry, int]]] = {}
    for item in kept:
        kept_by_scope.setdefault(scope_of(item[0]), []).append(item)
    return [
        day_summary(
            part,
            scope,
            kept_by_scope.get(scope, []),
            sum(e.position in trivia for e in part.entries),
            notes.get(scope, ""),
            start,
        )
        for scope, part in scopes(day).items()
        if scope in kept_by_scope
        or (notes.get(scope, "").strip() and any(e.position not in trivia for e in part.entries))
    ]


def day_summary(
    part: Day,
    scope: str,
    kept: list[tuple[Entry, int]],
    trivia: int,
    note: str = "",
    start: Entry | None = None,
) -> Planned:
    """The summary of one chat's entries of the day (`part`). `start`: the first entry
    logged after the day was consolidated early, when these come after it: the summary
    says from when, and is another memory than the first one."""
    who = sorted({e.who for e in part.entries if e.who})
    top = sorted(informative(kept)[:SUMMARY_LINES], key=lambda k: k[0].position)
    lines = [
        *([note.strip(), ""] if note.strip() else []),
        *(said_by(e._replace(text=gist(e.text))) for e, _ in top),
        *([""] if top else []),
        f"{counted(len(part.entries), 'entry')}, {trivia} trivia.",
    ]
    moment = _end_of(part)
    parts = [
        *([scope] if scope != GLOBAL else []),
        *([f"from {start.position}"] if start else []),
    ]
    title = f"Day summary {part.date.isoformat()}"
    if scope != GLOBAL:
        title += f" (chat {scope})"
    if start:
        title += f", from {start.at:%H:%M}"
    mem = Memory(
        id=made_id(_day_start(part), part.path, "summary", *parts),
        type="episodic",
        title=title,
        body="\n".join(lines) + "\n",
        path="",
        tags=("summary",),
        scope=scope,
        created=moment,
        last_accessed=moment,
        importance=SUMMARY_IMPORTANCE,
        source="consolidate",
        when=moment,
        extra=_clean({"participants": who, "buffer": part.path}),
    )
    return Planned(
        "summarize", mem.id, "episodic", mem.title, "the day's summary", mem, scope=scope
    )


def informative(kept: list[tuple[Entry, int]]) -> list[tuple[Entry, int]]:
    """The entries that say most, first: those with something to say (GIST_WORDS words,
    or a few words and a signal beyond a name: importance over BASE + 1), the most
    important first, then the longest; what only answers or thanks ("Wow, Caroline!",
    "Thanks, you too!") is never one of them."""
    said = [
        (e, i)
        for e, i in kept
        if (n := len(_WORD.findall(e.text))) >= GIST_WORDS or (n >= 4 and i > BASE + 1)
    ]
    return sorted(said, key=lambda k: (-k[1], -len(_WORD.findall(k[0].text)), k[0].position))


def gist(text: str) -> str:
    """An entry's first sentences, up to GIST_CHARS characters, cut at a word."""
    flat = " ".join(text.split())
    if len(flat) <= GIST_CHARS:
        return flat
    cut = flat[:GIST_CHARS]
    end = max(cut.rfind(". "), cut.rfind("! "), cut.rfind("? "))
    if end >= GIST_CHARS // 2:
        return cut[: end + 1]
    return cut.rsplit(" ", 1)[0] + "..."


def _clean(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v not in ("", None, [], ())}


# -- the cycle -----------------------------------------------------------------------------------
