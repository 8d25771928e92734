"""One run of the sleep cycle among others that may overlap it (a cron run and a manual
one): each day is planned outside the vault lock, since an LLM may take minutes over it,
then checked again and applied under the lock.

Under the lock the day is read again: if another run consolidated it meanwhile, this
run's plan is dropped. If another run applied any day since this one last read the
vault (`RunMark`), its memories may not be indexed yet: this run indexes what it wrote
and syncs (`catch_up`), then plans the day again, with the LLM's answer if it asked one,
so that it reinforces and deduplicates against all of it. A day whose entries changed
meanwhile is planned again too. So each day is done once, and as one run alone would do it.

A day consolidated early (`--include-today`) records how many of its entries were done
(`consolidated_entries`); the entries logged after them are a part still due, planned
and applied like a day of its own, then counted in too.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from kenomem.files import buffer
from kenomem.files.buffer import Day
from kenomem.sleep.apply import RunMark, apply_day, catch_up
from kenomem.sleep.knowledge import Knowledge
from kenomem.sleep.patterns import Proposal
from kenomem.sleep.pending import Pending
from kenomem.sleep.plan import DayPlan, plan_day, scopes
from kenomem.vault.core import CoreVault


class Cycle:
    """One run of the cycle: what it knows and has written, and how it does one day."""

    def __init__(
        self,
        vault: CoreVault,
        only: date | None,
        llm: str | None,
        now: datetime,
        mark: RunMark | None,
    ) -> None:
        self.vault, self.only, self.llm, self.now, self.mark = vault, only, llm, now, mark
        self.proposals: list[Proposal] = []  # the patterns the days complete (see plan_day)
        self.knowledge = Knowledge(vault)
        self.pending = Pending()  # written, indexed at the end (after each day with an LLM)
        self.caught_up = False  # read the vault again since the days were read
        self._redacted: dict[str, tuple[Day, Day, list[str]]] = {}

    def day(self, day: Day) -> tuple[DayPlan, tuple[int, int, int, int]] | None:
        """Plan the day (outside the lock: an LLM may take minutes), then, under the lock,
        check that it is still due and apply the plan, planned again if the vault or the
        day moved meanwhile. None: another run did the day first."""
        vault, mark = self.vault, self.mark
        if mark is not None and mark.moved():  # another run applied a day: read it first
            with vault.lock:
                self._catch_up()
        if self.caught_up:  # not worth planning (or asking an LLM) if done meanwhile
            fresh = self._due(day.path)
            if fresh is None:
                return None
            day = fresh
        clean, found = self.redacted(self._part(day))
        notes: list[str] = []
        answer: dict[str, dict[str, Any]] | None = None
        if self.llm:
            from kenomem.sleep.llm import ask_day

            self.pending.flush(vault)  # its prompt lists the facts the index knows
            settings = vault.settings.consolidate
            answer = ask_day(self.llm, clean, self.knowledge, settings, notes.append)
        before = dict(self.knowledge.planned)
        plan = self._plan(clean, answer, [*found, *notes])
        if mark is None:
            return plan, (0, 0, 0, 0)  # a dry run
        with vault.lock:
            moved = mark.moved()
            if moved:
                self._catch_up()  # (it forgets the facts planned: they are all indexed)
            fresh = self._due(day.path)
            if fresh is None or moved or fresh != day:  # the plan is dropped
                if not moved:
                    self.knowledge.planned = before  # and with it the facts it planned
                if fresh is None:
                    return None
                if answer is not None and not _still_answers(self._part(day), self._part(fresh)):
                    answer = None  # its entry numbers may not be these entries any more
                    notes.append(f"{day.path}: the day changed meanwhile; used the heuristics")
                clean, found = self.redacted(self._part(fresh))
                plan = self._plan(clean, answer, [*found, *notes])
            return plan, apply_day(vault, plan, self.now, self.pending, mark)

    def _catch_up(self) -> None:
        assert self.mark is not None
        catch_up(self.vault, self.pending, self.knowledge, self.mark)
        self.caught_up = True

    def redacted(self, day: Day) -> tuple[Day, list[str]]:
        """`buffer.redacted(day)`, worked out once for each day as read."""
        known = self._redacted.get(day.path)
        if known is None or known[0] != day:
            clean, found = buffer.redacted(day)
            known = self._redacted[day.path] = (day, clean, found)
        return known[1], known[2]

    def _due(self, rel: str) -> Day | None:
        """The day as it is now, if it is still to be done."""
        try:
            day = buffer.read_day(self.vault.root, rel)
        except FileNotFoundError:
            return None
        return day if self.only is not None or day.due else None

    def _part(self, day: Day) -> Day:
        """What of the day is planned: its entries not consolidated yet, or all of them
        for `--date` (a day done again: its memories are there already)."""
        return day if self.only is not None else day.unconsolidated()

    def _plan(
        self, day: Day, answer: dict[str, dict[str, Any]] | None, warnings: list[str]
    ) -> DayPlan:
        if answer is not None:
            from kenomem.sleep.llm import plan_from

            plan = plan_from(day, answer, self.knowledge)
        else:
            plan = plan_day(day, self.vault, self.knowledge, self.proposals, self.pending)
        return plan._replace(warnings=[*warnings, *plan.warnings])


def _still_answers(asked: Day, now: Day) -> bool:
    """Whether answers given for `asked`'s chats still fit the day as it is `now`: each
    chat's entries still start with those asked about, and no chat is new."""
    before, after = scopes(asked), scopes(now)
    return set(after) <= set(before) and all(
        part.entries[: len(before[scope].entries)] == before[scope].entries
        for scope, part in after.items()
    )
