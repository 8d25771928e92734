"""`kenomem context`: the memory block for a system prompt, packed into a token budget.

The fixed parts come first, each with a guaranteed share of the budget (`[context]` in
kenomem.toml):

1. the foundation, always, first: it may take whatever the other fixed parts' shares
   leave (cut between paragraphs only past that);
2. how to behave: the procedural preferences (procedural memories without a trigger, and
   pinned ones), always loaded, most important first;
3. the session's working memory, unless stale, with its age;
4. the conversation: the session's buffer entries the sleep cycle has not consumed (as
   of `now`), the latest verbatim, older stretches summarised when they outgrow their
   share (see `progressive.py`); what it consumed is memory, found by relevance.

The retrieved memories share what the fixed parts leave, in order, each up to its share
of that plus what the one before left unused:

5. patterns whose trigger the query matches;
6. facts: semantic memories, by recall's ranking for the query, none weaker than
   `min_relevance` of the best (without a query: pinned and most important first);
7. recent days: episodes the query finds, then the last `recent_days`' most important.

What is still left goes back to a part cut short, fixed parts first. A part is cut
between two entries, never inside one; the block's last line says what was left out
("12 earlier turns, 3 memories"), and the result counts it by part.

A text is shown once (`repeats.py`): a memory the conversation or a part before it says
already is left out, or shown without the sentences said; a day summary and its episodes
are not both shown; a fact drawn from a turn in the block gives way to it. The block is
packed again without what was left out, so what it frees goes to other memories.

Every memory the block holds or searches is in the session's scope: its own memories and
the global ones, never another chat's (`index.scope`); with `tags`, only the memories
holding all of them (the foundation, the session's working memory and its conversation
are the session's own, and stay). With `now`, the block is built as of then: the
conversation up to it, the recent days before it, recency counted from it, and no memory
made after it. What the block shows is touched like a recall, with a query or without,
unless `touch` is false. Deciding what goes in (`fill`, `pack`, `repeats.walk`) is pure;
reading the vault happens in `build_context`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from kenomem.agents import repeats
from kenomem.agents.foundation import blocks, read_foundation
from kenomem.agents.progressive import (
    SUMMARIES_DIR,
    ChatEntry,
    ChatLine,
    SummaryCache,
    heuristic_summary,
    plan_chat,
)
from kenomem.agents.tokens import counter
from kenomem.errors import KenomemError, UnsafePath, UsageError
from kenomem.files import buffer, fm
from kenomem.files.fm import from_epoch
from kenomem.files.paths import check_label, label_filename, read_text_inside
from kenomem.files.timeparse import ago
from kenomem.index import Doc, Filters, Hit, SearchResult
from kenomem.index.scope import of_session
from kenomem.recall import asof
from kenomem.recall.search import Ranked, RankedSearch, RecallRequest, ranked_search
from kenomem.recall.touch import touch_all
from kenomem.vault.conflicts import keep_newer
from kenomem.vault.core import CoreVault

SEARCHED = 40  # ranked candidates a query brings, shared by facts and episodes
LONG_MEMORY = 400  # characters of one memory's text before it is cut at a sentence
PREFERENCES = 200  # procedural memories read for the preferences, at most
ROUNDS = 3  # packings at most, each without what the one before showed twice


class ContextRequest(NamedTuple):
    query: str = ""
    session: str | None = None
    budget: int | None = None
    touch: bool | None = None
    now: datetime | None = None
    semantic: bool | None = None  # retrieve by meaning too (None: recall.semantic)
    tags: tuple[str, ...] = ()  # only memories with all of these tags


class Entry(NamedTuple):
    text: str
    id: str = ""
    stands_for: int = 1  # buffer entries a line of the conversation covers
    # A memory's sentences (`repeats.pieces`), so that those shown elsewhere can be left
    # out: the line reads `prefix` + the pieces + `suffix` (" …" when cut).
    pieces: tuple[repeats.Piece, ...] = ()
    prefix: str = ""
    suffix: str = ""
    origin: str = ""  # the logged turn it is: "buffer/<day>.md#HH:MM:SS"
    drawn_from: tuple[str, ...] = ()  # a fact's: the logged turns it was drawn from

    def without(self, kept: tuple[repeats.Piece, ...]) -> Entry:
        """The line with only the `kept` pieces."""
        return self._replace(text=_line(self.prefix, kept, self.suffix), pieces=kept)


class Part(NamedTuple):
    name: str  # foundation | preferences | working | patterns | facts | recent | chat
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
    left_out: dict[str, int] = {}  # noqa: RUF012 - read-only; by part, what did not fit
    left_out_note: str = ""  # the block's last line saying so, "" when all fit
    confidence: str = "none"  # how sure the query's match is (recall/confidence.py)


Count = Callable[[str], int]
Maker = Callable[[float], Part]  # a part made to fit an allowance of tokens

FIXED = ("foundation", "preferences", "working", "chat")
RETRIEVED = ("patterns", "facts", "recent")
ORDER = ("foundation", "preferences", "working", "patterns", "facts", "recent", "chat")
# How the block's last line names what a part left out: (one, many).
NOUNS = {
    "foundation": ("paragraph of the foundation", "paragraphs of the foundation"),
    "preferences": ("preference", "preferences"),
    "working": ("line of working memory", "lines of working memory"),
    "chat": ("earlier turn", "earlier turns"),
    "memories": ("memory", "memories"),
}


def fill(name: str, heading: str, entries: Sequence[Entry], allowance: float, count: Count) -> Part:
    """As many of `entries` as fit in `allowance` tokens, in their order (a smaller one
    further down may still fit). The cost counts the blank line that follows a part;
    `left_out` counts what the entries left out stand for."""
    return filled(name, heading, entries, allowance, count)[0]


Made = tuple[Part, tuple[Entry, ...]]  # a part, and the entries it shows


def filled(
    name: str, heading: str, entries: Sequence[Entry], allowance: float, count: Count
) -> Made:
    """`fill`, and the entries shown."""

    def render(texts: list[str]) -> str:
        body = "\n".join(texts)
        return f"{heading}\n\n{body}" if heading else body

    texts: list[str] = []
    ids: list[str] = []
    chosen: list[Entry] = []
    left_out = 0
    for entry in entries:
        if count(render([*texts, entry.text]) + "\n\n") <= allowance:
            texts.append(entry.text)
            ids.append(entry.id)
            chosen.append(entry)
        else:
            left_out += entry.stands_for
    if not texts:
        return Part(name, "", 0, 0, left_out, []), ()
    text = render(texts)
    shown = list(dict.fromkeys(i for i in ids if i))  # a memory shown on many lines: once
    return Part(name, text, count(text + "\n\n"), len(texts), left_out, shown), tuple(chosen)


class Shares(NamedTuple):
    """Of the budget, what each fixed part is guaranteed; of what the fixed parts leave,
    what each retrieved part may take."""

    fixed: dict[str, float]
    retrieved: dict[str, float]


def shares(settings: Any) -> Shares:
    """The `[context]` shares, `bounded`."""
    fixed = {
        "preferences": settings.preferences_share,
        "working": settings.working_share,
        "chat": settings.chat_share,
    }
    retrieved = {
        "patterns": settings.patterns_share,
        "facts": settings.facts_share,
        "recent": settings.recent_share,
    }
    return bounded(Shares(fixed, retrieved))


def bounded(split: Shares) -> Shares:
    """`split` with each share in [0, 1] (NaN: 0) and the fixed shares scaled down when
    they are over 1 in all: what makes any split keep the parts within the budget."""

    def clamp(value: float) -> float:
        return min(1.0, max(0.0, float(value))) if value == value else 0.0

    fixed = {name: clamp(share) for name, share in split.fixed.items()}
    total = sum(fixed.values())
    if total > 1:
        fixed = {name: share / total for name, share in fixed.items()}
    return Shares(fixed, {name: clamp(share) for name, share in split.retrieved.items()})


def pack(makers: dict[str, Maker], budget: float, split: Shares) -> dict[str, Part]:
    """Each part made to fit (pure, given pure makers), within `budget` whatever `split`
    holds (it is `bounded` first):

    1. the fixed parts, each in its guaranteed share (the foundation in what the other
       fixed shares leave);
    2. the retrieved parts in what is left, each up to its share of it, plus what the
       one before left unused;
    3. what is still left, to the parts cut short, fixed ones first.
    """
    split = bounded(split)
    made: dict[str, Part] = {}
    others = sum(split.fixed.values())
    for name in FIXED:
        share = split.fixed.get(name)
        allowance = budget * share if share is not None else budget * max(0.0, 1 - others)
        made[name] = makers[name](max(0.0, allowance))
    pool = budget - sum(p.tokens for p in made.values())
    left = pool
    carry = 0.0
    for name in RETRIEVED:
        allowance = max(0.0, min(pool * split.retrieved[name] + carry, left))
        made[name] = makers[name](allowance)
        left -= made[name].tokens
        carry = allowance - made[name].tokens
    for name in FIXED + RETRIEVED:
        left = budget - sum(p.tokens for p in made.values())
        if left <= 0:
            break
        if made[name].left_out:
            bigger = makers[name](made[name].tokens + left)
            if bigger.tokens <= made[name].tokens + left:
                made[name] = bigger
    return made


def left_out_note(left_out: dict[str, int]) -> str:
    """The block's last line: what did not fit, by kind."""
    said = left_out_said(left_out)
    return f"_Left out to fit the budget: {said}_" if said else ""


