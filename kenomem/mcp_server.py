"""`kenomem mcp`: the vault served to agents over the Model Context Protocol, on stdio.

Tools: `remember`, `recall`, `context`, `forget` (archive only), `log`, `extract`,
`working_show`, `working_set`, `working_clear` and `patterns`: the loop an agent runs
(context, recall, remember, log, extract, the scratchpad, the patterns a message
triggers). Resources:
`kenomem://foundation`, `kenomem://working/{session}` and `kenomem://memory/{id}`.

Every tool calls one method of the Python API (`kenomem.api.Vault`), as the command line
does. The vault is opened once, at start; each operation syncs with the files first, so
hand edits made while the server runs are seen (a change to `kenomem.toml` needs a
restart). Calls are served one at a time: the SDK runs each handler on a worker thread,
and one `Vault` object is not meant to be shared between threads.

Arguments are validated against the input schema before a tool runs; a bad argument (the
argument named and what it must be: `invalid_arguments`, without the validator's links), a
`KenomemError` (its message and hint) or an unexpected exception (its cause, without the
server's absolute paths: `without_paths`) all come back as a tool result with `isError`
set, and the server keeps serving. Only protocol goes to stdout:
the SDK points file descriptor 1 at stderr while it serves, and logs go to stderr.

This module imports the `mcp` SDK at module level, so only the `mcp` command imports it.
"""

import logging
import os
import re
import sys
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import (
    ResourceError,
    ResourceNotFoundError,
    ToolError,
    UnexpectedToolError,
)
from mcp_types import CallToolResult, InputRequiredResult, ToolAnnotations
from pydantic import Field, ValidationError

from kenomem import __version__
from kenomem.api import Vault, to_jsonable
from kenomem.errors import InvalidInput, KenomemError, MemoryNotFound, storage_error
from kenomem.files.memory import MAX_TEXT
from kenomem.files.paths import read_text_inside
from kenomem.files.textcheck import check_fields

T = TypeVar("T")
logger = logging.getLogger("kenomem.mcp")

MemoryType = Literal["semantic", "episodic", "procedural", "working"]
# What recall returns: memories, and the entries of buffer days not yet consolidated.
RecallType = Literal["semantic", "episodic", "procedural", "working", "buffer"]
# Labels (session ids, scopes, tags, speakers) follow `paths.check_label`: one printable
# line of at most 128 characters. The schema says so; the core checks the rest.
Label = Annotated[str, Field(min_length=1, max_length=128)]
Labels = Annotated[list[Label], Field(max_length=32)]
MemoryId = Annotated[
    str,
    Field(min_length=1, max_length=200, description="A memory id, or any unique start of one."),
]
Text = Annotated[str, Field(min_length=1, max_length=MAX_TEXT)]
Query = Annotated[str, Field(max_length=2_000)]
Moment = Annotated[str, Field(max_length=40)] | None
Session = Annotated[
    Label | None,
    Field(description="The id of the current session or chat (the same id on every call)."),
]

INSTRUCTIONS = """\
kenomem is the user's long-term memory, kept as markdown files they can read and edit.
At the start of a task call `context` (with the task as the query and your session id)
and follow what it returns: the foundation holds the user's values and goals. Use
`recall` (with your session id) to look something up. Use `remember` for what should
outlast this conversation: facts about the user and their projects (semantic), events
and decisions (episodic), how the user wants things done (procedural), the scratchpad of
this session (working); give `scope` your session id for what only matters in this chat.
Use `log` to keep a raw record of the conversation; a nightly sleep cycle turns it into
memories. `extract` stores what your reply tags with <memory>, <chat-memory> or
<working-memory> and gives the reply back without the tags. `working_show`,
`working_set` and `working_clear` keep this session's scratchpad; `patterns` (with your
session id) lists the behaviour patterns a message triggers. `forget` archives a memory
that is wrong or obsolete (it can be restored)."""


