"""kenomem for agents written in Python: the operations of the command line on one vault.

    from kenomem import Vault

    vault = Vault("~/kenomem")
    vault.remember("Prefers direct answers", tags=["preference"])
    for hit in vault.recall("how to answer", limit=5).results:
        print(hit.title, hit.score)
    print(vault.context("deploy the api", session="s1").text)

Each method calls one function of the core and returns its typed result (a NamedTuple;
`to_jsonable` here makes JSON of it). Errors are `KenomemError` subclasses with a message,
a hint and the exit code the command line would give. The command line's handlers call
these same methods, so both stay the same.

An operation is declared once, by the core. Each one with options takes a request, a
NamedTuple beside its core function whose fields are the options (`RecallRequest` in
`kenomem.recall.search`, `PruneRequest` in `kenomem.forget.prune`...), and its method
takes the request or its fields: `vault.recall("deploy", limit=5)` is
`vault.recall(RecallRequest("deploy", limit=5))`, `vault.prune(dry_run=True)` is
`vault.prune(PruneRequest(dry_run=True))`. The fields go straight into the request type,
so a misspelt one raises TypeError at once (a type checker checks a request built by hand,
not the keywords); a list given for a field (`tags=["a"]`) is made a tuple. The command
line builds the same requests from its options, named as the fields (`cli/handlers/`), so
a new option of `recall` is a field of `RecallRequest` and a parameter of the `recall`
command, and nothing here. What only names what an operation acts on (`show(id)`,
`restore(id)`, `set_working(session, text)`) and what is not an option of it (a
`progress` callback) are the method's own parameters.

The vault is read afresh by each operation (hand edits made in between are seen); the
object keeps only the settings and the open index, so one `Vault` can serve a
long-running agent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from os import PathLike, fspath
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from kenomem.files.fm import format_time
from kenomem.files.paths import resolve_vault

if TYPE_CHECKING:  # each operation imports the core it needs when it is called
    from kenomem.agents.context import ContextRequest, ContextResult
    from kenomem.agents.decide import DecideResult
    from kenomem.agents.procedural import PatternsRequest, PatternsResult
    from kenomem.agents.working import WorkingClearResult, WorkingSetResult, WorkingView
    from kenomem.capture.edit import EditResult
    from kenomem.capture.extract import ExtractRequest, ExtractResult
    from kenomem.capture.log import LogRequest, LogResult
    from kenomem.capture.remember import RememberRequest, RememberResult
    from kenomem.config import Settings
    from kenomem.embed.model import ModelInfo, PullResult
    from kenomem.forget.archive import ForgetRequest, ForgetResult
    from kenomem.forget.prune import PruneRequest, PruneResult
    from kenomem.forget.reset import ResetRequest, ResetResult
    from kenomem.forget.restore import RestoreResult
    from kenomem.hooks.run import HookRequest, HookResult
    from kenomem.ingest.importer import ImportResult
    from kenomem.recall.search import RecallRequest, RecallResult
    from kenomem.share.sync import SyncRequest, SyncResult
    from kenomem.sleep.consolidate import ConsolidateRequest, ConsolidateResult
    from kenomem.vault.core import CoreVault, SyncReport
    from kenomem.vault.doctor import DoctorRequest, DoctorResult
    from kenomem.vault.init import InitResult
    from kenomem.vault.reindex import ReindexResult
    from kenomem.vault.views import ListRequest, ListResult, ShowResult, StatsResult

Progress = Callable[[int], None]
Request = TypeVar("Request")


def _request(kind: type[Request], given: Any, fields: dict[str, Any]) -> Request:
    """The request of type `kind`: `given` if it is one (with `fields` replaced), else
    built from `given` (its first field, when not None) and `fields`."""
    defaults: dict[str, Any] = kind._field_defaults  # type: ignore[attr-defined]
    fields = {name: _tupled(value, defaults.get(name)) for name, value in fields.items()}
    if isinstance(given, kind):
        return given._replace(**fields) if fields else given  # type: ignore[attr-defined]
    make: Any = kind
    return make(**fields) if given is None else make(given, **fields)


def _tupled(value: Any, default: Any) -> Any:
    """A list or set as a tuple, as is any iterable given for a field whose default is a
    tuple (`tags=["a"]`, `types=(t for t in wanted)`): requests hold tuples."""
    if isinstance(value, list | set | frozenset):
        return tuple(value)
    if isinstance(default, tuple) and not isinstance(value, tuple | str | bytes):
        return tuple(value)
    return value


def _given(path: str | PathLike[str] | None) -> str | None:
    return None if path is None else fspath(path)  # resolve_vault expands ~ itself


class Vault:
    """One vault, opened from `path`, else `$KENOMEM_VAULT`, else the working folder or
    the nearest folder above it that holds a vault, else `~/kenomem`."""

    def __init__(self, path: str | PathLike[str] | None = None, *, source: str = "api") -> None:
        from kenomem.vault.core import CoreVault

        self.core: CoreVault = CoreVault.open(resolve_vault(_given(path)))
        # Written into the `source` key of what this object remembers.
        self.source = source

    @staticmethod
    def init(path: str | PathLike[str] | None = None, *, git: bool = False) -> InitResult:
        """Create a vault from the template; files already there are kept. With `git`,
        it is made a git repository with kenomem's merge driver (`kenomem sync`). Without
        `path`: `$KENOMEM_VAULT`, else `~/kenomem` (no folder is searched)."""
        from kenomem.vault.init import init_vault

        return init_vault(resolve_vault(_given(path), discover=False), git=git)

    @property
    def root(self) -> Path:
        return self.core.root

    @property
    def warnings(self) -> list[str]:
        """Problems met so far: settings not understood, files skipped by the last sync."""
        return self.core.warnings

    @property
    def settings(self) -> Settings:
        """The vault's settings, from its kenomem.toml."""
        return self.core.settings

    @property
    def last_sync(self) -> SyncReport | None:
        """What the last scan of the files found and changed in the index (None before
        the first operation)."""
        return self.core.last_sync

    @contextmanager
    def one_scan(self) -> Iterator[None]:
        """The operations in the block share one scan of the files, the first (kenomem's
        own writes in the block are kept track of as they are made)."""
        with self.core.sync_once():
            yield

    def resolve(self, id: str) -> tuple[str, str]:
        """(id, vault-relative path) of the one memory whose id starts with `id`."""
        self.core.sync()
        return self.core.resolve_id(id)

    # -- remembering and recalling -----------------------------------------------------

    def remember(
        self, request: RememberRequest | str | None = None, /, **fields: Any
    ) -> RememberResult:
        """Store a memory (a text, or a `RememberRequest`); a fact already known reinforces
        the memory that holds it. Its `source` is this object's."""
        from kenomem.capture.remember import RememberRequest, remember

        made = _request(RememberRequest, request, fields)
        return remember(self.core, made._replace(source=self.source))

    def recall(self, request: RecallRequest | str | None = None, /, **fields: Any) -> RecallResult:
        """Memories ranked by recency + importance + relevance (a query, or a
        `RecallRequest`)."""
        from kenomem.recall.search import RecallRequest, recall

        return recall(self.core, _request(RecallRequest, request, fields))

    def context(
        self, request: ContextRequest | str | None = None, /, **fields: Any
    ) -> ContextResult:
        """The memory block for a system prompt, packed into `budget` tokens (a query, or a
        `ContextRequest`)."""
        from kenomem.agents.context import ContextRequest, build_context

        return build_context(self.core, _request(ContextRequest, request, fields))

    def show(self, id: str) -> ShowResult:
        from kenomem.vault.views import show

        return show(self.core, id)

    def list(self, request: ListRequest | None = None, /, **fields: Any) -> ListResult:
        """Memories by filters: a `kenomem.vault.views.ListRequest`, or its fields."""
        from kenomem.vault.views import ListRequest, list_memories

        return list_memories(self.core, _request(ListRequest, request, fields))

    def forget(self, request: ForgetRequest | str | None = None, /, **fields: Any) -> ForgetResult:
        """Archive a memory (an id, or a `ForgetRequest`; `delete=True` removes its file for
        good)."""
        from kenomem.forget.archive import ForgetRequest, forget

        return forget(self.core, _request(ForgetRequest, request, fields))

    def edit(self, id: str, command: Sequence[str] | None = None) -> EditResult:
        """Open the memory in an editor (`command`, else $VISUAL or $EDITOR), then reindex
        it."""
        from kenomem.capture.edit import edit, editor_command

        return edit(self.core, id, [*command] if command else editor_command())

    def foundation(self) -> str:
        """The text of `foundation.md` ("" when there is none)."""
        from kenomem.agents.foundation import read_foundation

        return read_foundation(self.core.root)

    # -- working memory and procedural patterns -----------------------------------------

    def working(self, session: str, now: datetime | None = None) -> WorkingView | None:
        """The session's scratchpad, stale or not (`.stale` says); None when it has none."""
        from kenomem.agents.working import show_working

        return show_working(self.core, session, now)

    def set_working(self, session: str, text: str, now: datetime | None = None) -> WorkingSetResult:
        """Replace the session's scratchpad: free text, a 'Task: / Context: / Pending: /
        Notes:' form, or a JSON object with those keys."""
        from kenomem.agents.working import set_working

        return set_working(self.core, session, text, now, source=self.source)

    def clear_working(self, session: str) -> WorkingClearResult:
        """Move the session's scratchpad to the archive."""
        from kenomem.agents.working import clear_working

        return clear_working(self.core, session)

    def patterns(
        self,
        request: PatternsRequest | str | None = None,
        /,
        *,
        now: datetime | None = None,
        **fields: Any,
    ) -> PatternsResult:
        """Every active and proposed pattern; with a message (or a `PatternsRequest`), the
        active ones it triggers (each counted as a use unless `touch` is false)."""
        from kenomem.agents.procedural import PatternsRequest, list_patterns

        return list_patterns(self.core, _request(PatternsRequest, request, fields), now=now)

    def hook(self, request: HookRequest | None = None, /, **fields: Any) -> HookResult:
        """What an agent's hook asks on one of its events (a `HookRequest`: the agent, the
        event, its JSON payload): the session's block, a prompt's memories, or the new
        turns of its transcript logged."""
        from kenomem.hooks.run import HookRequest, run_hook

        return run_hook(self.core, _request(HookRequest, request, fields))

    # -- the day's buffer and the sleep cycle --------------------------------------------

    def log(self, request: LogRequest | str | None = None, /, **fields: Any) -> LogResult:
        """Append an entry (a text, or a `LogRequest`) to its day's buffer, for the sleep
        cycle."""
        from kenomem.capture.log import LogRequest, log

        return log(self.core, _request(LogRequest, request, fields))

    def extract(
        self, request: ExtractRequest | str | None = None, /, **fields: Any
    ) -> ExtractResult:
        """Store the tagged memories of an LLM reply (or an `ExtractRequest`); `.text` is
        the reply without them."""
        from kenomem.capture.extract import ExtractRequest, extract

        return extract(self.core, _request(ExtractRequest, request, fields))

    def consolidate(
        self,
        request: ConsolidateRequest | None = None,
        /,
        *,
        progress: Progress | None = None,
        warn: Callable[[str], None] | None = None,
        **fields: Any,
    ) -> ConsolidateResult:
        """The sleep cycle (a `ConsolidateRequest`, or its fields); `llm=None` takes
        `consolidate.llm_command` from the settings."""
        from kenomem.sleep.consolidate import ConsolidateRequest, consolidate

        return consolidate(
            self.core,
            _request(ConsolidateRequest, request, fields),
            progress=progress,
            warn=warn or self.core.warnings.append,
        )

    def import_file(
        self,
        file: str | PathLike[str] | None = None,
        *,
        text: str | None = None,
        progress: Callable[[int, int], None] | None = None,
        **fields: Any,
    ) -> ImportResult:
        """Load chat histories or memories from a JSON or JSONL file (or from `text`): each
        turn an episodic memory (`target="buffer"`: an entry of its day's buffer), each
        memory of its type; an agent's transcript or export, or a folder of them (Claude
        Code, Codex, ChatGPT, Claude.ai). Importing the same file again creates nothing
        new. `fields`
        are those of `ImportRequest` (target, session, type, tags, dry_run, now)."""
        from os.path import expanduser, isdir

        from kenomem.ingest.importer import ImportRequest, import_folder, import_records, read_file

        if text is None and file is None:
            raise TypeError("import_file() needs a file or text")
        if text is None and file is not None and isdir(expanduser(file)):  # transcripts
            request = _request(ImportRequest, None, {"text": "", "name": str(file), **fields})
            return import_folder(self.core, file, request, progress)
        read = read_file(file) if text is None and file is not None else text or ""
        name = str(file) if file is not None else "-"
        request = _request(ImportRequest, None, {"text": read, "name": name, **fields})
        return import_records(self.core, request, progress)

    def approve(self, id: str) -> DecideResult:
        from kenomem.agents.decide import approve

        return approve(self.core, id)

    def reject(self, id: str) -> DecideResult:
        from kenomem.agents.decide import reject

        return reject(self.core, id)

    # -- forgetting -----------------------------------------------------------------------

    def prune(
        self,
        request: PruneRequest | None = None,
        /,
        *,
        progress: Progress | None = None,
        **fields: Any,
    ) -> PruneResult:
        """Archive stale and faded memories, summarise old episodes (a `PruneRequest`, or
        its fields: `dry_run`, `delete`, `superseded`)."""
        from kenomem.forget.prune import PruneRequest, prune

        return prune(self.core, _request(PruneRequest, request, fields), progress=progress)

    def restore(self, id: str) -> RestoreResult:
        from kenomem.forget.restore import restore

        return restore(self.core, id)

    def reset(self, request: ResetRequest | None = None, /, **fields: Any) -> ResetResult:
        """Move memories to the trash: episodic, working, procedural and the buffer, or
        (`everything=True`) all of them. `undo_reset` brings the last one back."""
        from kenomem.forget.reset import ResetRequest, reset

        return reset(self.core, _request(ResetRequest, request, fields))

    def undo_reset(self) -> ResetResult:
        from kenomem.forget.reset import undo

        return undo(self.core)

    # -- upkeep ---------------------------------------------------------------------------

    def buffer_days(self) -> Sequence[str]:
        """The vault-relative paths of the buffer's days, oldest first."""
        from kenomem.files.buffer import days

        return days(self.core.root)

    def count_files(self) -> int:
        """How many memory files the vault holds: what `reindex` will read."""
        from kenomem.vault.reindex import count_files

        return count_files(self.core)

    def reindex(
        self,
        progress: Progress | None = None,
        embedding: Callable[[int], Progress] | None = None,
    ) -> ReindexResult:
        """Rebuild the index (`progress` gets the files read), then make the vectors the
        store wants (`embedding`, given their count, gives their progress callback)."""
        from kenomem.vault.reindex import reindex

        return reindex(self.core, progress, embedding)

    def model_info(self) -> ModelInfo:
        """Recall by meaning's model ([embeddings]): its name, where it is, its size,
        whether it is on disk; told without loading it."""
        from kenomem.embed.model import model_info

        return model_info(self.core.settings.embeddings)

    def pull_model(
        self, *, progress: bool = True, say: Callable[[str], None] | None = None
    ) -> PullResult:
        """Fetch the fastembed model once (`progress`: huggingface_hub's bar on stderr;
        `say` is told what is fetched), then load it to check it works. Recall reads it
        from disk only. The openai and none providers have nothing to fetch."""
        from kenomem.embed.model import pull_model

        return pull_model(self.core.settings.embeddings, progress, say)

    def stats(self) -> StatsResult:
        from kenomem.vault.views import stats

        return stats(self.core)

    def doctor(self, request: DoctorRequest | None = None, /, **fields: Any) -> DoctorResult:
        """Check the vault (`fix=True`: and repair what is safe to repair)."""
        from kenomem.vault.doctor import DoctorRequest, doctor

        return doctor(self.core, _request(DoctorRequest, request, fields))

    def sync(self, request: SyncRequest | None = None, /, **fields: Any) -> SyncResult:
        """Commit the vault's changes, pull, merge and push through its git remote
        (`dry_run=True`: only say what would be done; `setup=True`: only set up the merge
        driver). Raises `SyncError` with the cause and the fix when it cannot. The index
        is left in step with what the merge wrote (the change scan, as any command's)."""
        from kenomem.share.sync import SyncRequest, sync

        return sync(self.root, _request(SyncRequest, request, fields), refresh=self.core.sync)


def to_jsonable(value: Any) -> Any:
    """A result (or any value of one) as plain JSON values: records as objects, times
    as ISO 8601 text, paths as text."""
    if isinstance(value, tuple) and hasattr(value, "_asdict"):  # a NamedTuple record
        return {k: to_jsonable(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    if isinstance(value, datetime):
        return format_time(value)
    if isinstance(value, Path):
        return str(value)
    return value


def _naming_storage_errors(method: Callable[..., Any]) -> Callable[..., Any]:
    """`method`, raising a disk's refusal (full, read-only, not allowed...) as the
    KenomemError that names it, as the command line reports it."""
    import functools

    from kenomem.errors import storage_error

    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except OSError as exc:
            refused = storage_error(exc)
            if refused is None:
                raise
            raise refused from exc

    return call


for _name, _member in list(vars(Vault).items()):
    if isinstance(_member, staticmethod):
        setattr(Vault, _name, staticmethod(_naming_storage_errors(_member.__func__)))
    elif callable(_member) and (_name == "__init__" or not _name.startswith("_")):
        setattr(Vault, _name, _naming_storage_errors(_member))
