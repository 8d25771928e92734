"""The sleep cycle with a language model: `consolidate --llm CMD` (or the setting
`consolidate.llm_command`) sends each day to a command and reads its plan back.

The command gets PROMPT, filled in, on stdin: `llm -m <model>`, `ollama run <model>`,
or any program that answers on stdout. The answer must be one JSON object (a fenced
```json block is accepted) of this shape, checked field by field:

    {"episodes": [{"entry": 3, "importance": 7, "title": "..."}],
     "facts":    [{"entry": 5, "subject": "user", "attribute": "lives in",
                   "value": "Lisbon", "text": "Lives in Lisbon", "many": false}],
     "patterns": [{"trigger": "deploy + timeout", "response": "...", "confidence": 0.6}],
     "summary":  "..."}

Each chat of the day (its entries of one session; those without a session together) is
sent on its own, so that nothing the command answers about one chat can end up in what
another one sees; the scope of what is written comes from the entries, never from the
answer. The entries the answer picks no episode for are kept too, at the importance the
heuristics give them, all but trivia. A command that fails, times out or answers anything
else, for any chat, makes that day fall back to the heuristics, with a warning. Nothing
is sent anywhere unless a command is configured, and nothing that looks like a secret is
sent or kept from the answer (`secrets.redact`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from kenomem.config import ConsolidateSettings
from kenomem.files.buffer import Day
from kenomem.files.memory import pattern_title
from kenomem.files.secrets import redact
from kenomem.llm_command import CommandFailed, ask
from kenomem.sleep.facts import Fact
from kenomem.sleep.knowledge import AGENTS, Knowledge, subject_of
from kenomem.sleep.plan import (
    DayPlan,
    Planned,
    day_summaries,
    dropped_entries,
    episode,
    fact_action,
    pattern,
    people_of,
    scopes,
    upto,
)
from kenomem.sleep.salience import is_trivia, score

PROMPT = """You consolidate one day of a conversation log into long-term memory, the way
sleep does for people. The entries are numbered. Answer with ONE JSON object and nothing
else:

{{"episodes": [{{"entry": <entry number>, "importance": <1-10>, "title": "<a short title>"}}],
 "facts": [{{"entry": <entry number>, "subject": "<who it is about; user for the user>",
            "attribute": "<lives in, works at, favorite color, wife, opinion of coffee...>",
            "value": "<the value>", "text": "<the fact as a short sentence>",
            "many": <true when one can have several, like likes or allergies>}}],
 "patterns": [{{"trigger": "<word + word: what a message must contain>",
               "response": "<what to do then>", "confidence": <0-1>}}],
 "summary": "<the day in three to six sentences>"}}

Pick as episodes what will matter later: decisions, commitments, facts about people,
errors and how they were fixed, plans and dates, things someone asked to remember. The
entries you leave out are kept at a low importance anyway, all but acknowledgements and
thanks. Facts are things that stay true, their text naming who they are about; a new
value for a known attribute replaces the old one.

Known facts:
{facts}