def left_out_said(left_out: dict[str, int]) -> str:
    """What did not fit, by kind: "12 earlier turns, 3 memories" ("" if all did)."""
    kinds: dict[str, int] = {}
    for name in FIXED + RETRIEVED:
        n = left_out.get(name, 0)
        if n:
            kind = "memories" if name in RETRIEVED else name
            kinds[kind] = kinds.get(kind, 0) + n
    if not kinds:
        return ""
    return ", ".join(f"{n} {NOUNS[k][0] if n == 1 else NOUNS[k][1]}" for k, n in kinds.items())


def packed(
    makers: dict[str, Maker], budget: int, split: Shares, count: Count
) -> tuple[list[Part], str]:
    """The parts in the block's order and its last line, all within `budget`: when
    something is left out, the parts are packed again with room kept for the line."""
    made = pack(makers, budget, split)
    kinds: set[str] = set()
    for _ in range(3):
        note = left_out_note({n: p.left_out for n, p in made.items()})
        if not note:
            break
        new = {n for n, p in made.items() if p.left_out}
        if new <= kinds:
            break
        kinds |= new
        # Room for the line at its longest with these kinds (counts up to 9999).
        worst = left_out_note(dict.fromkeys(kinds, 9999))
        made = pack(makers, max(0, budget - count(worst + "\n\n")), split)
    note = left_out_note({n: p.left_out for n, p in made.items()})
    used = sum(p.tokens for p in made.values())
    if note and used + count(note + "\n\n") > budget:
        note = ""  # a budget too small for the line: the result still counts what is left out
    return [made[name] for name in ORDER], note


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

    tags = tuple(request.tags)
    as_of = request.now is not None  # nothing made after `now` is shown

    # Working memory, patterns and the search each sync; one scan serves them all.
    with vault.sync_once():
        offer, docs, confidence = _makers(
            vault, query, session, now, touch, count, request.semantic, tags, as_of
        )
        parts, note = without_repeats(offer, budget, shares(settings), count)
        if touch:
            _touch_shown(vault, parts, docs, now)
    text = "".join(p.text + "\n\n" for p in parts if p.text) + (note + "\n\n" if note else "")
    text = text.rstrip("\n")
    text = text + "\n" if text else ""
    left_out = {p.name: p.left_out for p in parts if p.left_out}
    return ContextResult(
        query,
        session,
        budget,
        count(text),
        tokenizer,
        text,
        parts,
        warnings + vault.warnings,
        left_out,
        note,
        confidence,
    )


