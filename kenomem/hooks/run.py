"""`kenomem hook AGENT EVENT`: what kenomem does when an agent (Claude Code, Codex) runs it
on one of its events.

- **SessionStart**: the context block of the project the agent works in (`context` with
  the project's scope as its session, no query: the foundation, how to behave, the
  working memory, the project's recent conversation and days).
- **UserPromptSubmit**: what the prompt triggers (patterns) and recalls (memories of the
  project and global ones), within `hooks.prompt_budget` tokens; nothing when nothing
  is found. Nothing is logged: the prompt is logged from the transcript, with its own
  id and time, by the next capture (below), so that an import of the same transcript
  later finds it logged already. A prompt holding a likely secret is not searched for
  (a query may go to an embeddings server).
- **Stop, SubagentStop, PreCompact, SessionEnd** (and Codex's `notify`): the transcript's
  new complete lines, read from where the last call stopped (`transcript.py`), become
  turns (`ingest.transcripts`), each turn a buffer entry (`entry_of`: the project's scope
  as session, the speaker, the agent as channel, the turn's own time), appended unless
  its day holds it already (the import's entry key); then the `<memory>` tags of the
  new assistant turns are stored (`extract`). A turn holding a likely secret or a
  control character is not logged (nor its tags stored), and counted.

The project is `project_scope` of the folder the agent works in. Each event can be
turned off in `[hooks]`. The vault is waited for `hooks.lock_seconds` at most: an agent
waits for its hook. Whatever goes wrong is a `KenomemError` the command line turns into
one line on stderr and exit code 0 (`cli/handlers/hooks.py`): a hook never stops the
agent, and adds nothing when it fails.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from kenomem.errors import InvalidInput, KenomemError
from kenomem.hooks import payload as payloads
from kenomem.hooks.payload import Payload

if TYPE_CHECKING:
    from kenomem.files.buffer import Entry
    from kenomem.vault.core import CoreVault

CHANNELS = {"claude-code": "claude-code", "codex": "codex"}


class HookRequest(NamedTuple):
    agent: str  # claude-code | codex
    event: str | None = None  # as the agent names it; None: the payload's
    payload: bytes | str = b""  # the agent's JSON document (stdin, or Codex's argument)


class HookResult(NamedTuple):
    agent: str
    event: str
    scope: str  # the project's scope ("" when the event needs none)
    context: str  # what the agent adds to its model's context ("" for nothing)
    logged: int = 0  # turns appended to the buffer
    already: int = 0  # turns the buffer held already
    dropped: int = 0  # turns not logged: a likely secret or a control character in them
    stored: tuple[str, ...] = ()  # ids of the memories the turns' tags stored
    problems: tuple[str, ...] = ()  # what went wrong with a turn or a tag, one line each
    off: bool = False  # the event is turned off in [hooks]


def run_hook(
    vault: CoreVault, request: HookRequest, environ: Mapping[str, str] | None = None
) -> HookResult:
    """Do what `request`'s event asks of the vault."""
    env = os.environ if environ is None else environ
    given = payloads.read(request.agent, request.event, request.payload)
    settings = vault.settings.hooks
    vault = _patient(vault, settings.lock_seconds)
    if given.event == payloads.START:
        if not settings.session_start:
            return _off(given)
        return _start(vault, given)
    if given.event == payloads.PROMPT:
        if not settings.prompt:
            return _off(given)
        return _prompt(vault, given)
    if not settings.capture:
        return _off(given)
    return _capture(vault, given, env)


def _patient(vault: CoreVault, seconds: float) -> CoreVault:
    """`vault`, waiting `seconds` at most for its lock (an agent waits for its hook)."""
    from kenomem.vault.core import CoreVault

    write = vault.settings.write
    if write.lock_timeout_seconds <= seconds:
        return vault
    settings = vault.settings.replaced(write=write._replace(lock_timeout_seconds=seconds))
    return CoreVault(vault.root, settings, warnings=vault.warnings)


def _off(given: Payload) -> HookResult:
    return HookResult(given.agent, given.event, "", "", off=True)


def _scope(given: Payload) -> str:
    from kenomem.ingest.transcripts import project_scope

    if not given.cwd or not os.path.isabs(given.cwd):
        raise InvalidInput(f"the hook's cwd {given.cwd!r} is not an absolute path")
    return project_scope(given.cwd)


# -- SessionStart ---------------------------------------------------------------------


def _start(vault: CoreVault, given: Payload) -> HookResult:
    from kenomem.agents.context import ContextRequest, build_context

    scope = _scope(given)
    budget = vault.settings.hooks.start_budget or None
    block = build_context(vault, ContextRequest(session=scope, budget=budget))
    text = block.text if any(part.shown for part in block.parts) else ""
    return HookResult(given.agent, given.event, scope, text.strip())


# -- UserPromptSubmit -----------------------------------------------------------------


def _prompt(vault: CoreVault, given: Payload) -> HookResult:
    from kenomem.files.secrets import check
    from kenomem.hooks.prompt import prompt_block

    scope = _scope(given)
    if not given.prompt.strip():
        return HookResult(given.agent, given.event, scope, "")
    check({"prompt": given.prompt}, then="nothing was searched for")
    text = prompt_block(vault, given.prompt, scope)
    return HookResult(given.agent, given.event, scope, text)


# -- Stop, SubagentStop, PreCompact, SessionEnd; Codex's notify ------------------------


