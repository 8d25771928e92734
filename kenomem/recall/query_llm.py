"""Query expansion through the configured language model, when asked for
(`recall.llm_expand = true`; off by default): the command of `consolidate.llm_command`
(or `recall.expand_command`) gets PROMPT on stdin and answers with words a memory that
answers the query may hold ("pets" -> "cat", "dog", "puppy"). They are searched like the
words of pseudo-relevance feedback (expansion.py), at `recall.expand_weight`.

Answers are cached in `.kenomem/expansions/`, one small JSON file per command and query:
derived, disposable, and the reason a repeated recall does not wait for the model again.
They are read and written in that folder held by descriptor, never through a link
(`paths.read_private`, `write_private`): a symlink in a file's place is no answer, and the
next answer replaces it; one in the folder's place is `UnsafePath`.
A command that fails, times out or answers anything else costs a warning and nothing
more: recall goes on with the words it was given. Nothing is sent anywhere unless a
command is configured and expansion is on.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path

from kenomem.errors import UnsafePath
from kenomem.files.paths import read_private, write_private

CACHE_DIR = "expansions"  # in .kenomem/

PROMPT = """A person searches their notes with this query:

{query}

List up to {count} other words or short phrases that a note answering it is likely to
contain: synonyms, more specific or more general words, related names. Answer with ONE
JSON array of strings and nothing else, e.g. ["cat", "dog", "adopted"].
"""

MAX_WORDS = 8
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


def expansion_words(
    command: str,
    query: str,
    state_dir: Path,
    timeout: float,
    warn: Callable[[str], None],
) -> list[str]:
    """The words the model adds to `query` (cached in `state_dir`, the vault's
    `.kenomem/`), or [] with a warning."""
    cached = cache_file(command, query)
    try:
        words = json.loads(read_private(state_dir, cached).decode("utf-8"))["words"]
        if isinstance(words, list):
            return [str(w) for w in words]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    except UnsafePath:
        pass  # a link there is no answer; the write below replaces it (or says why not)
    words = _ask(command, query, timeout, warn)
    if words is not None:
        payload = {"query": query, "words": words}
        data = json.dumps(payload, ensure_ascii=False).encode() + b"\n"
        write_private(state_dir, cached, data, fsync=False, sync_dir=False)
    return words or []


def cache_file(command: str, query: str) -> str:
    """The file, relative to `.kenomem/`, that keeps the answer of `command` to `query`."""
    key = hashlib.sha256(f"{command}\n{query}".encode()).hexdigest()[:32]
    return f"{CACHE_DIR}/{key}.json"


def _ask(command: str, query: str, timeout: float, warn: Callable[[str], None]) -> list[str] | None:
    from kenomem.llm_command import CommandFailed, ask

    try:
        answer = ask(command, PROMPT.format(query=query, count=MAX_WORDS), timeout)
    except CommandFailed as exc:
        warn(f"query expansion: the LLM command {exc.reason}")
        return None
    words = parse_words(answer)
    if words is None:
        warn("query expansion: the LLM's answer was not a JSON list of words")
    return words


def parse_words(text: str) -> list[str] | None:
    """The strings of the answer's JSON array (fenced or not), at most MAX_WORDS."""
    fenced = _FENCE.search(text)
    body = fenced.group(1) if fenced else text
    start, end = body.find("["), body.rfind("]")
    if start < 0 or end < start:
        return None
    try:
        items = json.loads(body[start : end + 1])
    except ValueError:
        return None
    if not isinstance(items, list):
        return None
    words = [" ".join(str(item).split()) for item in items if isinstance(item, str | int)]
    return [w for w in words if w][:MAX_WORDS]
