"""What an agent hands `kenomem hook`: the event and its JSON document, read and checked
before anything else is done with them. Pure: bytes in, a `Payload` out, or
`InvalidInput` naming what is wrong.

Claude Code writes one JSON object to the hook's standard input (`session_id`,
`transcript_path`, `cwd`, `hook_event_name`, and by event `prompt`, `source`, `trigger`,
`reason`, `stop_hook_active`); Codex CLI's `notify` program gets one as its last argument
(`type`: "agent-turn-complete", `thread-id`, `turn-id`, `cwd`, `input-messages`,
`last-assistant-message`). Both come from a program that runs whatever its model or a
repository asks, so every field is a stranger's: a document too large, not UTF-8, holding
a NUL or not an object is refused whole, and each field kept is a string of bounded size
(or dropped).
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from kenomem.errors import InvalidInput

AGENTS = ("claude-code", "codex")
# Claude Code's events this command acts on, as Claude Code names them.
START = "SessionStart"
PROMPT = "UserPromptSubmit"
CAPTURE = ("Stop", "SubagentStop", "PreCompact", "SessionEnd")
CLAUDE_EVENTS = (START, PROMPT, *CAPTURE)
# Codex's notify program: one kind of call, at the end of each turn of the agent.
NOTIFY = "notify"
CODEX_EVENTS = (NOTIFY,)
CODEX_TURN_DONE = "agent-turn-complete"

MAX_PAYLOAD = 4 << 20  # bytes: a prompt of a pasted file fits, a flood does not
MAX_FIELD = 1 << 20  # characters of one field kept (a prompt); a path is far shorter
MAX_PATH = 4096


class Payload(NamedTuple):
    agent: str  # claude-code | codex
    event: str  # SessionStart, UserPromptSubmit, Stop... or notify
    session: str  # the agent's own session id ("" when not given)
    cwd: str  # the folder the agent works in ("" when not given)
    transcript: str  # the transcript's path, as given ("" when not given)
    prompt: str  # UserPromptSubmit's prompt
    source: str  # SessionStart's: startup, resume, clear, compact
    kind: str  # Codex's notify: the `type` of the call


def read(agent: str, event: str | None, data: bytes | str) -> Payload:
    """The payload of `agent`'s call for `event` (None: the one the document names)."""
    if agent not in AGENTS:
        raise InvalidInput(
            f"unknown agent {agent!r}: kenomem hooks {' and '.join(AGENTS)}",
            hint="kenomem hook claude-code EVENT (its JSON on stdin), "
            "or kenomem hook codex notify JSON",
        )
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if len(raw) > MAX_PAYLOAD:
        raise InvalidInput(f"the hook's input is over {MAX_PAYLOAD >> 20} MiB: not read")
    if b"\x00" in raw:
        raise InvalidInput("the hook's input holds a NUL byte: not read")
    try:
        document = json.loads(raw.decode("utf-8")) if raw.strip() else {}
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise InvalidInput("the hook's input is not a JSON document") from None
    if not isinstance(document, dict):
        raise InvalidInput("the hook's input is not a JSON object")
    if agent == "codex":
        return _codex(event, document)
    return _claude(event, document)


def _claude(event: str | None, doc: dict[str, Any]) -> Payload:
    named = _text(doc, "hook_event_name")
    chosen = event or named
    if chosen not in CLAUDE_EVENTS:
        shown = repr(chosen) if chosen else "no event"
        raise InvalidInput(
            f"{shown} is not an event kenomem hooks for claude-code",
            hint=f"one of {', '.join(CLAUDE_EVENTS)}",
        )
    return Payload(
        "claude-code",
        chosen,
        _text(doc, "session_id"),
        _path(doc, "cwd"),
        _path(doc, "transcript_path"),
        _text(doc, "prompt"),
        _text(doc, "source"),
        "",
    )


def _codex(event: str | None, doc: dict[str, Any]) -> Payload:
    if (event or NOTIFY) not in CODEX_EVENTS:
        raise InvalidInput(
            f"{event!r} is not an event kenomem hooks for codex",
            hint="kenomem hook codex notify JSON (Codex's notify program)",
        )
    return Payload(
        "codex", NOTIFY, _text(doc, "thread-id"), _path(doc, "cwd"), "", "", "", _text(doc, "type")
    )


def _text(doc: dict[str, Any], key: str) -> str:
    value = doc.get(key)
    if not isinstance(value, str):
        return ""
    if len(value) > MAX_FIELD:
        raise InvalidInput(f"the hook's {key} is over {MAX_FIELD} characters: not read")
    return value


def _path(doc: dict[str, Any], key: str) -> str:
    value = _text(doc, key)
    if len(value) > MAX_PATH:
        raise InvalidInput(f"the hook's {key} is over {MAX_PATH} characters: not read")
    return value
