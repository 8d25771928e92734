"""What a prompt brings back, for the agent to read before it answers: the patterns whose
trigger the prompt holds, then the memories recall finds for it (the project's and the
global ones, no buffer entry: the session's own turns are in the agent's context
already), within `hooks.prompt_budget` tokens, whole lines only. Nothing is counted as
recalled: a prompt's block is a glance, not a use, and costs no write.

It runs on every prompt, so it reads little. The patterns are looked for among the
`PATTERN_CANDIDATES` procedural memories the prompt's words find in the index (a
pattern's title names its trigger: "When docker and port ..."), and only those files
are read for their trigger, where `kenomem patterns MESSAGE` reads every pattern. The
search reads the prompt's first `QUERY_CHARS` characters: a pasted file makes a long
prompt whose start says what it is about, and a query of thousands of words would cost
the agent its time on every prompt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kenomem.agents.procedural import PatternView
    from kenomem.vault.core import CoreVault

QUERY_CHARS = 1000
PATTERN_CANDIDATES = 20
LINE_CHARS = 300  # of one memory's line


def prompt_block(vault: CoreVault, prompt: str, scope: str) -> str:
    """The block for `prompt` in the project `scope`; "" when nothing is found."""
    from kenomem.agents.tokens import counter
    from kenomem.recall.search import RecallRequest, recall

    settings = vault.settings
    budget = settings.hooks.prompt_budget
    if budget <= 0:
        return ""
    query = prompt[:QUERY_CHARS]
    lines: list[str] = []
    shown: set[str] = set()
    limit = settings.hooks.prompt_memories
    found = recall(
        vault, RecallRequest(query, limit=max(limit, 1), scopes=(scope,), touch=False)
    ).results  # first: it brings the index up to date
    for pattern in _triggered(vault, query, scope):
        lines.append(_line(f"When {pattern.trigger}: {pattern.text or pattern.title}"))
        shown.add(pattern.id)
    if limit > 0:
        memories = [r for r in found if r.day is None and r.id not in shown]
        floor = settings.context.min_relevance * max((r.relevance for r in memories), default=0)
        for item in memories[:limit]:
            if item.relevance >= floor:
                lines.append(_line(_said(item.title, item.snippet), item.id))
    if not lines:
        return ""
    count, _name = counter(settings.context.tokenizer)
    head = "From memory (kenomem), for this prompt:"
    used = count(head)
    kept: list[str] = []
    for line in lines:
        cost = count(line) + 1
        if used + cost > budget:
            break
        kept.append(line)
        used += cost
    return "\n".join([head, *kept]) if kept else ""


def _triggered(vault: CoreVault, query: str, scope: str) -> list[PatternView]:
    """The active patterns of the project and global ones whose trigger `query` holds,
    among those its words find; most confident first."""
    from kenomem.agents.procedural import views_of
    from kenomem.agents.triggers import matches, trigger_terms
    from kenomem.index import Boosts, Filters
    from kenomem.index.scope import of_session

    filters = Filters(types=("procedural",), scopes=of_session(scope))
    hits = vault.search(query, filters, Boosts(), PATTERN_CANDIDATES).hits
    if not hits:
        return []
    analyse = vault.engine.analyze
    words = list(analyse(query))
    chosen = [
        view
        for view in views_of(vault, [hit.doc for hit in hits])
        if matches(trigger_terms(view.trigger, analyse), words)
    ]
    chosen.sort(key=lambda v: (-(v.confidence or 0.0), -v.importance))
    return chosen


def _line(text: str, id: str = "") -> str:
    flat = " ".join(text.split())
    if len(flat) > LINE_CHARS:
        flat = flat[:LINE_CHARS].rsplit(" ", 1)[0] + " …"
    return f"- {flat}" + (f" [{id}]" if id else "")


def _said(title: str, snippet: str) -> str:
    """A memory's title and snippet, the title left out when the snippet begins with it."""
    flat = " ".join(snippet.split())
    if not title or flat.lower().startswith(title.lower().rstrip(".… ")):
        return flat or title
    return f"{title}: {flat}"
