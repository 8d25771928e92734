"""Recall strengthens what it returns: `last_accessed` and `access_count` are written into
each returned file (SPEC 3), and the saved state learns of the new bytes.

A file is rewritten only if its content is still the one that was indexed (its digest):
an edit saved since is never overwritten, and the next sync indexes it. A plain note a
person wrote without frontmatter gets no YAML added, and a symlink, a file its owner made
read-only, one whose `id` kenomem cannot read or one that holds `access_count` (or
`last_accessed`) twice is not rewritten: their access is kept in the state.

Each rewrite is a temporary file, an fsync and a rename; the fsyncs of one recall's files
are waited for together, in threads, instead of one after the other: most of a touch is
waiting for the disk, and ten waits at once cost little more than one. Where the first
rewrite shows the disk answers at once (under 1 ms), the others follow it in turn, since
starting the threads would then cost more than the waits.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from kenomem.errors import FrontmatterError, KenomemError, UnsafePath
from kenomem.files import fm, store
from kenomem.files.atomic import DirtyFile
from kenomem.files.fmedit import RepeatedKey
from kenomem.files.memory import DERIVED_PREFIX
from kenomem.files.paths import open_for_update
from kenomem.index import Doc
from kenomem.index import state as state_mod
from kenomem.index.state import FileRecord
from kenomem.vault.core import CoreVault

_EXPECTED = (DirtyFile, FrontmatterError, UnsafePath, OSError, UnicodeDecodeError)


# One warning for all the files a full or read-only disk kept from being touched.
NOT_TOUCHED = "the use of these memories was not recorded"
_SERIAL_BELOW_SECONDS = 0.001  # a write and fsync this quick: the others one after another


def touch_all(vault: CoreVault, docs: list[tuple[Doc, int]], now: datetime) -> list[bool]:
    """Touch each (doc, new access count); whether each was (in its file or the state).

    A rewrite is journaled just before the file is renamed into place, so a watcher that
    sees the rename finds it already recorded and knows the change for kenomem's own (see
    watch/watcher.py); then the state learns of every touch at once
    (`state.record_touches`). A disk that refuses that costs a warning, not the answer.
    """
    state = vault.state
    stamp = now.timestamp()
    touched = [False] * len(docs)
    accessed: list[tuple[str, float, int]] = []
    jobs: list[tuple[int, Doc, dict[str, Any], str]] = []
    for i, (doc, count) in enumerate(docs):
        derived = doc.id.startswith(DERIVED_PREFIX)
        if not _in_place(vault, doc.path, doc.id if derived else None):
            accessed.append((doc.path, stamp, count))
            touched[i] = True
            continue
        values = store.touch_values(now, count)
        if derived:
            values["id"] = doc.id  # the file is written anyway: make its id permanent
        jobs.append((i, doc, values, state.current_digest(doc.path, doc.digest)))

    def record(doc: Doc, count: int, written: store.Written) -> FileRecord:
        return FileRecord(written.size, written.mtime_ns, written.digest, doc.id, "", stamp, count)

    def announce(doc: Doc, count: int, written: store.Written) -> None:
        state_mod.journal_rewrite(vault.state_dir, doc.path, record(doc, count, written))

    outcomes = _write_all(vault, jobs, announce)
    rewritten: list[tuple[str, FileRecord]] = []
    for (i, doc, values, _), outcome in zip(jobs, outcomes, strict=True):
        if isinstance(outcome, RepeatedKey):  # `access_count:` twice: the person's to fix
            accessed.append((doc.path, stamp, values["access_count"]))
            touched[i] = True
            continue
        if isinstance(outcome, BaseException):
            if not (isinstance(outcome, OSError) and vault.lag(outcome, NOT_TOUCHED)):
                vault.warnings.append(f"not touched: {outcome}")
            continue
        rewritten.append((doc.path, record(doc, values["access_count"], outcome)))
        touched[i] = True
    try:
        state_mod.record_touches(vault.state_dir, state, rewritten, accessed)
    except OSError as exc:
        if not vault.lag(exc, NOT_TOUCHED):
            raise
    return touched


def _write_all(
    vault: CoreVault,
    jobs: list[tuple[int, Doc, dict[str, Any], str]],
    announce: Callable[[Doc, int, store.Written], None],
) -> list[store.Written | BaseException]:
    """Each job's rewrite, or the expected error it met; in threads when it fsyncs."""
    fsync = vault.settings.write.fsync
    outcomes: list[store.Written | BaseException] = [DirtyFile("not written")] * len(jobs)
    failures: list[BaseException] = []

    def write(k: int) -> None:
        _, doc, values, digest = jobs[k]
        try:
            outcomes[k] = store.update_keys(
                vault.root,
                doc.path,
                values,
                expect_digest=digest,
                fsync=fsync,
                sync_dir=False,  # losing an access count to a power cut is harmless
                before_replace=lambda written: announce(doc, values["access_count"], written),
            )
        except _EXPECTED as exc:
            outcomes[k] = exc
        except BaseException as exc:  # re-raised in the caller's thread
            failures.append(exc)

    rest = range(len(jobs))
    threaded = False
    if fsync and len(jobs) > 1:
        # The first write shows what waiting for the disk costs here: where it is shorter
        # than starting a thread (~0.5 ms each), threads would cost more than they save.
        started = time.perf_counter()
        write(0)
        threaded = time.perf_counter() - started >= _SERIAL_BELOW_SECONDS
        rest = range(1, len(jobs))
    if not threaded:
        for k in rest:
            write(k)
    else:
        import threading  # only where the disk makes writes wait

        threads = [threading.Thread(target=write, args=(k,)) for k in rest]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    if failures:
        raise failures[0]
    return outcomes


def _in_place(vault: CoreVault, path: str, derived_id: str | None) -> bool:
    """Whether the access may be written into the file itself: it has frontmatter, it is
    no symlink, its owner may write it (`paths.open_for_update`) and, when its id is
    derived, it has no other `id` of its own (a value kenomem cannot read, such as a
    list, is still the person's: never replaced). Otherwise the state keeps the access."""
    try:
        with open(open_for_update(vault.root, path), "rb") as handle:
            head = handle.read(8)
            if not head.removeprefix(b"\xef\xbb\xbf").startswith(b"---"):
                return False
            if derived_id is None:
                return True
            text = (head + handle.read()).decode("utf-8")
        parts = fm.split(text, path)
        meta = fm.parse(parts.fm_text, path=path, first_line=parts.first_line)
        return meta.get("id") in (None, "", derived_id)  # an `id:` left empty is filled in
    except (KenomemError, OSError, UnicodeDecodeError):
        return False