class Offer(NamedTuple):
    """What each part offers, read from the vault once: its heading and entries, best
    first; the conversation as a function of its allowance."""

    lists: dict[str, tuple[str, list[Entry]]]
    chat: Callable[[float], Made]
    count: Count


class Showing:
    """The entries each part made shows, by the part (kept, so that its id is its own)."""

    def __init__(self) -> None:
        self.made: dict[int, Made] = {}

    def __call__(self, made: Made) -> Part:
        self.made[id(made[0])] = made
        return made[0]

    def entries(self, part: Part) -> tuple[Entry, ...]:
        found = self.made.get(id(part))
        return found[1] if found is not None and found[0] is part else ()


def without_repeats(
    offer: Offer, budget: int, split: Shares, count: Count
) -> tuple[list[Part], str]:
    """The block packed (`packed`) with each text once (`repeats.walk`): a memory shown
    twice is taken out and the block packed again, so that what it freed goes to the
    others (at most ROUNDS times); what is still shown twice then is cut from its line."""
    excluded: set[tuple[str, int]] = set()
    for _ in range(ROUNDS):
        shown = Showing()
        makers, where = _offered(offer, excluded, shown)
        parts, note = packed(makers, budget, split, count)
        verdicts = _verdicts(parts, shown)
        twice = {where[id(e)] for e, v in verdicts if not v.keep and id(e) in where}
        if twice <= excluded:
            break
        excluded |= twice
    cut = {id(e): v for e, v in verdicts}
    return [_cut(p, shown.entries(p), offer.lists, cut, count) for p in parts], note