def _capture(vault: CoreVault, given: Payload, environ: Mapping[str, str]) -> HookResult:
    from kenomem.hooks import transcript

    if given.agent == "codex" and given.kind != payloads.CODEX_TURN_DONE:
        return HookResult(given.agent, given.event, "", "")  # another kind of notice
    if given.agent == "codex":
        path = _codex_rollout(given, environ)
    elif given.transcript:
        path = given.transcript
    else:
        raise InvalidInput("the hook's payload names no transcript_path")
    where = transcript.locate(path, given.agent, environ)
    fd = transcript.open_transcript(where)
    try:
        with vault.lock:
            kept = transcript.load_offset(vault.state_dir, where)
            piece = transcript.read_new(fd, kept)
            result = _log_turns(vault, given, piece.lines)
            if piece.offset != kept:
                fsync = vault.settings.write.fsync
                transcript.save_offset(vault.state_dir, where, piece.offset, fsync=fsync)
    finally:
        os.close(fd)
    return result


def _codex_rollout(given: Payload, environ: Mapping[str, str]) -> str:
    """The rollout file of Codex's session `thread-id`: the newest
    `sessions/YYYY/MM/DD/rollout-<time>-<thread-id>.jsonl` (none found: InvalidInput)."""
    from kenomem.hooks.transcript import roots

    thread = given.session
    if not thread or not all(ch.isalnum() or ch == "-" for ch in thread) or len(thread) > 64:
        raise InvalidInput("Codex's notice names no thread-id kenomem can look up")
    for root in roots("codex", environ):
        found = sorted(_rollouts(root, thread))
        if found:
            return str(found[-1])
    raise InvalidInput(f"no rollout of Codex's session {thread} under its sessions folder")


def _rollouts(root: Path, thread: str) -> list[Path]:
    """The rollouts of `thread` in the last few day folders of `root` (newest first)."""
    found: list[Path] = []
    try:
        days = sorted(root.glob("[0-9][0-9][0-9][0-9]/[0-9][0-9]/[0-9][0-9]"), reverse=True)
    except OSError:
        return []
    for day in days[:3]:  # a session that runs past midnight stays in its first day
        found += day.glob(f"rollout-*-{thread}.jsonl")
    return found


def _log_turns(vault: CoreVault, given: Payload, lines: list[str]) -> HookResult:
    """Log the turns of `lines` not logged yet, then store the tags of the new assistant
    turns. The caller holds the vault lock."""
    from kenomem.files.buffer import append, day_path, format_entry, read_day_if_any
    from kenomem.ingest.importer import entry_key

    channel = CHANNELS[given.agent]
    entries, dropped, problems = _entries(given, lines, channel)
    by_day: dict[str, list[Entry]] = {}
    for entry in entries:
        by_day.setdefault(day_path(entry.at.date()), []).append(entry)
    logged: list[Entry] = []
    already = 0
    for rel in sorted(by_day):
        day = read_day_if_any(vault.root, rel)
        have = {entry_key(e) for e in day.entries} if day else set()
        fresh = []
        for entry in by_day[rel]:
            key = entry_key(entry)
            if key in have:
                already += 1
                continue
            have.add(key)
            fresh.append(entry)
        if fresh:
            fresh.sort(key=lambda e: e.at)
            data = "".join(format_entry(e) for e in fresh).encode("utf-8")
            append(vault.root, rel, data, fsync=vault.settings.write.fsync)
            logged += fresh
    stored, failed = _store_tags(vault, [e for e in logged if e.who == "assistant"])
    scope = entries[0].session if entries else ""
    return HookResult(
        given.agent,
        given.event,
        scope,
        "",
        len(logged),
        already,
        dropped,
        tuple(stored),
        tuple(problems + failed),
    )


def _entries(given: Payload, lines: list[str], channel: str) -> tuple[list[Entry], int, list[str]]:
    """The buffer entries the turns of `lines` become, with how many were not kept (a
    likely secret, a control character: `entry_of` refuses them) and why."""
    from kenomem.ingest import transcripts

    if given.agent == "codex":
        turns = transcripts.codex_turns(lines)
    else:
        turns = transcripts.claude_code_turns(lines)
    scopes: dict[str, str] = {}
    entries: list[Entry] = []
    dropped = 0
    problems: list[str] = []
    for turn in turns:
        folder = turn.project or given.cwd
        if folder not in scopes:
            scopes[folder] = _scope(given._replace(cwd=folder))
        try:
            entry = transcripts.entry_of(turn, scopes[folder], channel)
        except KenomemError as exc:
            dropped += 1
            problems.append(f"a {turn.speaker} turn not logged: {exc.message}")
            continue
        if entry.text.strip():
            entries.append(entry)
    return entries, dropped, problems


def _store_tags(vault: CoreVault, turns: list[Entry]) -> tuple[list[str], list[str]]:
    """Store the `<memory>` (and `<chat-memory>`, `<working-memory>`) tags of the new
    assistant turns, in the project's scope; the ids stored and what failed."""
    from kenomem.capture.extract import ExtractRequest, extract

    stored: list[str] = []
    problems: list[str] = []
    for entry in turns:
        if "<" not in entry.text or "memory" not in entry.text:
            continue
        try:
            done = extract(vault, ExtractRequest(reply=entry.text, session=entry.session))
        except KenomemError as exc:
            problems.append(f"tags not stored: {exc.message}")
            continue
        stored += [s.id for s in done.stored]
        problems += done.problems
    return stored, problems
