"""The vector store: one vector per memory, under `.kenomem/vectors/`, derived like the
index and searched exactly (a dot product over every vector).

Plain numpy, measured against the libraries (`docs/recall.md`, "Meaning"): a memory-mapped
float32 matrix searched in full takes 8 ms at 100,000 memories of 384 dimensions, where
usearch's HNSW view took 10-13 ms (and is approximate), and sqlite-vec cannot be loaded by
the standard library's sqlite3 on many builds. What it needs that a library would give is
a cheap update; it is done here with a journal:

- `meta.json`: the model's fingerprint, the dimension and the generation `g`;
- `base-g.npy` (n x d float32, rows sorted by id), `ids-g.npy`, `keys-g.npy`: the
  compacted store, memory-mapped;
- `journal-g`: records appended since: `put` (id, key, vector), `want` (id, key: a memory
  whose text changed and has no vector yet) and `del` (id). Each record is framed with its
  length and CRC, so a torn last record (a crash) is dropped, not misread.

A memory's key is a digest of the text it was embedded from (`memory.meaning_key`): an
edit wants a new vector, a touch or a move does not. Another model or prefix is another
fingerprint, and the store starts again empty. Writers (`note`, `put`, `compact`) hold the
vault's lock; readers need none. Anything unreadable is a damaged store: it is emptied
and filled again, with a warning.

Every file of the store is opened in its folder held by descriptor (`beneath.private`: a
real folder of the user's own in a real `.kenomem/`), never through a link: a symlink at
one of its names reads as damage (the store is made again, the link removed, not what it
points to), the base is memory-mapped from the descriptor that was opened without
following one, and writes are temporary files renamed into place or appends, all
relative to that folder. A link (or a file) in place of the folder itself is
`UnsafePath`, as for `.kenomem/`.
"""

from __future__ import annotations

import json
import os
import stat
import struct
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kenomem.errors import UnsafePath
from kenomem.files import beneath
from kenomem.files.atomic import append_bytes, write_bytes

if TYPE_CHECKING:
    from kenomem.embed.provider import Vectors

VERSION = 1
META = "meta.json"
_FRAME = struct.Struct("<4sII")  # magic, payload length, crc32
_MAGIC = b"KVJ1"
# Journal records past which a writer folds them into a new base.
COMPACT_MIN = 512
COMPACT_SHARE = 0.1
_READ = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)  # a pipe in a file's place cannot hang
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL


def _frames(records: list[tuple[dict[str, str], bytes]]) -> bytes:
    blob = bytearray()
    for head, raw in records:
        payload = json.dumps(head, ensure_ascii=False).encode("utf-8") + b"\0" + raw
        blob += _FRAME.pack(_MAGIC, len(payload), zlib.crc32(payload)) + payload
    return bytes(blob)


class StoreDamaged(Exception):
    """The store's files cannot be read as one store."""