def _offered(
    offer: Offer, excluded: set[tuple[str, int]], shown: Showing
) -> tuple[dict[str, Maker], dict[int, tuple[str, int]]]:
    """The makers of the parts without the `excluded` entries, each telling `shown` what
    it shows; where each entry is."""
    where: dict[int, tuple[str, int]] = {}
    makers: dict[str, Maker] = {}
    for name, (heading, entries) in offer.lists.items():
        kept = [e for i, e in enumerate(entries) if (name, i) not in excluded]
        where.update({id(e): (name, i) for i, e in enumerate(entries)})
        makers[name] = _maker(name, heading, kept, offer.count, shown)
    makers["chat"] = lambda allowance: shown(offer.chat(allowance))
    return makers, where


def _maker(name: str, heading: str, entries: list[Entry], count: Count, shown: Showing) -> Maker:
    return lambda allowance: shown(filled(name, heading, entries, allowance, count))


def _verdicts(parts: list[Part], shown: Showing) -> list[tuple[Entry, repeats.Verdict]]:
    """Each retrieved memory shown, with what of it to show (`repeats.walk`)."""
    by_name = {p.name: shown.entries(p) for p in parts}
    first = [
        repeats.Shown(e.text, origin=e.origin)
        for name in ("chat", "foundation", "preferences", "working")
        for e in by_name[name]
    ]
    then = [e for name in RETRIEVED for e in by_name[name]]
    said = [repeats.Shown(e.text, e.pieces, e.origin, e.drawn_from) for e in then]
    return list(zip(then, repeats.walk(first, said), strict=True))


def _cut(
    part: Part,
    shows: tuple[Entry, ...],
    lists: dict[str, tuple[str, list[Entry]]],
    verdicts: dict[int, repeats.Verdict],
    count: Count,
) -> Part:
    """The part without the lines, or the sentences, shown before it."""
    if part.name not in RETRIEVED or not any(id(e) in verdicts for e in shows):
        return part
    entries = []
    for entry in shows:
        verdict = verdicts.get(id(entry))
        if verdict is None or (verdict.keep and verdict.pieces == entry.pieces):
            entries.append(entry)
        elif verdict.keep and entry.pieces:
            entries.append(entry.without(verdict.pieces))
    if entries == list(shows):
        return part
    if not entries:
        return Part(part.name, "", 0, 0, part.left_out, [])
    heading = lists[part.name][0]
    text = heading + "\n\n" + "\n".join(e.text for e in entries)
    ids = list(dict.fromkeys(e.id for e in entries if e.id))
    return Part(part.name, text, count(text + "\n\n"), len(entries), part.left_out, ids)


def _makers(
    vault: CoreVault,
    query: str,
    session: str | None,
    now: datetime,
    touch: bool,
    count: Count,
    semantic: bool | None = None,
    tags: tuple[str, ...] = (),
    as_of: bool = False,
) -> tuple[Offer, dict[str, Doc], str]:
    """What each part offers, read from the vault once; the memories offered, by id
    (for the touch); the confidence of the search. With `as_of`, nothing made after
    `now`."""
    settings = vault.settings.context
    visible = of_session(session)
    until = now if as_of else None
    found = _search(vault, query, now, visible, semantic, tags, as_of) if query else None
    searched = None
    if found is not None:  # the session's own buffer entries are the conversation part's
        searched = [
            r
            for r in found.ranked
            if not (r.doc.type == "buffer" and session and r.doc.session == session)
        ]
    preferences = _preferences(vault, visible, tags, until)
    taken = {d.id for d, _ in preferences}
    patterns = _patterns(vault, query, visible, taken, now, touch, tags, until)
    facts = _facts(vault, searched, settings.min_relevance, visible, tags, until)
    recent = _recent(vault, searched, settings, now, visible, tags, until)
    # Of a recorded conflict (`contradicts`), the newer side only.
    kept, facts, recent = keep_newer(vault, [d for d, _ in preferences], facts, recent)
    shown = {d.id for d in kept}
    preferences = [(d, line) for d, line in preferences if d.id in shown]
    everything = [d for d, _ in preferences] + facts + recent
    docs = {d.id: d for d in everything if d.type != "buffer"}  # an entry is never touched
    lists: dict[str, tuple[str, list[Entry]]] = {
        "foundation": ("", _foundation(vault)),
        "preferences": ("## How to behave", [Entry(line, d.id) for d, line in preferences]),
        "working": _working(vault, session, now),
        "patterns": ("## Patterns that apply", patterns),
        "facts": ("## What you know", [_memory_entry(vault, d, "- ") for d in facts]),
        "recent": (
            "## Recent days",
            [_recent_entry(vault, d) for d in recent],
        ),
    }

    if session:
        chat = _chat(vault, session, query, now, count)
    else:
        chat = lambda allowance: (Part("chat", "", 0, 0, 0, []), ())  # noqa: E731
    return Offer(lists, chat, count), docs, found.confidence if found is not None else "none"


