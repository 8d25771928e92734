"""The watcher's decisions: which events matter, when a burst is over, what to reindex."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kenomem.files.ignore import matcher
from kenomem.files.paths import MEMORY_DIRS
from kenomem.watch.plan import (
    CONFIG_FILES,
    MAX_PATHS,
    MAX_WAIT_SECONDS,
    QUIET_SECONDS,
    Event,
    Pending,
    Plan,
    add,
    due,
    plan,
    relevant,
    rewatch,
)


def nothing(_path: str) -> bool:
    return False


def everything(_path: str) -> bool:
    return True


# -- relevant() ---------------------------------------------------------------------------

# Plain path segments: no leading dot or '#', no editor suffix.
segment = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_ ", min_size=1, max_size=12).map(
    lambda s: "x" + s.strip()
)
folders = st.lists(segment, max_size=3)
memory_dir = st.sampled_from(MEMORY_DIRS)


def join(*parts: str | list[str]) -> str:
    flat: list[str] = []
    for part in parts:
        flat.extend([part] if isinstance(part, str) else part)
    return "/".join(flat)


@pytest.mark.parametrize("top", MEMORY_DIRS)
@pytest.mark.parametrize("sub", ["", "2026-02/", "a/b/c/"])
def test_markdown_files_in_memory_folders_are_relevant(top: str, sub: str) -> None:
    assert relevant(f"{top}/{sub}note.md", False, nothing)


@given(top=memory_dir, sub=folders, name=segment)
def test_any_markdown_file_in_a_memory_folder_is_relevant(
    top: str, sub: list[str], name: str
) -> None:
    assert relevant(join(top, sub, name + ".md"), False, nothing)


@pytest.mark.parametrize("name", CONFIG_FILES)
def test_the_config_files_are_relevant(name: str) -> None:
    assert relevant(name, False, nothing)
    assert relevant(name, False, everything)  # the rules themselves are never ignored


@pytest.mark.parametrize(
    "path",
    [
        ".kenomem/state/meta.bin",
        ".kenomem/index/MAIN_1.toc",
        ".kenomem/watcher",
        ".kenomem",
        ".git/index",
        ".git/objects/ab/cdef",
        ".git",
    ],
)
def test_state_and_git_folders_are_ignored(path: str) -> None:
    assert not relevant(path, False, nothing)
    assert not relevant(path, True, nothing)


@given(top=st.sampled_from([".kenomem", ".git"]), rest=folders, name=segment)
def test_nothing_under_the_state_or_git_folder_is_relevant(
    top: str, rest: list[str], name: str
) -> None:
    for path in (join(top, rest, name + ".md"), join(top, "semantic", rest, name + ".md")):
        assert not relevant(path, False, nothing)
        assert not relevant(path, True, nothing)


@pytest.mark.parametrize(
    "path",
    [
        "semantic/.hidden.md",
        "semantic/.drafts/note.md",
        "episodic/2026/.cache/note.md",
        ".hidden/note.md",
        "semantic/.note.md.swp",
    ],
)
def test_hidden_files_and_folders_are_ignored(path: str) -> None:
    assert not relevant(path, False, nothing)


@given(top=memory_dir, before=folders, hidden=segment, after=folders, name=segment)
def test_anything_below_a_hidden_folder_is_ignored(
    top: str, before: list[str], hidden: str, after: list[str], name: str
) -> None:
    path = join(top, before, "." + hidden, after, name + ".md")
    assert not relevant(path, False, nothing)


@pytest.mark.parametrize(
    "name",
    [
        ".note.md.swp",  # vim's swap files
        ".note.md.swx",
        "note.md.swp",
        "note.md.swx",
        "note.md~",  # vim's and emacs's backups
        ".#note.md",  # emacs's lock
        "#note.md#",  # emacs's auto-save
        "4913",  # vim's probe of a writable folder
        "note.md.tmp",
        "note.tmp",
    ],
)
@pytest.mark.parametrize("top", ["semantic", "episodic/2026-02"])
def test_editor_swap_backup_and_probe_files_are_ignored(top: str, name: str) -> None:
    assert not relevant(f"{top}/{name}", False, nothing)


@given(top=memory_dir, sub=folders, name=segment, suffix=st.sampled_from([".swp", ".swx", "~"]))
def test_editor_companions_of_a_markdown_file_are_ignored(
    top: str, sub: list[str], name: str, suffix: str
) -> None:
    assert not relevant(join(top, sub, name + ".md" + suffix), False, nothing)


@pytest.mark.parametrize(
    "path",
    ["semantic/note.txt", "semantic/note.markdown", "semantic/image.png", "semantic/note"],
)
def test_files_that_are_not_markdown_are_ignored(path: str) -> None:
    assert not relevant(path, False, nothing)


@pytest.mark.parametrize(
    "path",
    [
        "README.md",
        "foundation.md",
        "notes/idea.md",
        "buffer/2026-02-13.md",
        "semantics/note.md",
        "sub/semantic/note.md",
    ],
)
def test_files_outside_the_memory_folders_are_ignored(path: str) -> None:
    assert not relevant(path, False, nothing)


@given(top=segment.filter(lambda s: s not in MEMORY_DIRS), sub=folders, name=segment)
def test_no_file_outside_the_memory_folders_is_relevant(
    top: str, sub: list[str], name: str
) -> None:
    assert not relevant(join(top, sub, name + ".md"), False, nothing)
    assert not relevant(join(top, sub), True, nothing)


def test_gitignored_files_are_ignored() -> None:
    ignored = matcher("semantic/drafts/\n*.private.md")
    assert not relevant("semantic/drafts/idea.md", False, ignored)
    assert not relevant("episodic/diary.private.md", False, ignored)
    assert relevant("semantic/idea.md", False, ignored)
    assert relevant("episodic/diary.md", False, ignored)


def test_the_matcher_is_asked_about_the_vault_relative_path() -> None:
    asked: list[str] = []

    def ignored(path: str) -> bool:
        asked.append(path)
        return path == "semantic/secret.md"

    assert not relevant("semantic/secret.md", False, ignored)
    assert relevant("semantic/open.md", False, ignored)
    assert asked == ["semantic/secret.md", "semantic/open.md"]


def test_the_vault_itself_and_memory_folders() -> None:
    assert not relevant("", True, nothing)
    for top in MEMORY_DIRS:
        assert relevant(top, True, nothing)
        assert relevant(f"{top}/2026-02", True, nothing)
    assert not relevant("buffer", True, nothing)
    assert not relevant("semantic/.git", True, nothing)


# -- add() --------------------------------------------------------------------------------


def test_nothing_relevant_keeps_nothing_pending() -> None:
    events = [
        Event("modified", ".kenomem/watcher"),
        Event("created", "semantic/.note.md.swp"),
        Event("created", "semantic/4913"),
        Event("deleted", "semantic/4913"),
        Event("modified", "README.md"),
        Event("modified", "semantic", is_dir=True),
    ]
    assert add(None, events, 10.0, nothing) is None
    assert add(None, [], 10.0, nothing) is None


def test_file_events_are_folded_into_paths() -> None:
    events = [
        Event("created", "semantic/a.md"),
        Event("modified", "semantic/a.md"),
        Event("closed", "semantic/a.md"),
        Event("deleted", "episodic/b.md"),
        Event("moved", "semantic/c.md", dest="archive/c.md"),
    ]
    pending = add(None, events, 5.0, nothing)
    assert pending == Pending(
        frozenset({"semantic/a.md", "episodic/b.md", "semantic/c.md", "archive/c.md"}),
        False,
        5.0,
        5.0,
    )


def test_a_move_keeps_only_the_relevant_side() -> None:
    # vim: the new content is written to a temporary name and renamed over the file
    into = add(None, [Event("moved", "semantic/note.md.tmp", dest="semantic/note.md")], 1, nothing)
    assert into is not None
    assert into.paths == {"semantic/note.md"}
    # emacs: the file is renamed to its backup before the new one is written
    away = add(None, [Event("moved", "semantic/note.md", dest="semantic/note.md~")], 1, nothing)
    assert away is not None
    assert away.paths == {"semantic/note.md"}
    # a memory moved out of the memory folders is gone from the vault's point of view
    out = add(None, [Event("moved", "semantic/note.md", dest="trash/note.md")], 1, nothing)
    assert out is not None
    assert out.paths == {"semantic/note.md"}


def test_folder_modified_events_are_ignored() -> None:
    events = [Event("modified", "semantic", True), Event("closed", "episodic/2026", True)]
    assert add(None, events, 1.0, nothing) is None
    pending = add(None, [Event("modified", "semantic/a.md")], 1.0, nothing)
    assert add(pending, [Event("modified", "semantic", True)], 1.0, nothing) == pending


@pytest.mark.parametrize(
    "event",
    [
        Event("created", "semantic/project", True),
        Event("deleted", "episodic/2026-01", True),
        Event("moved", "semantic/project", True, "archive/project"),
        Event("moved", "buffer/project", True, "semantic/project"),  # moved into the vault
        Event("moved", "semantic/project", True, "elsewhere/project"),  # moved out
        Event("modified", "kenomem.toml"),
        Event("created", ".gitignore"),
        Event("deleted", ".gitignore"),
        Event("moved", ".gitignore.tmp", dest=".gitignore"),
    ],
)
def test_folder_changes_and_config_changes_need_a_full_sync(event: Event) -> None:
    pending = add(None, [event], 3.0, nothing)
    assert pending is not None
    assert pending.full
    assert plan(pending) == Plan(True, ())


def test_a_full_sync_stays_full_and_keeps_paths() -> None:
    pending = add(None, [Event("modified", "semantic/a.md")], 1.0, nothing)
    pending = add(pending, [Event("created", "episodic/x", True)], 2.0, nothing)
    pending = add(pending, [Event("modified", "semantic/b.md")], 3.0, nothing)
    assert pending is not None
    assert pending.full
    assert pending.paths == {"semantic/a.md", "semantic/b.md"}


def test_first_and_last_times_are_kept() -> None:
    pending = add(None, [Event("modified", "semantic/a.md")], 1.0, nothing)
    pending = add(pending, [], 1.5, nothing)  # a quiet tick changes nothing
    assert pending == Pending(frozenset({"semantic/a.md"}), False, 1.0, 1.0)
    pending = add(pending, [Event("modified", "semantic/a.md")], 2.0, nothing)
    pending = add(pending, [Event("modified", "semantic/b.md")], 3.0, nothing)
    assert pending == Pending(frozenset({"semantic/a.md", "semantic/b.md"}), False, 1.0, 3.0)


def test_irrelevant_events_do_not_extend_the_quiet_period() -> None:
    """The watcher's own heartbeat and state writes, a swap file, .git: none of them is a
    change to wait for, so none of them may postpone the batch of real changes."""
    pending = add(None, [Event("modified", "semantic/a.md")], 1.0, nothing)
    later = add(
        pending,
        [
            Event("moved", ".kenomem/.watcher.1.tmp", dest=".kenomem/watcher"),
            Event("modified", "semantic/.a.md.swp"),
            Event("modified", ".git/index"),
            Event("modified", "semantic", True),
        ],
        1.2,
        nothing,
    )
    assert later == pending
    assert later is not None
    assert due(later, 1.0 + QUIET_SECONDS)


@settings(max_examples=50, deadline=None)
@given(
    batches=st.lists(
        st.lists(
            st.tuples(
                st.sampled_from(["created", "modified", "deleted"]),
                memory_dir,
                st.integers(0, 20),
            ),
            max_size=5,
        ),
        min_size=1,
        max_size=8,
    )
)
def test_folding_file_events_collects_every_path_once(
    batches: list[list[tuple[str, str, int]]],
) -> None:
    pending: Pending | None = None
    expected: set[str] = set()
    first = last = None
    for step, batch in enumerate(batches):
        events = [Event(kind, f"{top}/n{n}.md") for kind, top, n in batch]
        expected.update(event.path for event in events)
        pending = add(pending, events, float(step), nothing)
        if events:
            first = float(step) if first is None else first
            last = float(step)
    if not expected:
        assert pending is None
        return
    assert pending is not None
    assert pending.paths == expected
    assert not pending.full
    assert (pending.first, pending.last) == (first, last)
    assert plan(pending) == Plan(False, tuple(sorted(expected)))


# -- due() --------------------------------------------------------------------------------


def test_nothing_pending_is_never_due() -> None:
    assert not due(None, 0.0)
    assert not due(None, 1e9)


def test_due_after_the_quiet_period() -> None:
    pending = Pending(frozenset({"semantic/a.md"}), False, 10.0, 10.0)
    assert not due(pending, 10.0)
    assert not due(pending, 10.0 + QUIET_SECONDS / 2)
    assert due(pending, 10.0 + QUIET_SECONDS)
    assert due(pending, 10.0 + QUIET_SECONDS * 4)


def test_a_steady_stream_is_applied_after_the_max_wait() -> None:
    step = QUIET_SECONDS / 3
    now = 0.0
    pending = add(None, [Event("modified", "semantic/a.md")], now, nothing)
    applied_at = None
    while now < MAX_WAIT_SECONDS * 3:
        now += step
        pending = add(pending, [Event("modified", "semantic/a.md")], now, nothing)
        if due(pending, now):
            applied_at = now
            break
    assert applied_at is not None
    assert MAX_WAIT_SECONDS <= applied_at < MAX_WAIT_SECONDS + step + 1e-9


@settings(max_examples=100, deadline=None)
@given(
    gaps=st.lists(
        st.floats(min_value=0.001, max_value=QUIET_SECONDS * 0.99), min_size=1, max_size=60
    ),
    tick=st.floats(min_value=0.01, max_value=0.1),
)
def test_a_burst_is_applied_at_most_one_tick_after_it_ends_or_the_max_wait(
    gaps: list[float], tick: float
) -> None:
    """Events closer together than the quiet period keep the burst open, up to the max
    wait; after the last of them, the burst is applied within one quiet period."""
    times = [0.0]
    for gap in gaps:
        times.append(times[-1] + gap)
    pending: Pending | None = None
    now = 0.0
    index = 0
    applied_at = None
    while applied_at is None and now < times[-1] + QUIET_SECONDS + MAX_WAIT_SECONDS + 1:
        arrived = []
        while index < len(times) and times[index] <= now:
            arrived.append(Event("modified", f"semantic/n{index}.md"))
            index += 1
        pending = add(pending, arrived, now, nothing)
        if due(pending, now):
            applied_at = now
        now += tick
    assert applied_at is not None
    assert pending is not None
    # never before the burst went quiet or the max wait passed
    assert applied_at - pending.last >= QUIET_SECONDS or applied_at - pending.first >= (
        MAX_WAIT_SECONDS
    )
    # and no later than one tick past whichever came first
    limit = min(pending.last + QUIET_SECONDS, pending.first + MAX_WAIT_SECONDS)
    assert applied_at <= limit + tick + 1e-9


# -- plan() -------------------------------------------------------------------------------


def test_a_few_paths_are_synced_by_themselves_in_order() -> None:
    pending = Pending(frozenset({"semantic/b.md", "episodic/a.md", "archive/c.md"}), False, 0, 0)
    assert plan(pending) == Plan(False, ("archive/c.md", "episodic/a.md", "semantic/b.md"))


@settings(max_examples=30, deadline=None)
@given(count=st.integers(min_value=1, max_value=MAX_PATHS * 2))
def test_past_max_paths_a_full_sync_is_planned(count: int) -> None:
    paths = frozenset(f"semantic/n{i:05d}.md" for i in range(count))
    result = plan(Pending(paths, False, 0.0, 0.0))
    if count > MAX_PATHS:
        assert result == Plan(True, ())
    else:
        assert result == Plan(False, tuple(sorted(paths)))


def test_max_paths_boundary() -> None:
    at = frozenset(f"semantic/n{i}.md" for i in range(MAX_PATHS))
    assert not plan(Pending(at, False, 0, 0)).full
    past = at | {"semantic/one-more.md"}
    assert plan(Pending(past, False, 0, 0)).full


def test_a_full_pending_plans_a_full_sync_whatever_the_paths() -> None:
    assert plan(Pending(frozenset({"semantic/a.md"}), True, 0, 0)) == Plan(True, ())
    assert plan(Pending(frozenset(), True, 0, 0)) == Plan(True, ())


# -- matters(): what the observer keeps at all ----------------------------------------


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        (Event("modified", "semantic/a.md"), True),
        (Event("moved", "semantic/a.md.tmp", dest="semantic/a.md"), True),
        (Event("moved", "semantic/a.md", dest="semantic/a.md~"), True),
        (Event("created", "episodic/2026", True), True),
        (Event("modified", "kenomem.toml"), True),
        (Event("modified", "semantic", True), False),
        (Event("modified", ".kenomem/watcher"), False),
        (Event("moved", ".kenomem/.watcher.1.tmp", dest=".kenomem/watcher"), False),
        (Event("created", "semantic/.a.md.swp"), False),
        (Event("created", "semantic/4913"), False),
        (Event("modified", "README.md"), False),
    ],
)
def test_matters_keeps_exactly_the_events_that_can_change_memories(
    event: Event, expected: bool
) -> None:
    from kenomem.watch import plan as watchplan

    assert watchplan.matters(event, nothing) is expected
    # and add() agrees: an event that does not matter leaves nothing pending
    assert (add(None, [event], 1.0, nothing) is not None) is expected


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        (Event("created", "archive", is_dir=True), True),
        (Event("deleted", "semantic", is_dir=True), True),
        (Event("moved", "old", is_dir=True, dest="episodic"), True),
        (Event("created", "semantic/sub", is_dir=True), False),
        (Event("created", "semantic.md"), False),
        (Event("modified", "notes", is_dir=True), False),
    ],
)
def test_rewatch_when_a_memory_folder_itself_comes_or_goes(event: Event, expected: bool) -> None:
    assert rewatch([event]) is expected


def test_own_writes_are_dropped_but_never_deletions_or_folders() -> None:
    from kenomem.watch.plan import Event, without_own_writes

    batch = [
        Event("modified", "semantic/a.md"),
        Event("moved", "semantic/.tmp1", dest="semantic/a.md"),
        Event("created", "semantic/b.md"),
        Event("deleted", "semantic/a.md"),
        Event("created", "semantic/a.md", is_dir=True),
    ]
    kept = without_own_writes(batch, lambda path: path == "semantic/a.md")
    assert kept == batch[2:]
    assert without_own_writes(batch, lambda path: False) == batch
