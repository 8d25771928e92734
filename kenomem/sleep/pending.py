"""What a run of the sleep cycle has written and not indexed yet.

Each day's memories are indexed once, at the end of the run (`Pending.flush`): a Whoosh
commit costs far more than the few documents it adds. Until then `Pending` stands in for
the index where a later day needs what an earlier one wrote: the words novelty is judged
against, the ids already created, the paths of the memories to reinforce or supersede.
"""

from __future__ import annotations

from kenomem.files import store
from kenomem.files.memory import Memory
from kenomem.vault.core import CoreVault


class Pending:
    """Memories this run created or rewrote that the index does not have yet."""

    def __init__(self) -> None:
        self.new: dict[str, tuple[Memory, store.Written]] = {}  # id -> (memory, file)
        self.touched: dict[str, None] = {}  # paths rewritten (reinforced, superseded)
        self.terms: set[str] = set()  # the analysed words of the new memories

    @property
    def paths(self) -> dict[str, str]:
        """id -> path of the memories created."""
        return {mem_id: written.path for mem_id, (_, written) in self.new.items()}

    def add(self, vault: CoreVault, mem: Memory, written: store.Written) -> None:
        self.new[mem.id] = (mem, written)
        # What the index holds of it: title and body, by the same analyser (in one call:
        # no word runs across the line between them).
        self.terms.update(vault.engine.analyze(f"{mem.title}\n{mem.body}"))

    def flush(self, vault: CoreVault) -> None:
        """Index everything pending, in two batches: the new files from the memories
        written (not read back), then the files rewritten since, read again."""
        if not self.new and not self.touched:
            return
        with vault.lock:
            # The state as saved now (no paths: nothing is scanned or read): another
            # process may have saved it since this one loaded it, and what this one saves
            # must not undo that. Rebuilt, the index has read every file already.
            if not vault.sync_paths([]).rebuilt:
                vault.index_new_many(
                    [(mem, w) for mem, w in self.new.values() if w.path not in self.touched]
                )
                if self.touched:
                    vault.refresh(list(self.touched))
        self.new, self.touched, self.terms = {}, {}, set()