def _touch_shown(vault: CoreVault, parts: list[Part], docs: dict[str, Doc], now: datetime) -> None:
    """Count each memory shown as recalled (`last_accessed`, `access_count`); a pattern
    its trigger matched was counted as used already."""
    shown = [docs[i] for p in parts for i in p.ids if i in docs]
    if not shown:
        return
    with vault.lock:
        state = vault.state
        touch_all(
            vault,
            [(d, state.accessed(d.path, d.last_accessed, d.access_count)[1] + 1) for d in shown],
            now,
        )


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
    vault: CoreVault,
    query: str,
    now: datetime,
    visible: tuple[str, ...],
    semantic: bool | None = None,
    tags: tuple[str, ...] = (),
    as_of: bool = False,
) -> RankedSearch:
    # procedural memories come as preferences or patterns; buffer: logged, not consolidated
    types = ("semantic", "episodic", "buffer")
    request = RecallRequest(
        query,
        limit=SEARCHED,
        types=types,
        tags=tags,
        scopes=visible,
        touch=False,
        semantic=semantic,
        now=now if as_of else None,  # as recall --now: what was made after it is not there
    )
    return ranked_search(vault, request, now)


def _working(vault: CoreVault, session: str | None, now: datetime) -> tuple[str, list[Entry]]:
    if not session:
        return "", []
    from kenomem.agents.working import current_working

    view = current_working(vault, session, now)
    if view is None or not view.text.strip():
        return "", []
    heading = f"## Working memory (session {session}, updated {ago(view.updated, now)})"
    return heading, [Entry(b, view.id) for b in _scratchpad(view.text, view.fields)]


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
        elif _is_list(str(value)):  # a field written as `- ` lines keeps them
            lines.append(f"{label}:")
            lines += [line.strip() for line in str(value).splitlines() if line.strip()]
        elif str(value).strip():
            lines.append(f"{label}: {' '.join(str(value).split())}")
    return lines


def _is_list(text: str) -> bool:
    rows = [line.strip() for line in text.splitlines() if line.strip()]
    return len(rows) > 1 and all(row[:2] in ("- ", "* ", "+ ") for row in rows)


def _preferences(
    vault: CoreVault,
    visible: tuple[str, ...],
    tags: tuple[str, ...] = (),
    until: datetime | None = None,
) -> list[tuple[Doc, str]]:
    """How to behave, whatever the message: the active procedural memories without a
    trigger (preferences, playbooks) and the pinned ones; pinned, then most important
    first. Each with its line in the block."""
    from kenomem.agents.procedural import views_of

    filters = Filters(types=("procedural",), scopes=visible, tags=tags)
    docs = _made_by(vault, vault.browse(filters, sort="importance", limit=PREFERENCES), until)
    by_id = {hit.doc.id: hit.doc for hit in docs}
    views = [v for v in views_of(vault, list(by_id.values())) if v.pinned or not v.trigger]
    views.sort(key=lambda v: (not v.pinned, -v.importance, -v.usage_count, -v.created.timestamp()))
    return [(by_id[v.id], _pattern_line(v.trigger, v.text or v.title)) for v in views]