Entries of {date}:
{entries}
"""


class BadAnswer(ValueError):
    pass


Answers = dict[str, dict[str, Any]]  # by scope: the answer for that chat's entries


def ask_day(
    command: str,
    day: Day,
    knowledge: Knowledge,
    settings: ConsolidateSettings,
    warn: Callable[[str], None],
) -> Answers | None:
    """The command's answers for each chat of the day (`plan.scopes`), checked, or None
    (with a warning) to use the heuristics for the whole day."""
    answers = {}
    for scope, part in scopes(day).items():
        answer = _ask_part(command, part, knowledge, settings, warn)
        if answer is None:
            return None
        answers[scope] = answer
    return answers


def _ask_part(
    command: str,
    day: Day,
    knowledge: Knowledge,
    settings: ConsolidateSettings,
    warn: Callable[[str], None],
) -> dict[str, Any] | None:
    """The command's answer for one chat's entries, checked, or None (with a warning) to
    use the heuristics. Nothing that looks like a secret goes into the prompt (the day's entries
    come redacted, and the prompt is redacted as a whole: the known facts are memories a
    person may have written) or comes out of the answer."""
    try:
        output = ask(command, redact(build_prompt(day, knowledge)), settings.llm_timeout_seconds)
    except CommandFailed as exc:
        tail = f" ({exc.stderr_tail})" if exc.stderr_tail is not None else ""
        warn(f"{day.path}: the LLM command {exc.reason}{tail}; used the heuristics")
        return None
    try:
        answer = parse_answer(output, len(day.entries))
    except BadAnswer as exc:
        warn(f"{day.path}: the LLM's answer was not usable ({exc}); used the heuristics")
        return None
    clean = _redacted(answer)
    if clean != answer:
        warn(f"{day.path}: the LLM's answer held what looks like a secret; removed it")
    return clean


def _redacted(value: Any) -> Any:
    """The answer with every text in it redacted (an LLM's reply is hostile input)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [_redacted(v) for v in value]
    if isinstance(value, dict):
        return {k: _redacted(v) for k, v in value.items()}
    return value


def build_prompt(day: Day, knowledge: Knowledge) -> str:
    entries = "\n".join(
        f"[{i}] {e.at:%H:%M:%S} {e.who or '-'}: {e.text}" for i, e in enumerate(day.entries, 1)
    )
    known = knowledge.vault.browse(_facts_filter(), "created", True, 200).hits
    facts = "\n".join(f"- {hit.doc.title}" for hit in known) or "(none yet)"
    return PROMPT.format(facts=facts, date=day.date.isoformat(), entries=entries)


def _facts_filter() -> Any:
    from kenomem.index import Filters

    return Filters(types=("semantic",), tags=("fact",))


def parse_answer(text: str, entries: int) -> dict[str, Any]:
    """The answer's JSON object, checked against the documented shape."""
    fenced = re.search(r"```(?:json)?\s*(\{.*\})\s*```", text, re.DOTALL)
    raw = fenced.group(1) if fenced else text[text.find("{") : text.rfind("}") + 1]
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise BadAnswer(f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise BadAnswer("not a JSON object")
    for key in ("episodes", "facts", "patterns"):
        if not isinstance(data.get(key, []), list):
            raise BadAnswer(f"{key!r} is not a list")
    for item in data.get("episodes", []):
        _need(item, "episode", entry=int, importance=int)
        _entry_number(item, entries)
        if not 1 <= item["importance"] <= 10:
            raise BadAnswer(f"episode importance {item['importance']} is not 1-10")
    for item in data.get("facts", []):
        _need(item, "fact", entry=int, subject=str, attribute=str, value=str, text=str)
        _entry_number(item, entries)
    for item in data.get("patterns", []):
        _need(item, "pattern", trigger=str, response=str, confidence=(int, float))
    if not isinstance(data.get("summary", ""), str):
        raise BadAnswer("'summary' is not text")
    return data


def _need(item: Any, what: str, **fields: Any) -> None:
    if not isinstance(item, dict):
        raise BadAnswer(f"a {what} is not an object")
    for name, kind in fields.items():
        value = item.get(name)
        if not isinstance(value, kind) or isinstance(value, bool) or value in ("", None):
            raise BadAnswer(f"a {what} has no valid {name!r}")


def _entry_number(item: dict[str, Any], entries: int) -> None:
    if not 1 <= item["entry"] <= entries:
        raise BadAnswer(f"entry {item['entry']} is not one of the day's 1-{entries}")


def plan_from(day: Day, answers: Answers, knowledge: Knowledge) -> DayPlan:
    """The day's plan from the checked answers of `ask_day`, one for each of its chats
    (their entry numbers are valid: each counts that chat's entries)."""
    people = people_of(day)
    actions: list[Planned] = []
    kept = []
    notes = {}
    for scope, part in scopes(day).items():
        answer = answers[scope]
        for item in answer.get("episodes", []):
            entry = part.entries[item["entry"] - 1]
            planned = episode(day, entry, item["importance"], ("llm",), people)
            if item.get("title") and planned.memory is not None:
                mem = planned.memory._replace(title=str(item["title"]).strip()[:120])
                planned = planned._replace(memory=mem, title=mem.title)
            actions.append(planned)
            kept.append((entry, item["importance"]))
        for item in answer.get("facts", []):
            entry = part.entries[item["entry"] - 1]
            fact = Fact(
                subject_of(item["subject"], entry, people),
                item["attribute"].strip().lower(),
                item["value"].strip(),
                item["text"].strip(),
                bool(item.get("many")),
            )
            action = fact_action(day, entry, fact, knowledge)
            if action is not None:
                actions.append(action)
        for item in answer.get("patterns", []):
            actions.append(_pattern(day, item))
        notes[scope] = answer.get("summary", "").strip()
    trivia = {e.position for e in day.entries if is_trivia(e.text)}
    # What the model did not pick is kept too, at the importance the heuristics give it:
    # nothing logged is lost to recall but trivia.
    picked = {e.position for e, _ in kept}
    for entry in day.entries:
        if entry.position not in picked and entry.position not in trivia:
            judged = score(entry.text, agent=entry.who.lower() in AGENTS)
            actions.append(episode(day, entry, judged.importance, judged.reasons, people))
    actions.extend(day_summaries(day, kept, trivia, notes))
    unique: dict[tuple[str, str, str], Planned] = {}  # an entry named twice: written once
    for action in actions:
        unique.setdefault((action.action, action.id, action.source), action)
    return DayPlan(
        day.path,
        len(day.entries),
        len(trivia),
        list(unique.values()),
        "llm",
        [],
        upto(day),
        dropped_entries(day, trivia),
    )


def _pattern(day: Day, item: dict[str, Any]) -> Planned:
    moment = datetime(day.date.year, day.date.month, day.date.day, tzinfo=UTC)
    trigger = " + ".join(w.strip().lower() for w in item["trigger"].split("+") if w.strip())
    return pattern(
        trigger,
        item["response"].strip(),
        title=pattern_title(trigger),
        since=moment,
        created=moment,
        confidence=round(min(1.0, max(0.0, float(item["confidence"]))), 2),
        learned_from=[day.path],
        why="proposed by the LLM",
    )