def _open(folder: beneath.Folder, name: str) -> int:
    """A descriptor of the regular file `name` of the store, for reading; a symlink there
    is `UnsafePath` (`beneath.open_in`), anything else but a file `StoreDamaged`."""
    fd = beneath.open_in(folder, name, _READ)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise StoreDamaged(f"its {name} is not a file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read(folder: beneath.Folder, name: str) -> bytes:
    with open(_open(folder, name), "rb") as handle:
        return handle.read()


def _mapped(folder: beneath.Folder, name: str) -> Any:
    """The array of the .npy file `name`, memory-mapped from the descriptor `_open` gave
    (`np.load` would open the file again by its name). Its header is read by numpy's own
    reader (a literal, never a pickle); an array of Python objects is refused."""
    import numpy as np

    fmt = np.lib.format
    with open(_open(folder, name), "rb", buffering=0) as handle:
        version = fmt.read_magic(handle)
        if version == (1, 0):
            shape, fortran, dtype = fmt.read_array_header_1_0(handle)
        elif version == (2, 0):
            shape, fortran, dtype = fmt.read_array_header_2_0(handle)
        else:
            raise StoreDamaged(f"its {name} is of numpy format {version}")
        if dtype.hasobject:
            raise StoreDamaged(f"its {name} holds Python objects")
        # The map holds the file on its own once made; the handle can close. A shape too
        # big is numpy's ValueError, without its overflow warnings.
        with np.errstate(all="ignore"):
            return np.memmap(handle, dtype, "r", handle.tell(), shape, "F" if fortran else "C")


class VectorStore:
    def __init__(self, directory: Path, fingerprint: str) -> None:
        self.directory = directory
        self.fingerprint = fingerprint
        self.warnings: list[str] = []
        self.generation = 0
        self.dim = 0
        # Whether the store was once brought in step with every memory of the index
        # (`replace_all`); after that, each index batch keeps it so (`note`).
        self.complete = False
        self._ids: Any = None  # numpy arrays of the base, or None when there is none
        self._keys: Any = None
        self._base: Any = None
        # What the journal changed, in order: id -> (key, vector or None); key "" = deleted
        self._overlay: dict[str, tuple[str, Any]] = {}
        self._journal_end = 0
        self._unfolded = 0
        self._broken = False
        for attempt in (1, 2):
            try:
                self._load()
                break
            except FileNotFoundError as exc:  # a writer compacted meanwhile: read anew
                self._overlay, self._journal_end, self._unfolded = {}, 0, 0
                if attempt == 2:
                    self._damaged(f"{exc.filename} is missing")

    # -- reading ----------------------------------------------------------------------

    def _folder(self, *, create: bool) -> beneath.Folder:
        """The store's folder, held by descriptor: `.kenomem/vectors/`, each a real
        folder of the user's own (`beneath.private`; made when missing and `create`)."""
        return beneath.private(self.directory.parent, self.directory.name, create=create)

    def _load(self) -> None:
        try:
            folder = self._folder(create=False)
        except FileNotFoundError:
            return
        with folder:
            self._load_from(folder)

    def _load_from(self, folder: beneath.Folder) -> None:
        try:
            meta = json.loads(_read(folder, META))
        except FileNotFoundError:
            return
        except (OSError, ValueError, StoreDamaged, UnsafePath) as exc:
            self._damaged(f"its {META} cannot be read ({exc})")
            return
        if not isinstance(meta, dict) or meta.get("version") != VERSION:
            self._damaged(f"its {META} is not of this version")
            return
        if meta.get("fingerprint") != self.fingerprint:
            return  # another model: nothing here is of use (the first write clears it)
        try:
            self.generation = int(meta["generation"])
            self.dim = int(meta["dim"])
            self.complete = bool(meta.get("complete", False))
            if meta.get("count", 0):
                self._open_base(folder)
            self._read_journal(folder)
        except FileNotFoundError:
            raise
        except (StoreDamaged, UnsafePath, OSError, ValueError, KeyError, TypeError) as exc:
            self._damaged(str(exc))

    def _open_base(self, folder: beneath.Folder) -> None:
        g = self.generation
        self._base = _mapped(folder, f"base-{g}.npy")
        self._ids = _mapped(folder, f"ids-{g}.npy")
        self._keys = _mapped(folder, f"keys-{g}.npy")
        n = len(self._ids)
        if self._base.shape != (n, self.dim) or len(self._keys) != n:
            raise StoreDamaged("its base files do not agree")

    def _read_journal(self, folder: beneath.Folder) -> None:
        import numpy as np

        try:
            data = _read(folder, f"journal-{self.generation}")
        except FileNotFoundError:
            data = b""
        pos = 0
        while pos + _FRAME.size <= len(data):
            magic, length, crc = _FRAME.unpack_from(data, pos)
            start, end = pos + _FRAME.size, pos + _FRAME.size + length
            if magic != _MAGIC or end > len(data):
                break
            payload = data[start:end]
            if zlib.crc32(payload) != crc:
                break
            head, _, raw = payload.partition(b"\0")
            record = json.loads(head)
            op, mem_id = record["op"], record["id"]
            if op == "del":
                self._overlay[mem_id] = ("", None)
            elif op == "want":
                self._overlay[mem_id] = (record["key"], None)
            elif op == "put":
                vector = np.frombuffer(raw, dtype="<f4")
                self.dim = self.dim or len(vector)  # the first vector of a new store
                if len(vector) != self.dim:
                    raise StoreDamaged("a vector of the journal has another length")
                self._overlay[mem_id] = (record["key"], vector)
            pos = end
            self._unfolded += op != "want"
        self._journal_end = pos  # a torn or foreign tail starts here: writers cut it off

    def _damaged(self, why: str) -> None:
        self.warnings.append(
            f"the vector store in {self.directory} is damaged ({why}): its vectors are made again"
        )
        self.generation, self.dim = 0, 0
        self._ids = self._keys = self._base = None
        self._overlay = {}
        self._journal_end = self._unfolded = 0
        self._broken = True

    def _base_row(self, mem_id: str) -> int | None:
        if self._ids is None or not len(self._ids):
            return None
        import numpy as np

        row = int(np.searchsorted(self._ids, mem_id))
        if row < len(self._ids) and self._ids[row] == mem_id:
            return row
        return None

    def read_all(self) -> None:
        """Read the matrix into this process's memory (it is memory-mapped: read page by
        page when first used). A process forked from this one then has it at once: the
        pages of a file mapping are not handed to a fork, each would be read again."""
        import numpy as np

        if isinstance(self._base, np.memmap):
            self._base = np.array(self._base)

    def key_of(self, mem_id: str) -> str | None:
        """The key of the text the store has (or wants) a vector of; None if it has none."""
        if mem_id in self._overlay:
            key = self._overlay[mem_id][0]
            return key or None
        row = self._base_row(mem_id)
        return None if row is None else str(self._keys[row])

    def known(self) -> dict[str, str]:
        """id -> key of every memory the store knows (with a vector or wanting one)."""
        known: dict[str, str] = {}
        if self._ids is not None:
            known = dict(zip(self._ids.tolist(), self._keys.tolist(), strict=True))
        for mem_id, (key, _) in self._overlay.items():
            if key:
                known[mem_id] = key
            else:
                known.pop(mem_id, None)
        return known

    def pending(self) -> list[tuple[str, str]]:
        """(id, key) of the memories that want a vector."""
        return [(i, key) for i, (key, vec) in self._overlay.items() if key and vec is None]

    def _live_vectors(self) -> Iterator[tuple[str, str, Any]]:
        if self._ids is not None:
            for row, mem_id in enumerate(self._ids.tolist()):
                if mem_id not in self._overlay:
                    yield mem_id, str(self._keys[row]), self._base[row]
        for mem_id, (key, vector) in self._overlay.items():
            if key and vector is not None:
                yield mem_id, key, vector

    def vectors(self, ids: Iterable[str]) -> dict[str, Vectors]:
        """The vector of each of these memories that has one."""
        found: dict[str, Vectors] = {}
        for mem_id in ids:
            if mem_id in self._overlay:
                vector = self._overlay[mem_id][1]
                if vector is not None:
                    found[mem_id] = vector
            else:
                row = self._base_row(mem_id)
                if row is not None and self._base is not None:
                    found[mem_id] = self._base[row]
        return found

    def nearest(
        self, query: Vectors, limit: int, wanted: Iterable[str] = ()
    ) -> tuple[list[tuple[str, float]], float, dict[str, float]]:
        """The `limit` memories whose vectors are nearest the query's, (id, cosine); the
        median cosine of the query with every memory (what an unrelated memory scores
        with this model: a baseline to calibrate against); and the cosine of each
        `wanted` memory that has a vector, near or not."""
        import numpy as np

        if not self.dim or query.shape != (self.dim,):
            return [], 0.0, {}
        scores: list[Any] = []
        names: list[Any] = []
        if self._base is not None and len(self._ids):
            base_scores = np.asarray(self._base @ query, dtype=np.float32)
            if self._overlay:
                dead = [r for r in map(self._base_row, self._overlay) if r is not None]
                base_scores[dead] = -np.inf
            scores.append(base_scores)
            names.append(self._ids)
        extra = [(i, v) for i, (k, v) in self._overlay.items() if k and v is not None]
        if extra:
            scores.append(np.stack([v for _, v in extra]) @ query)
            names.append(np.array([i for i, _ in extra]))
        if not scores:
            return [], 0.0, {}
        every = np.concatenate(scores)
        ids = np.concatenate(names) if len(names) > 1 else names[0]
        finite = np.isfinite(every)
        k = min(limit, int(finite.sum()))
        if k <= 0:
            return [], 0.0, {}
        typical = float(np.median(every[finite]))
        top = np.argpartition(-every, k - 1)[:k]
        top = top[np.argsort(-every[top], kind="stable")]
        of_wanted = {}
        for mem_id in wanted:
            if mem_id in self._overlay:
                _key, vector = self._overlay[mem_id]
                if vector is not None:
                    of_wanted[mem_id] = float(vector @ query)
            else:
                row = self._base_row(mem_id)
                if row is not None:
                    of_wanted[mem_id] = float(every[row])
        return [(str(ids[i]), float(every[i])) for i in top], typical, of_wanted

    # -- writing (the caller holds the vault's lock) -----------------------------------

    def note(self, current: Iterable[tuple[str, str]], gone: Iterable[str]) -> int:
        """Record what an index batch changed: memories whose text is new want a vector,
        deleted ones lose theirs. Returns how many want one."""
        records = []
        for mem_id, key in current:
            if self.key_of(mem_id) != key:
                records.append(({"op": "want", "id": mem_id, "key": key}, b""))
        for mem_id in gone:
            if self.key_of(mem_id) is not None:
                records.append(({"op": "del", "id": mem_id}, b""))
        self._append(records)
        return sum(1 for head, _ in records if head["op"] == "want")

    def put(self, items: Iterable[tuple[str, str, Vectors]]) -> int:
        """Keep these vectors, each for the text of its key, unless the memory has changed
        since (its key is another) or is gone. Returns how many were kept."""
        import numpy as np

        records = []
        for mem_id, key, vector in items:
            known = self.key_of(mem_id)
            if known is not None and known != key:
                continue
            if known is None and mem_id in self._overlay:
                continue  # deleted since
            vec = np.asarray(vector, dtype="<f4")
            if self.dim and vec.shape != (self.dim,):
                raise StoreDamaged(f"a vector of {vec.shape} for a store of {self.dim}")
            self.dim = self.dim or int(vec.shape[0])
            records.append(({"op": "put", "id": mem_id, "key": key}, vec.tobytes()))
        self._append(records)
        return len(records)

    def replace_all(self, current: dict[str, str]) -> int:
        """Bring the store in step with every memory there is (id -> key): after a rebuild
        of the index. Returns how many want a vector."""
        known = self.known()
        gone = [mem_id for mem_id in known if mem_id not in current]
        wanted = self.note(current.items(), gone)
        with self._folder(create=True) as folder:
            self._start_if_needed(folder)
            self.complete = True
            self._write_meta(folder, self._base_count())
        return wanted

    def _append(self, records: list[tuple[dict[str, str], bytes]]) -> None:
        if not records:
            return
        blob = _frames(records)
        with self._folder(create=True) as folder:
            self._start_if_needed(folder)
            name = f"journal-{self.generation}"
            self._cut_torn_tail(folder, name)
            append_bytes(folder.path / name, blob, fsync=False, create=True, folder=folder)
        self._journal_end += len(blob)
        # What a compaction would fold: vectors and deletions. Memories that only want a
        # vector are carried over as they are, so they do not count (else a store filled
        # from empty would be rewritten after nearly every batch).
        self._unfolded += sum(1 for head, _ in records if head["op"] != "want")
        # Read back into the overlay as `_read_journal` would.
        import numpy as np

        for head, raw in records:
            if head["op"] == "del":
                self._overlay[head["id"]] = ("", None)
            elif head["op"] == "want":
                self._overlay[head["id"]] = (head["key"], None)
            else:
                self._overlay[head["id"]] = (head["key"], np.frombuffer(raw, dtype="<f4"))
        if self._unfolded > max(COMPACT_MIN, COMPACT_SHARE * self._base_count()):
            self.compact()

    def _base_count(self) -> int:
        return 0 if self._ids is None else len(self._ids)

    def _cut_torn_tail(self, folder: beneath.Folder, name: str) -> None:
        try:
            fd = beneath.open_in(folder, name, os.O_WRONLY)
        except FileNotFoundError:
            return
        try:
            if os.fstat(fd).st_size > self._journal_end:
                # What a crashed writer left after the last whole record (another writer
                # cannot be appending: we hold the lock).
                os.ftruncate(fd, self._journal_end)
        finally:
            os.close(fd)

    def clear(self) -> None:
        """Drop every vector (the caller holds the lock): for a model whose vectors are
        no longer those the store holds."""
        self._broken = True
        self._overlay = {}
        with self._folder(create=True) as folder:
            self._start_if_needed(folder)

    def _start_if_needed(self, folder: beneath.Folder) -> None:
        """A store for this fingerprint, made empty if the folder holds another's (or
        anything unreadable: a symlink is removed as the link)."""
        try:
            meta = json.loads(_read(folder, META))
            ours = (
                isinstance(meta, dict)
                and meta.get("version") == VERSION
                and meta.get("fingerprint") == self.fingerprint
                and int(meta.get("generation", -1)) == self.generation
                and not self._broken
            )
        except (OSError, ValueError, TypeError, StoreDamaged, UnsafePath):
            ours = False
        if ours:
            return
        for entry in os.scandir(folder.fd):
            if entry.name != META and not entry.is_dir(follow_symlinks=False):
                os.unlink(entry.name, dir_fd=folder.fd)
        self.generation = 1
        self.complete = False
        self._ids = self._keys = self._base = None
        self._journal_end = self._unfolded = 0
        self._broken = False
        self._write_meta(folder, 0)

    def _write_meta(self, folder: beneath.Folder, count: int) -> None:
        meta = {
            "version": VERSION,
            "fingerprint": self.fingerprint,
            "dim": self.dim,
            "generation": self.generation,
            "count": count,
            "complete": self.complete,
        }
        write_bytes(folder.path / META, json.dumps(meta).encode(), fsync=False, folder=folder)

    def compact(self) -> None:
        """Fold the journal into a new base: written beside the old one (with a journal
        of what still wants a vector), then named by a new `meta.json`, so a reader sees
        one generation or the other, whole."""
        with self._folder(create=True) as folder:
            self._compact(folder)

    def _compact(self, folder: beneath.Folder) -> None:
        import numpy as np

        self._start_if_needed(folder)
        live = sorted(self._live_vectors(), key=lambda item: item[0])
        wanting = self.pending()
        g = self.generation + 1
        ids = np.array([i for i, _, _ in live], dtype=str)
        keys = np.array([k for _, k, _ in live], dtype=str)
        matrix = (
            np.stack([v for _, _, v in live]).astype("<f4")
            if live
            else np.zeros((0, self.dim), "<f4")
        )
        for name, array in (("base", matrix), ("ids", ids), ("keys", keys)):
            tmp = f".{name}-{g}.npy.tmp"
            beneath.remove_in(folder, tmp)  # a crashed writer's (or a link: as the link)
            with open(beneath.open_in(folder, tmp, _NEW), "wb") as f:
                np.save(f, array)
            os.replace(tmp, f"{name}-{g}.npy", src_dir_fd=folder.fd, dst_dir_fd=folder.fd)
        wants = [({"op": "want", "id": i, "key": k}, b"") for i, k in wanting]
        blob = _frames(wants)
        write_bytes(folder.path / f"journal-{g}", blob, fsync=False, folder=folder)
        old = self.generation
        self.generation = g
        self._write_meta(folder, len(live))
        for name in (f"base-{old}.npy", f"ids-{old}.npy", f"keys-{old}.npy", f"journal-{old}"):
            try:
                os.unlink(name, dir_fd=folder.fd)
            except FileNotFoundError:
                pass
        self._ids = self._keys = self._base = None
        if live:
            self._open_base(folder)
        self._overlay = {i: (k, None) for i, k in wanting}
        self._journal_end, self._unfolded = len(blob), 0