def _patterns(
    vault: CoreVault,
    query: str,
    visible: tuple[str, ...],
    taken: set[str],
    now: datetime,
    touch: bool,
    tags: tuple[str, ...] = (),
    until: datetime | None = None,
) -> list[Entry]:
    """The active patterns whose trigger the query holds (each counted as used), most
    confident first; those among the preferences already are not repeated."""
    if not query:
        return []
    from kenomem.agents.procedural import matching_patterns

    chosen = matching_patterns(
        vault, query, now, touch=touch, pinned=False, scopes=visible, tags=tags, until=until
    )
    return [
        Entry(_pattern_line(p.trigger, p.text or p.title), p.id)
        for p in chosen
        if p.id not in taken
    ]


def _pattern_line(trigger: str, text: str) -> str:
    what = _one_line(text)
    return f"- When {trigger}: {what}" if trigger else f"- {what}"


def _facts(
    vault: CoreVault,
    searched: list[Ranked] | None,
    floor: float,
    visible: tuple[str, ...],
    tags: tuple[str, ...] = (),
    until: datetime | None = None,
) -> list[Doc]:
    if searched is not None:
        return [r.doc for r in _relevant(searched, floor) if r.doc.type == "semantic"]
    filters = Filters(types=("semantic",), scopes=visible, tags=tags)
    found = _made_by(vault, vault.browse(filters, sort="importance", limit=200), until)
    return sorted(
        (hit.doc for hit in found), key=lambda d: (not d.pinned, -d.importance, -d.created)
    )


def _recent(
    vault: CoreVault,
    searched: list[Ranked] | None,
    settings: Any,
    now: datetime,
    visible: tuple[str, ...],
    tags: tuple[str, ...] = (),
    until: datetime | None = None,
) -> list[Doc]:
    docs: list[Doc] = []
    if searched is not None:
        docs = [
            r.doc
            for r in _relevant(searched, settings.min_relevance)
            if r.doc.type in ("episodic", "buffer")
        ]
    since = (now - timedelta(days=settings.recent_days)).timestamp()
    end = until.timestamp() if until is not None else None
    filters = Filters(types=("episodic",), scopes=visible, tags=tags, since=since, until=end)
    recent = _made_by(vault, vault.browse(filters, sort="time", limit=200), until)
    seen = {d.id for d in docs}
    docs += sorted(
        (h.doc for h in recent if h.doc.id not in seen),
        key=lambda d: (-d.importance, -d.time),
    )
    return docs


def _made_by(vault: CoreVault, found: SearchResult, moment: datetime | None) -> list[Hit]:
    """The hits, without those made after `moment` (as recall --now: `recall.asof`)."""
    return asof.made_by(vault, found, moment).hits if moment is not None else found.hits


def _recent_entry(vault: CoreVault, doc: Doc) -> Entry:
    if doc.type == "buffer":  # an entry of the log: its time and speaker, its own text
        who = f" {doc.people[0]}" if doc.people else ""
        at = from_epoch(doc.time)
        prefix = f"- {at:%Y-%m-%d %H:%M}{who}: "
        origin = f"{doc.path}#{at:%H:%M:%S}"
        return _entry(doc.id, prefix, repeats.pieces(doc.body), origin=origin)
    return _memory_entry(vault, doc, f"- {from_epoch(doc.time):%Y-%m-%d}: ")


def _relevant(ranked: list[Ranked], floor: float) -> list[Ranked]:
    """Nothing pops up unasked: a hit must be related to the query as recall means it
    (its words, a link, the time asked alone, or near in meaning: `Ranked.related`), and
    come near the best one."""
    return [r for r in ranked if r.related and r.terms.relevance >= floor]


def _chat(
    vault: CoreVault, session: str, query: str, now: datetime, count: Count
) -> Callable[[float], Made]:
    """The conversation made to fit an allowance: its latest entries verbatim, older
    stretches summarised (`plan_chat`); the entries read once."""
    entries = _session_entries(vault, session, now)
    heading = f"## This conversation (session {session})"
    terms = set(vault.engine.analyze(query)) if query else set()

    def wanted(text: str) -> int:
        return len(terms.intersection(vault.engine.analyze(text))) if terms else 0

    folder = f"{SUMMARIES_DIR}/{label_filename(session)}"
    cache = SummaryCache(vault.state_dir, folder, heuristic_summary)
    reserve = count(f"{heading}\n\n")
    made: dict[float, Made] = {}  # the packing asks again for the same allowance

    def make(allowance: float) -> Made:
        if not entries:
            return Part("chat", "", 0, 0, 0, []), ()
        if allowance not in made:
            plan = plan_chat(
                entries, max(0.0, allowance - reserve), count, cache, wanted if terms else None
            )
            lines = [
                Entry(line.text, stands_for=line.entries, origin=_origin(entries, line))
                for line in plan.lines
            ]
            part, shows = filled("chat", heading, lines, allowance, count)
            made[allowance] = part._replace(left_out=part.left_out + plan.left_out), shows
        return made[allowance]

    return make