class Calls:
    """The tools and resources over one vault, served one call at a time."""

    def __init__(self, vault: Vault, source: Callable[[], str] | None = None) -> None:
        self.vault = vault
        self._source = source
        self._lock = threading.Lock()
        self._skipped: dict[str, str] = {}

    def call(self, action: Callable[[Vault], T], what: str) -> tuple[T, list[str]]:
        """Run one operation; its result and the warnings it raised, or a ToolError."""
        with self._lock:
            # Reported once (logged at start, or by the call that raised them), then
            # dropped, so that a long-running server does not collect them.
            self.vault.warnings.clear()
            if self._source is not None:  # who makes this call (`kenomem serve`: a token)
                self.vault.source = self._source()
            try:
                return action(self.vault), self._warnings()
            except KenomemError as exc:
                self._warnings()
                raise ToolError(_describe(exc)) from exc
            except Exception as exc:
                self._warnings()
                refused = storage_error(exc)  # a full disk, a read-only folder: not a bug
                if refused is not None:
                    raise ToolError(_describe(refused)) from exc
                logger.exception("%s failed unexpectedly", what)
                raise ToolError(
                    f"unexpected {type(exc).__name__}: {without_paths(str(exc), self.vault.root)} "
                    "(a kenomem bug: the server's log on stderr has the traceback and paths)"
                ) from exc

    def read(self, action: Callable[[Vault], str], what: str) -> str:
        """`call` for a resource: a failure is a resource error (not found, or other)."""
        try:
            return self.call(action, what)[0]
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, MemoryNotFound):
                raise ResourceNotFoundError(str(exc)) from cause
            raise ResourceError(str(exc)) from cause

    def _warnings(self) -> list[str]:
        raised = list(self.vault.warnings)
        for warning in raised:
            logger.warning("%s", warning)
        # Files the sync could not read: logged when that list changes, not on every call.
        report = self.vault.last_sync
        skipped = dict(report.errors) if report else self._skipped
        if skipped != self._skipped:
            for path, why in skipped.items():
                if self._skipped.get(path) != why:
                    logger.warning("skipped %s: %s", path, why)
            self._skipped = skipped
        return raised


# An absolute path left in a message once the vault's and the home folder's are taken out:
# a slash that does not follow a word, a dot, a colon or another slash, up to a quote, a
# space or punctuation that ends a path in a message.
_ABSOLUTE = re.compile(r"(?<![\w.:/~-])/[^\s'\"(),;:]+")


def without_paths(message: str, vault_root: Path) -> str:
    """`message` without the server's absolute paths, for a client: a path in the vault
    made relative to it, any other one (the home folder's, the code's) replaced by
    `<path>`. The server's log keeps them."""
    for root in dict.fromkeys((str(vault_root.resolve()), str(vault_root))):
        message = message.replace(root + os.sep, "")
        message = re.sub(re.escape(root) + r"(?![\w.-])", ".", message)
    home = os.path.expanduser("~")
    if home not in ("", "/", "~"):
        message = re.sub(re.escape(home) + r"(?![\w.-])[^'\"\n]*", "<path>", message)
    return _ABSOLUTE.sub("<path>", message)


class Server(MCPServer):
    """The SDK's server, its refusals of arguments told as `invalid_arguments` does."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            # The arguments did not fit the schema (a crash in the tool is an
            # `UnexpectedToolError`, whatever its cause).
            if isinstance(cause, ValidationError) and not isinstance(exc, UnexpectedToolError):
                raise ToolError(invalid_arguments(name, cause)) from cause
            raise


# What each kind of pydantic error says of an argument, in the words of the tool's schema
# (any other kind: pydantic's own message).
_MUST = {
    "missing": "is required",
    "string_too_short": "must have at least {min_length} characters",
    "string_too_long": "must have at most {max_length:,} characters",
    "too_short": "must have at least {min_length} items",
    "too_long": "must have at most {max_length} items",
    "greater_than": "must be more than {gt}",
    "greater_than_equal": "must be at least {ge}",
    "less_than": "must be less than {lt}",
    "less_than_equal": "must be at most {le}",
    "literal_error": "must be one of {expected}",
    "string_type": "must be a string",
    "int_type": "must be a whole number",
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "list_type": "must be a list",
    "extra_forbidden": "is not an argument of this tool",
}


def invalid_arguments(tool: str, error: ValidationError) -> str:
    """What was wrong with a call's arguments, for the model that made it: each argument
    named (`tags[0]` for an item) with what it must be, and a number given shown; never
    a text given (it may be long, or private) nor the validator's links."""
    problems = []
    for item in error.errors(include_url=False):
        where = "".join(
            f"[{part}]" if isinstance(part, int) else f".{part}" for part in item["loc"]
        ).lstrip(".")
        ctx = item.get("ctx", {})
        try:
            must = _MUST[item["type"]].format(**ctx)
        except (KeyError, IndexError, ValueError):
            must = f"is refused: {item['msg']}"
        if item["type"] in ("string_too_short", "too_short") and ctx.get("min_length") == 1:
            must = "must not be empty"
        given = item.get("input")
        if isinstance(given, int | float) and not isinstance(given, bool):
            shown = f" (got {given})"
        elif isinstance(given, str) and item["type"] == "string_too_long":
            shown = f" (got {len(given):,})"
        else:
            shown = ""
        problems.append(f"argument {where or '(the arguments)'} {must}{shown}")
    return (
        f"invalid arguments for {tool}: {'; '.join(problems)}\n"
        "hint: the tool's input schema (tools/list) gives each argument's type and limits"
    )


