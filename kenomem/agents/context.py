"""`kenomem context`: the memory block for a system prompt, packed into a token budget.

Parts, by priority, each with its share of the budget (`[context]` in kenomem.toml; what
a part leaves unused goes to the parts after it):

1. the foundation, always, first, whatever it costs (cut only if it alone is over);
2. the session's working memory, unless stale, with its age;
3. procedural patterns whose trigger the query matches, and pinned ones;
4. facts: semantic memories, by recall's ranking for the query, none weaker than
   `min_relevance` of the best (without a query: pinned and most important first);
5. recent days: episodes the query finds, then the last `recent_days`' most important;
6. the conversation: the session's buffer entries, summarised progressively when they
   outgrow their share (see `progressive.py`).

A part that does not fit is cut between two entries, never inside one, and says how many
it left out. What the block shows is touched like a recall, unless `touch` is false.
Deciding what goes in (`fill`) is pure; reading the vault happens in `build_context`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from kenomem.agents.foundation import blocks, read_foundation
from kenomem.agents.progressive import ChatEntry, SummaryCache, heuristic_summary, plan_chat
from kenomem.agents.tokens import counter
from kenomem.errors import UnsafePath, UsageError
from kenomem.files import buffer, store
from kenomem.files.fm import from_epoch
from kenomem.files.paths import check_label, label_filename, private_dir
from kenomem.files.timeparse import ago
from kenomem.index import Doc, Filters
from kenomem.recall.search import Ranked, RankedSearch, RecallRequest, finish, ranked_search
from kenomem.vault.core import CoreVault

SEARCHED = 40  # ranked candidates a query brings, shared by patterns, facts and episodes
LONG_MEMORY = 400  # characters of one memory's text before it is cut at a sentence


class ContextRequest(NamedTuple):
    query: str = ""
    session: str | None = None
    budget: int | None = None
    touch: bool | None = None
    now: datetime | None = None
    semantic: bool | None = None  # retrieve by meaning too (None: recall.semantic)


class Entry(NamedTuple):
    text: str
    id: str = ""


class Part(NamedTuple):
    name: str  # foundation | working | patterns | facts | recent | chat
    text: str  # its markdown as printed, "" when it shows nothing
    tokens: int
    shown: int
    left_out: int
    ids: list[str]


class ContextResult(NamedTuple):
    query: str
    session: str | None
    budget: int
    tokens: int
    tokenizer: str
    text: str
    parts: list[Part]
    warnings: list[str]
    confidence: str = "none"  # how sure the query's match is (recall/confidence.py)


Count = Callable[[str], int]


def fill(
    name: str,
    heading: str,
    entries: Sequence[Entry],
    allowance: float,
    count: Count,
    noun: str,
    joiner: str = "\n",
) -> Part:
    """As many of `entries` as fit in `allowance` tokens, in their order, with a last line
    saying how many were left out. The cost counts the blank line that follows a part."""

    def render(texts: list[str], note: str = "") -> str:
        body = joiner.join(texts + ([note] if note else []))
        return f"{heading}\n\n{body}" if heading else body

    def cost(texts: list[str], note: str = "") -> int:
        return count(render(texts, note) + "\n\n")

    texts: list[str] = []
    ids: list[str] = []
    left_out = 0
    for entry in entries:
        if cost([*texts, entry.text]) <= allowance:
            texts.append(entry.text)
            ids.append(entry.id)
        else:
            left_out += 1  # a smaller one further down may still fit
    note = ""
    if left_out:
        while texts:
            note = f"_{left_out} more {noun} not shown_"
            if cost(texts, note) <= allowance:
                break
            texts.pop()
            ids.pop()
            left_out += 1
        else:
            note = ""
    if not texts:
        return Part(name, "", 0, 0, left_out, [])
    text = render(texts, note)
    return Part(name, text, cost(texts, note), len(texts), left_out, [i for i in ids if i])


def build_context(vault: CoreVault, request: ContextRequest) -> ContextResult:
    settings = vault.settings.context
    now = request.now or datetime.now(UTC)
    budget = request.budget if request.budget is not None else settings.budget
    if budget < 1:
        raise UsageError("--budget must be at least 1 token")
    session = check_label(request.session, "session id") if request.session else None
    warnings: list[str] = []
    count, tokenizer = counter(settings.tokenizer, warnings.append)
    query = request.query.strip()
    touch = vault.settings.recall.touch if request.touch is None else request.touch

    # Working memory, patterns and the search each sync; one scan serves them all.
    with vault.sync_once():
        parts, confidence = _parts(
            vault, query, session, budget, now, touch, count, request.semantic
        )
    text = "".join(p.text + "\n\n" for p in parts if p.text).rstrip("\n")
    text = text + "\n" if text else ""
    return ContextResult(
        query,
        session,
        budget,
        count(text),
        tokenizer,
        text,
        parts,
        warnings + vault.warnings,
        confidence,
    )


def _parts(
    vault: CoreVault,
    query: str,
    session: str | None,
    budget: int,
    now: datetime,
    touch: bool,
    count: Count,
    semantic: bool | None = None,
) -> tuple[list[Part], str]:
    """Each part in its turn, given what the parts before it left of the budget; and the
    confidence of the search (none without a query)."""
    settings = vault.settings.context
    parts: list[Part] = []
    left = float(budget)

    def add(part: Part) -> None:
        nonlocal left
        parts.append(part)
        left -= part.tokens

    add(fill("foundation", "", _foundation(vault), left, count, "paragraphs"))

    carry = 0.0
    found = _search(vault, query, now, semantic) if query else None
    searched = None
    if found is not None:  # the session's own entries are the conversation part's
        mine = [r for r in found.ranked if r.doc.type == "buffer" and r.doc.session == session]
        searched = ([r for r in found.ranked if r not in mine], found.terms)
    offers: list[tuple[str, str, list[Entry], int, str]] = [
        (*_working(vault, session, now), settings.working_tokens, "lines"),
        ("patterns", "## How to behave",
         _patterns(vault, query, searched, settings.min_relevance, now, touch),
         settings.patterns_tokens, "patterns"),
        ("facts", "## What you know", _facts(vault, searched, settings.min_relevance),
         settings.facts_tokens, "memories"),
        ("recent", "## Recent days", _recent(vault, searched, settings, now),
         settings.recent_tokens, "memories"),
    ]  # fmt: skip
    for name, heading, entries, share, noun in offers:
        allowance = min(share + carry, left)
        part = fill(name, heading, entries, allowance, count, noun)
        add(part)
        carry = allowance - part.tokens
    if session:
        allowance = min(settings.chat_tokens + carry, left)
        add(_chat(vault, session, query, now, allowance, count))

    if touch and searched is not None:
        shown = {i for p in parts if p.name in ("patterns", "facts", "recent") for i in p.ids}
        finish(vault, [r for r in searched[0] if r.doc.id in shown], searched[1], now, True)
    return parts, found.confidence if found is not None else "none"


# -- what each part offers, best first ------------------------------------------------


def _foundation(vault: CoreVault) -> list[Entry]:
    """Its blocks, with the blank line back before each one that is not a list item."""
    try:
        found = blocks(read_foundation(vault.root))
    except UnsafePath as exc:
        vault.warnings.append(f"skipped {exc.message}")
        return []
    return [
        Entry(b if i == 0 or b.lstrip()[:2] in ("- ", "* ", "+ ") else "\n" + b)
        for i, b in enumerate(found)
    ]


def _search(
    vault: CoreVault, query: str, now: datetime, semantic: bool | None = None
) -> RankedSearch:
    types = ("semantic", "episodic", "procedural", "buffer")
    request = RecallRequest(query, limit=SEARCHED, types=types, touch=False, semantic=semantic)
    return ranked_search(vault, request, now)


def _working(vault: CoreVault, session: str | None, now: datetime) -> tuple[str, str, list[Entry]]:
    if not session:
        return "working", "", []
    from kenomem.agents.working import current_working

    view = current_working(vault, session, now)
    if view is None or not view.text.strip():
        return "working", "", []
    heading = f"## Working memory (session {session}, updated {ago(view.updated, now)})"
    return "working", heading, [Entry(b, view.id) for b in _scratchpad(view.text, view.fields)]


def _scratchpad(text: str, fields: dict[str, Any]) -> list[str]:
    """The structured form as labelled lines ('Task: ...'): its own '## Task' headings
    would read as parts of the block."""
    if not fields:
        return blocks(text)
    lines = []
    for key, value in fields.items():
        label = key.capitalize()
        if isinstance(value, list):
            if value:
                lines.append(f"{label}:")
                lines += [f"- {item}" for item in value]
        elif str(value).strip():
            lines.append(f"{label}: {' '.join(str(value).split())}")
    return lines


def _patterns(
    vault: CoreVault,
    query: str,
    searched: tuple[list[Ranked], tuple[str, ...]] | None,
    floor: float,
    now: datetime,
    touch: bool,
) -> list[Entry]:
    """Patterns the query triggers and pinned ones, then the procedural memories without
    a trigger (playbooks, preferences) that the query finds relevant."""
    from kenomem.agents.procedural import matching_patterns, standing

    chosen = matching_patterns(vault, query, now, touch=touch)
    if searched is not None:
        seen = {p.id for p in chosen}
        docs = [r.doc for r in _relevant(searched[0], floor) if r.doc.type == "procedural"]
        chosen += standing(vault, [d for d in docs if d.id not in seen])
    entries = []
    for found in chosen:
        what = _one_line(found.text or found.title)
        text = f"- When {found.trigger}: {what}" if found.trigger else f"- {what}"
        entries.append(Entry(text, found.id))
    return entries


def _facts(
    vault: CoreVault, searched: tuple[list[Ranked], tuple[str, ...]] | None, floor: float
) -> list[Entry]:
    if searched is not None:
        docs = [r.doc for r in _relevant(searched[0], floor) if r.doc.type == "semantic"]
    else:
        found = vault.browse(Filters(types=("semantic",)), sort="importance", limit=200).hits
        docs = sorted(
            (hit.doc for hit in found), key=lambda d: (not d.pinned, -d.importance, -d.created)
        )
    return [Entry("- " + _memory_text(vault, d), d.id) for d in docs]


def _recent(
    vault: CoreVault,
    searched: tuple[list[Ranked], tuple[str, ...]] | None,
    settings: Any,
    now: datetime,
) -> list[Entry]:
    docs: list[Doc] = []
    if searched is not None:
        docs = [
            r.doc
            for r in _relevant(searched[0], settings.min_relevance)
            if r.doc.type in ("episodic", "buffer")  # buffer: logged, not yet consolidated
        ]
    since = (now - timedelta(days=settings.recent_days)).timestamp()
    recent = vault.browse(Filters(types=("episodic",), since=since), sort="time", limit=200).hits
    seen = {d.id for d in docs}
    docs += sorted(
        (h.doc for h in recent if h.doc.id not in seen),
        key=lambda d: (-d.importance, -d.time),
    )
    return [_recent_entry(vault, d) for d in docs]


def _recent_entry(vault: CoreVault, doc: Doc) -> Entry:
    if doc.type == "buffer":  # an entry of the log: its time and speaker, its own text
        who = f" {doc.people[0]}" if doc.people else ""
        return Entry(f"- {from_epoch(doc.time):%Y-%m-%d %H:%M}{who}: {_one_line(doc.body)}", doc.id)
    return Entry(f"- {from_epoch(doc.time):%Y-%m-%d}: " + _memory_text(vault, doc), doc.id)


def _relevant(ranked: list[Ranked], floor: float) -> list[Ranked]:
    """Nothing pops up unasked: a hit must match, and come near the best one."""
    return [r for r in ranked if r.bm25 > 0 and r.terms.relevance >= floor]


def _chat(
    vault: CoreVault, session: str, query: str, now: datetime, allowance: float, count: Count
) -> Part:
    entries = _session_entries(vault, session, now)
    heading = f"## This conversation (session {session})"
    if not entries:
        return Part("chat", "", 0, 0, 0, [])
    terms = set(vault.engine.analyze(query)) if query else set()

    def wanted(text: str) -> int:
        return len(terms.intersection(vault.engine.analyze(text))) if terms else 0

    folder = private_dir(vault.state_dir) / "summaries" / label_filename(session)
    reserve = count(f"{heading}\n\n") + count("\n_9999 earlier entries not shown_\n\n")
    plan = plan_chat(
        entries,
        max(0.0, allowance - reserve),
        count,
        SummaryCache(folder, heuristic_summary),
        wanted if terms else None,
    )
    lines = [Entry(line.text) for line in plan.lines]
    part = fill("chat", heading, lines, allowance, count, "entries")
    if not plan.left_out or not part.text:
        return part._replace(left_out=part.left_out + plan.left_out)
    text = part.text + f"\n_{plan.left_out} earlier entries not shown_"
    return part._replace(
        text=text, tokens=count(text + "\n\n"), left_out=part.left_out + plan.left_out
    )


def _session_entries(vault: CoreVault, session: str, now: datetime) -> list[ChatEntry]:
    first_day = (now - timedelta(days=vault.settings.context.session_days)).date()
    entries = []
    for rel in buffer.days(vault.root):
        day = buffer.date_of(rel)
        if day < first_day or day > now.date():
            continue
        try:
            parsed = buffer.read_day(vault.root, rel)
        except (OSError, UnicodeDecodeError, ValueError, UnsafePath) as exc:
            vault.warnings.append(f"skipped {rel}: {exc}")
            continue
        for e in parsed.entries:
            if e.session == session and e.at <= now:
                clock = f"{e.at:%H:%M}" if day == now.date() else f"{e.at:%m-%d %H:%M}"
                entries.append(ChatEntry(f"{rel}#{e.at:%H:%M:%S}", clock, e.who, e.text))
    return entries


# -- how a memory reads in the block ------------------------------------------------------

_SENTENCE_END = re.compile(r"[.!?](?=\s)")


def _memory_text(vault: CoreVault, doc: Doc) -> str:
    body = store.read_body(vault.root, doc.path)
    text = _one_line(body if body and body.strip() else doc.title)
    return text if text else doc.title


def _one_line(text: str) -> str:
    """A memory on one line; a long one cut after its last whole sentence that fits."""
    flat = " ".join(line.strip().lstrip("#").strip() for line in text.splitlines())
    flat = " ".join(flat.split())
    if len(flat) <= LONG_MEMORY:
        return flat
    ends = [m.end() for m in _SENTENCE_END.finditer(flat, 0, LONG_MEMORY)]
    return flat[: ends[-1]] + " …" if ends else flat[:LONG_MEMORY].rsplit(" ", 1)[0] + " …"
