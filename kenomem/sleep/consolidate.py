"""`consolidate`: the sleep cycle (SPEC 5). Each buffer day not yet consolidated becomes
episodes, facts, proposed habits and a summary, then is marked consolidated.

Planning is separate from applying. `plan_day` decides, from a day's entries and what
the vault already knows, every memory to create, reinforce or supersede; `apply_day`
(consolidate_apply.py) carries the plan out. Every memory the cycle writes has an id
derived from the day, the entry and the content, and every reinforcement records its
source, so applying a plan twice, or after an interruption at any point, ends in the
same vault as applying it once. The day is marked consolidated last, once its files are
durable; the index learns of them at the end of the run (see consolidate_apply.py). Runs
that overlap do each day once: see consolidate_cycle.py.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from typing import NamedTuple

from kenomem.files import buffer
from kenomem.files.buffer import Day
from kenomem.index import Progress
from kenomem.sleep.apply import RunMark
from kenomem.sleep.knowledge import AGENTS
from kenomem.sleep.patterns import Proposal, incidents, recurring
from kenomem.sleep.plan import DayPlan
from kenomem.vault.core import CoreVault

PATTERN_DAYS = 60  # how far back problems and fixes are looked for


class ConsolidateRequest(NamedTuple):
    include_today: bool = False  # today too, though it is not over
    date: date | None = None  # only this day (a datetime: its day), even if consolidated
    dry_run: bool = False  # plan, write nothing
    llm: str | None = None  # the planner's command; None: consolidate.llm_command, else none


class ConsolidateResult(NamedTuple):
    days: list[DayPlan]
    dry_run: bool
    created: int
    reinforced: int
    superseded: int
    proposed: int
    seconds: float


def due_days(vault: CoreVault, *, include_today: bool, only: date | None, today: date) -> list[Day]:
    """The buffer days to consolidate: not done yet, or with entries logged after they
    were (`Day.due`); `only`: that day, done or not."""
    days = []
    for rel in buffer.days(vault.root):
        day = buffer.read_day(vault.root, rel)
        if only is not None:
            if day.date == only:
                days.append(day)
            continue
        if day.due and (include_today or day.date < today):
            days.append(day)
    return days


def consolidate(
    vault: CoreVault,
    request: ConsolidateRequest,
    *,
    now: datetime | None = None,
    progress: Progress | None = None,
    warn: Callable[[str], None] = lambda _message: None,
) -> ConsolidateResult:
    """Each due day planned, then applied under the vault lock if it is still due then, so
    runs that overlap do each day once (`consolidate_cycle`). Nothing that looks like a
    secret in the buffer is copied into memory (`buffer.redacted`). Without an LLM
    command (the request's, else the settings'), the heuristics plan each day."""
    started = time.perf_counter()
    include_today, dry_run = request.include_today, request.dry_run
    only = request.date.date() if isinstance(request.date, datetime) else request.date
    llm = request.llm if request.llm is not None else vault.settings.consolidate.llm_command
    now = (now or datetime.now(UTC)).replace(microsecond=0)
    mark = None if dry_run else RunMark(vault)  # read before the sync: see RunMark
    vault.sync()
    days = due_days(vault, include_today=include_today, only=only, today=now.date())
    from kenomem.sleep.cycle import Cycle  # (which imports this module)

    cycle = Cycle(vault, only, llm or None, now, mark)
    cycle.proposals = _proposals(vault, days, now, cycle.redacted)
    plans = []
    totals = [0, 0, 0, 0]
    for done, day in enumerate(days, 1):
        planned = cycle.day(day)
        if planned is not None:
            plan, counts = planned
            plans.append(plan)
            totals = [a + b for a, b in zip(totals, counts, strict=True)]
            for warning in plan.warnings:
                warn(warning)
        if progress is not None:
            progress(done)
    for note in cycle.knowledge.notes:
        warn(note)
    cycle.pending.flush(vault)
    seconds = round(time.perf_counter() - started, 3)
    if dry_run:
        totals = [
            sum(a.action in kinds for p in plans for a in p.actions)
            for kinds in (
                ("create", "summarize", "supersede"),
                ("reinforce",),
                ("supersede",),
                ("propose",),
            )
        ]
    created, reinforced, superseded, proposed = totals
    return ConsolidateResult(plans, dry_run, created, reinforced, superseded, proposed, seconds)


def _proposals(
    vault: CoreVault,
    days: list[Day],
    now: datetime,
    redacted: Callable[[Day], tuple[Day, list[str]]] = buffer.redacted,
) -> list[Proposal]:
    """Recurring problems and fixes over the buffer days of the last PATTERN_DAYS days,
    read without secrets (a fix may be proposed word for word)."""
    since = now.date() - timedelta(days=PATTERN_DAYS)
    found = []
    surfaces: dict[str, str] = {}

    def terms(text: str) -> list[str]:
        analysed = vault.engine.analyze(text)
        for term, start in vault.engine.term_offsets(text, analysed):
            word = text[start:].split(maxsplit=1)[0].strip(".,;:!?\"'()").lower()
            surfaces.setdefault(term, word)
        return analysed

    planned = {d.path for d in days}
    for rel in buffer.days(vault.root):
        day = next((d for d in days if d.path == rel), None) or buffer.read_day(vault.root, rel)
        if day.date < since or (day.consolidated is None and rel not in planned):
            continue
        day, _ = redacted(day)
        # What people say happened: an agent's replies suggest, or restate, the fix.
        said = [e.text for e in day.entries if e.who.lower() not in AGENTS]
        found.extend(incidents(rel, said, terms))
    return recurring(found, lambda t: surfaces.get(t, t))