def _describe(exc: KenomemError) -> str:
    return f"{exc.message}\nhint: {exc.hint}" if exc.hint else exc.message


def _document(result: Any, warnings: list[str]) -> dict[str, Any]:
    doc: dict[str, Any] = to_jsonable(result)
    if warnings:
        doc["warnings"] = warnings
    return doc


def _moment(text: str | None, end_of_day: bool = False) -> datetime | None:
    if not text:
        return None
    from kenomem.files.timeparse import parse_moment

    return parse_moment(text, datetime.now(UTC), end_of_day=end_of_day)


def build_server(vault: Vault, source: Callable[[], str] | None = None) -> MCPServer:
    """The MCP server over `vault`, with its tools and resources registered. `source`,
    when given, names the caller of each call: what it writes records it as its source."""
    memory = Calls(vault, source)
    server: MCPServer = Server(
        "kenomem",
        title="kenomem",
        description="Long-term memory for agents, kept as markdown files.",
        instructions=INSTRUCTIONS,
        version=__version__,
        log_level="WARNING",
    )

    @server.tool(annotations=ToolAnnotations(title="Remember", destructive_hint=False))
    def remember(
        text: Annotated[
            Text,
            Field(
                description="What to remember: one fact, event or instruction, written "
                "so that it makes sense on its own later."
            ),
        ],
        type: Annotated[
            MemoryType | None,
            Field(
                description="semantic: a lasting fact; episodic: something that happened; "
                "procedural: how to behave (a pattern or preference); working: this "
                "session's scratchpad (needs `session`). Left out, it is classified from "
                "the text."
            ),
        ] = None,
        tags: Annotated[Labels | None, Field(description="Short topic tags.")] = None,
        importance: Annotated[
            Annotated[int, Field(ge=1, le=10)] | None,
            Field(
                description="1 (trivial) to 10 (crucial); default: the vault's "
                "`[memory] default_importance` (5 unless set)."
            ),
        ] = None,
        scope: Annotated[
            Label | None,
            Field(description="`global` (default) or a chat id for what only matters there."),
        ] = None,
        session: Session = None,
        title: Annotated[
            str | None,
            Field(max_length=200, description="A title; default: the first sentence."),
        ] = None,
        pinned: Annotated[bool, Field(description="Never let this memory fade.")] = False,
        supersedes: Annotated[
            MemoryId | None,
            Field(description="The id of a memory this one corrects or replaces."),
        ] = None,
        no_supersede: Annotated[
            bool,
            Field(
                description="Keep active a fact this gives a new value for (by default, "
                "when sure, it is superseded)."
            ),
        ] = False,
        when: Annotated[
            Moment,
            Field(
                description="When it happened: 2026-02-14, 2026-02-14T10:30, yesterday, 3d "
                "(an episode; default: the date the text states, else now)."
            ),
        ] = None,
        trigger: Annotated[
            Annotated[str, Field(min_length=1, max_length=128)] | None,
            Field(
                description="Words a message must hold for this to apply, joined by ' + ' "
                "('n8n + 401'): stores an active procedural pattern, which `context` "
                "brings up for every message that holds them."
            ),
        ] = None,
    ) -> dict[str, Any]:
        """Store something worth remembering beyond this conversation.

        A text that says what a memory already says reinforces that memory instead of
        writing a duplicate (`action` is then `reinforced`). To correct a memory, pass
        its id as `supersedes`. A text that gives a new value for what an active fact
        states ("Deploys go out on Wednesdays" after "... on Tuesdays") supersedes it
        when that is sure (`superseded` lists it; `no_supersede` keeps both), and names
        it in `may_contradict`, with the `command` that supersedes it, when it is not.
        Words that ask to keep it ("remember this", "never forget", a rule starting
        "Always") pin it (`pinned_by`). Text that looks like a password or key is
        refused. Returns the memory's `id`, `path`, `type`, `title`, `action`, and `when`
        (an episode's) and `trigger` (a pattern's).
        """
        result, warnings = memory.call(
            lambda v: v.remember(
                text,
                type=type,
                tags=tags or (),
                importance=importance,
                scope=scope,
                session=session,
                title=title,
                pinned=pinned,
                supersedes=supersedes,
                supersede=not no_supersede,
                when=_moment(when),
                trigger=trigger,
            ),
            "remember",
        )
        return _document(result, warnings)

    @server.tool(annotations=ToolAnnotations(title="Recall", read_only_hint=True))
    def recall(
        query: Annotated[Query, Field(min_length=1, description="What to look for.")],
        limit: Annotated[
            Annotated[int, Field(ge=1, le=100)] | None,
            Field(description="How many results, 1-100 (default 10)."),
        ] = None,
        types: Annotated[
            list[RecallType] | None,
            Field(description="Only these types (buffer: today's entries not yet consolidated)."),
        ] = None,
        tags: Annotated[
            Labels | None, Field(description="Only memories with all these tags.")
        ] = None,
        session: Annotated[
            Label | None,
            Field(
                description="The id of the current session or chat: its own memories and "
                "the global ones are searched, never another chat's (without it, the "
                "global ones alone)."
            ),
        ] = None,
        since: Annotated[
            Moment, Field(description="Only from this time on: 2026-02-14, yesterday, 7d, 2w.")
        ] = None,
        until: Annotated[
            Moment, Field(description="Only up to this time (a date includes that day).")
        ] = None,
        archive: Annotated[
            bool, Field(description="Search archived and superseded memories too.")
        ] = False,
        semantic: Annotated[
            bool | None,
            Field(
                description="Search by meaning too (default: yes, when the vault has an "
                "embeddings provider); false: by words alone."
            ),
        ] = None,
    ) -> dict[str, Any]:
        """Search the long-term memory; results ranked by relevance, importance and recency.

        Each result has its `id`, `type`, `title`, `score`, `tags`, `created` and a
        `snippet` of the text. An empty `results` list means nothing relevant is known.
        `confidence` (high, medium, low, none) says how sure the match is: below medium,
        the results are likely noise. Entries logged today and not yet consolidated come
        with `type` buffer, their `day`, `time`, `who` and `session`. A time alone ("what
        did we talk about yesterday") gives what happened then, most important first;
        `period` says the span understood (`from`, `to`, `said`), or is null. `cut`:
        how many results were left out as unrelated (found by meaning alone, no nearer
        than most memories), so fewer than `limit` may come.
        """
        result, warnings = memory.call(
            lambda v: v.recall(
                query,
                limit=limit,
                types=types or (),
                tags=tags or (),
                # An agent sees its chat's memories and the global ones (index.scope).
                scopes=(session,) if session else ("global",),
                since=_moment(since),
                until=_moment(until, end_of_day=True),
                archive=archive,
                semantic=semantic,
            ),
            "recall",
        )
        found = {
            "query": result.query,
            "results": result.results,
            "candidates": result.candidates,
            "confidence": result.confidence,
            "period": result.period.described() if result.period is not None else None,
            "cut": result.cut,
        }
        return _document(found, [*result.warnings, *warnings])

    @server.tool(
        annotations=ToolAnnotations(title="Memory context", read_only_hint=True),
        structured_output=False,
    )
    def context(
        query: Annotated[
            Query, Field(description="The task or message at hand; it picks the memories.")
        ] = "",
        session: Session = None,
        budget: Annotated[
            Annotated[int, Field(gt=0, le=1_000_000)] | None,
            Field(description="At most this many tokens (default about 2,000)."),
        ] = None,
        tags: Annotated[
            Labels | None,
            Field(
                description="Only memories with all these tags (this agent's own view); "
                "the foundation, working memory and conversation stay."
            ),
        ] = None,
    ) -> str:
        """The memory block to keep in mind for this task, as markdown.

        It holds first, each with its share of the budget: the foundation (the user's
        values and goals), how to behave, this session's working memory and its latest
        turns; then the patterns the query triggers and the relevant facts and episodes.
        Only this session's chat's memories and the global ones, never another chat's.
        A text appears once. Call it at the start of a task, and again when the topic
        changes.
        """
        result, warnings = memory.call(
            lambda v: v.context(query, session=session, budget=budget, tags=tuple(tags or ())),
            "context",
        )
        text: str = result.text
        if warnings:
            text += "\n\n" + "\n".join(f"warning: {w}" for w in warnings)
        return text

    # No `delete` here: deleting a memory for good needs a person's confirmation (the
    # command line asks, or takes --yes), which a model cannot give on their behalf. An
    # archived memory is kept and can be restored with `kenomem restore ID`.
    @server.tool(
        annotations=ToolAnnotations(title="Forget", destructive_hint=False, idempotent_hint=True)
    )
    def forget(
        id: Annotated[MemoryId, Field(description="The id of the memory to archive.")],
    ) -> dict[str, Any]:
        """Archive a memory that is wrong, obsolete or unwanted.

        The memory leaves recall and context but its file is kept in the archive, so
        the user can restore it. To correct a memory rather than drop it, call
        `remember` with `supersedes` instead.
        """
        result, warnings = memory.call(lambda v: v.forget(id), "forget")
        return _document(result, warnings)

    @server.tool(annotations=ToolAnnotations(title="Log", destructive_hint=False))
    def log(
        text: Annotated[Text, Field(description="What was said or done, as it happened.")],
        session: Session = None,
        who: Annotated[
            Label | None, Field(description="Who said or did it (a name, or `assistant`).")
        ] = None,
        channel: Annotated[
            Label | None, Field(description="Where: cli, telegram, email, ...")
        ] = None,
    ) -> dict[str, Any]:
        """Append an entry to today's log, the raw record of the day.

        Log the turns of the conversation worth keeping; the sleep cycle later turns the
        day's log into memories. Nothing logged is ever rewritten.
        """
        result, warnings = memory.call(
            lambda v: v.log(text, session=session, who=who, channel=channel), "log"
        )
        return _document(result, warnings)

    @server.tool(annotations=ToolAnnotations(title="Extract from a reply", destructive_hint=False))
    def extract(
        reply: Annotated[
            Text,
            Field(
                description="Your reply, with what to remember tagged: <memory>a lasting "
                "fact</memory>, <chat-memory>what matters in this chat</chat-memory>, "
                "<working-memory>this session's scratchpad</working-memory>. An opening "
                'tag may carry importance="7", tags="a, b" and title="...".'
            ),
        ],
        session: Session = None,
        log: Annotated[bool, Field(description="Also log the exchange to today's buffer.")] = False,
        user_message: Annotated[
            Annotated[str, Field(max_length=MAX_TEXT)] | None,
            Field(description="The message the reply answers, logged first with `log`."),
        ] = None,
        no_supersede: Annotated[
            bool,
            Field(description="Keep active a fact a tagged memory gives a new value for."),
        ] = False,
    ) -> dict[str, Any]:
        """Store what a reply tags to remember; return the reply without the tags.

        `text` is the reply to show the user; `stored` lists each memory written (`id`,
        `path`, `type`, `action`, and as `remember` says them: `superseded`,
        `may_contradict`, `pinned_by`); `problems` says what was not stored and why (a
        malformed tag stays in the text). <chat-memory> and <working-memory> need
        `session`.
        """

        result, warnings = memory.call(
            lambda v: v.extract(
                reply=reply,
                session=session,
                log=log,
                user_message=user_message,
                supersede=not no_supersede,
            ),
            "extract",
        )
        return _document(result, warnings)

    @server.tool(annotations=ToolAnnotations(title="Show the working memory", read_only_hint=True))
    def working_show(
        session: Annotated[Label, Field(description="The id of the current session or chat.")],
    ) -> dict[str, Any]:
        """This session's scratchpad: its task, context, pending steps and notes.

        `working` is null when the session has none; `stale` says it was not updated
        for a while (context leaves a stale one out).
        """
        view, warnings = memory.call(lambda v: v.working(session), "working_show")
        return _document({"session": session, "working": view}, warnings)

    @server.tool(
        annotations=ToolAnnotations(
            title="Set the working memory", destructive_hint=True, idempotent_hint=True
        )
    )
    def working_set(
        session: Annotated[Label, Field(description="The id of the current session or chat.")],
        text: Annotated[
            Text,
            Field(
                description="The whole scratchpad, replacing the one before: free text, "
                "or lines 'Task: ...', 'Context: ...', 'Notes: ...' and 'Pending:' then "
                "'- step' lines, or a JSON object with those keys (a list becomes '- ' "
                "lines; 'session', if given, must be this session; 'updated' is ignored)."
            ),
        ],
    ) -> dict[str, Any]:
        """Replace this session's scratchpad (what you are doing and what is left).

        Returns its `id`, `path`, `action` (created or updated) and the `fields` read
        from a structured text.
        """
        result, warnings = memory.call(lambda v: v.set_working(session, text), "working_set")
        return _document(result, warnings)

    @server.tool(
        annotations=ToolAnnotations(
            title="Clear the working memory", destructive_hint=False, idempotent_hint=True
        )
    )
    def working_clear(
        session: Annotated[
            Label, Field(description="The id of the session whose scratchpad is done.")
        ],
    ) -> dict[str, Any]:
        """Move this session's scratchpad to the archive, once its task is done.

        `cleared` is false when there was none.
        """
        result, warnings = memory.call(lambda v: v.clear_working(session), "working_clear")
        return _document(result, warnings)

    @server.tool(annotations=ToolAnnotations(title="Patterns", read_only_hint=True))
    def patterns(
        message: Annotated[
            Annotated[str, Field(min_length=1, max_length=MAX_TEXT)] | None,
            Field(
                description="A message: only the active patterns whose trigger it "
                "matches. Left out: every active and proposed pattern."
            ),
        ] = None,
        session: Annotated[
            Label | None,
            Field(
                description="The id of the current session or chat: its own patterns and "
                "the global ones, never another chat's (without it, the global ones alone)."
            ),
        ] = None,
    ) -> dict[str, Any]:
        """The behaviour patterns (how the user wants things done) that apply.

        With a message, the active patterns whose trigger matches it, each counted as a
        use; follow their `text`. Without one, every pattern, active first. Only this
        session's chat's patterns and the global ones, never another chat's.
        """

        def run(v: Vault) -> Any:
            if message is not None:
                check_fields({"message": message}, then="nothing was matched")
                if not message.strip():
                    raise InvalidInput("the message is empty")
            # An agent sees its chat's patterns and the global ones (index.scope).
            return v.patterns(message, scopes=(session,) if session else ("global",))

        result, warnings = memory.call(run, "patterns")
        return _document(result, warnings)

    @server.resource(
        "kenomem://foundation",
        name="foundation",
        title="Foundation",
        description="The user's core values and long-term goals (foundation.md).",
        mime_type="text/markdown",
    )
    def foundation() -> str:
        return memory.read(lambda v: v.foundation(), "foundation") or "(foundation.md is empty)"

    @server.resource(
        "kenomem://working/{session}",
        name="working",
        title="Working memory",
        description="The scratchpad of one session: task, context, pending steps, notes.",
        mime_type="text/markdown",
    )
    def working(session: str) -> str:
        def read(v: Vault) -> str:
            view = v.working(session)
            if view is None:
                return f"No working memory for session {session!r}."
            about = f"Working memory of session {session!r}, updated {to_jsonable(view.updated)}"
            if view.stale:
                about += " (stale: recall and context leave it out)"
            return f"{about}\n\n{view.text}"

        return memory.read(read, "working")

    @server.resource(
        "kenomem://memory/{id}",
        name="memory",
        title="Memory",
        description="One memory's file: its frontmatter and text.",
        mime_type="text/markdown",
    )
    def memory_file(id: str) -> str:
        def read(v: Vault) -> str:
            found = v.show(id).memory
            return read_text_inside(v.root, found.path)

        return memory.read(read, "memory")

    return server


def open_served(vault_path: str | None) -> Vault:
    """The vault a server serves (a `KenomemError` if there is none), with logging on
    stderr set up and what a person should know about its settings logged there."""
    vault = Vault(vault_path, source="mcp")
    logging.basicConfig(
        stream=sys.stderr,
        level=logging.WARNING,
        format="%(asctime)s %(name)s %(levelname)s: %(message)s",
    )
    logger.setLevel(logging.INFO)
    for warning in vault.warnings:
        logger.warning("%s", warning)
    for setting in vault.settings.from_env:
        logger.info("%s set by %s", setting.key, setting.variable)
    return vault


def serve(vault_path: str | None) -> None:
    """Open the vault, then serve until stdin closes."""
    vault = open_served(vault_path)
    server = build_server(vault)
    logger.info("kenomem %s serving %s over MCP (stdio)", __version__, vault.root)
    server.run("stdio")