def _origin(entries: list[ChatEntry], line: ChatLine) -> str:
    """The logged turn a line of the conversation shows whole ("" for a summary)."""
    return entries[line.position].key if line.kind in ("verbatim", "recalled") else ""


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
        # What the sleep cycle consumed (by `now`) is memory now, found by relevance
        # like any other: the conversation is what was said since it last slept.
        asleep = parsed.consolidated is not None and parsed.consolidated <= now
        for e in parsed.pending if asleep else parsed.entries:
            if e.session == session and e.at <= now:
                # Another day's turn says its whole date: it stands for its episode too.
                clock = f"{e.at:%H:%M}" if day == now.date() else f"{e.at:%Y-%m-%d %H:%M}"
                entries.append(ChatEntry(f"{rel}#{e.at:%H:%M:%S}", clock, e.who, e.text))
    return entries


# -- how a memory reads in the block ------------------------------------------------------

_SENTENCE_END = re.compile(r"[.!?](?=\s)")


def _memory_entry(vault: CoreVault, doc: Doc, prefix: str) -> Entry:
    """A memory's line: its text (the title when it has none) in sentences, and the
    logged turn it is, or (a fact) those it was drawn from."""
    body, meta = _read(vault, doc.path)
    text = body if body and body.strip() else doc.title
    summary = "summary" in doc.tags or "summarizes" in meta
    origin = str(meta.get("buffer") or "") if doc.type == "episodic" else ""
    sources = meta.get("sources") if doc.type == "semantic" else None
    drawn = tuple(str(s) for s in sources) if isinstance(sources, list) else ()
    entry = _entry(doc.id, prefix, repeats.pieces(text, summary), origin, drawn)
    return entry if entry.pieces else Entry(prefix + doc.title, doc.id)


def _entry(
    id: str,
    prefix: str,
    pieces: tuple[repeats.Piece, ...],
    origin: str = "",
    drawn_from: tuple[str, ...] = (),
) -> Entry:
    """A memory's line, cut after its last whole sentence within LONG_MEMORY characters
    (the pieces past it are not shown, so they are not said)."""
    kept: list[repeats.Piece] = []
    size = 0
    for piece in pieces:
        size += len(piece.text) + 1
        if kept and size > LONG_MEMORY:
            break
        kept.append(piece)
    suffix = " …" if len(kept) < len(pieces) else ""
    origin = origin if "#" in origin else ""  # a day summary's `buffer` is a whole day
    text = _line(prefix, tuple(kept), suffix)
    return Entry(text, id, 1, tuple(kept), prefix, suffix, origin, drawn_from)


def _line(prefix: str, pieces: tuple[repeats.Piece, ...], suffix: str) -> str:
    text = _one_line(" ".join(p.text for p in pieces))
    return prefix + text + ("" if text.endswith("…") else suffix)


def _read(vault: CoreVault, path: str) -> tuple[str | None, dict[str, Any]]:
    """A memory's body and frontmatter; (None, {}) when it cannot be read."""
    try:
        text = read_text_inside(vault.root, path)
        split = fm.split(text, path)
        meta = fm.parse(split.fm_text, path=path) if split.has_frontmatter else {}
        return text[split.body_start :], meta
    except (OSError, UnicodeDecodeError, ValueError, UnsafePath, KenomemError):
        return None, {}


def _one_line(text: str) -> str:
    """A memory on one line; a long one cut after its last whole sentence that fits."""
    flat = " ".join(line.strip().lstrip("#").strip() for line in text.splitlines())
    flat = " ".join(flat.split())
    if len(flat) <= LONG_MEMORY:
        return flat
    ends = [m.end() for m in _SENTENCE_END.finditer(flat, 0, LONG_MEMORY)]
    return flat[: ends[-1]] + " …" if ends else flat[:LONG_MEMORY].rsplit(" ", 1)[0] + " …"
