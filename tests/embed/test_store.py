"""The vector store: what it holds always agrees with the operations made on it, across
reopenings, compactions, torn journals and damaged files."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

np = pytest.importorskip("numpy")

from kenomem.embed import store as store_mod  # noqa: E402
from kenomem.embed.store import VectorStore  # noqa: E402

DIM = 4


def vec(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def test_a_vector_put_is_found_and_kept_across_openings(tmp_path: Path) -> None:
    s = VectorStore(tmp_path / "v", "fp")
    s.note([("a", "k1"), ("b", "k2")], [])
    assert sorted(s.pending()) == [("a", "k1"), ("b", "k2")]
    s.put([("a", "k1", vec(1)), ("b", "k2", vec(2))])
    again = VectorStore(tmp_path / "v", "fp")
    assert again.pending() == []
    assert again.nearest(vec(1), 1)[0][0][0] == "a"
    assert again.known() == {"a": "k1", "b": "k2"}


def test_an_edit_wants_a_new_vector_a_touch_does_not(tmp_path: Path) -> None:
    s = VectorStore(tmp_path / "v", "fp")
    s.put([("a", "k1", vec(1))])
    assert s.note([("a", "k1")], []) == 0  # the same text: nothing to make
    assert s.note([("a", "k2")], []) == 1
    assert VectorStore(tmp_path / "v", "fp").pending() == [("a", "k2")]
    assert VectorStore(tmp_path / "v", "fp").nearest(vec(1), 5)[0] == []  # the old vector is gone


def test_a_stale_vector_is_not_kept(tmp_path: Path) -> None:
    s = VectorStore(tmp_path / "v", "fp")
    s.note([("a", "k2")], [])
    assert s.put([("a", "k1", vec(1))]) == 0  # made from the text before the edit
    s.note([], ["b"])
    s.note([("b", "k3")], [])
    s.note([], ["b"])
    assert s.put([("b", "k3", vec(3))]) == 0  # deleted since
    assert VectorStore(tmp_path / "v", "fp").known() == {"a": "k2"}


def test_another_model_starts_again(tmp_path: Path) -> None:
    VectorStore(tmp_path / "v", "one").put([("a", "k1", vec(1))])
    other = VectorStore(tmp_path / "v", "two")
    assert other.known() == {} and other.nearest(vec(1), 5)[0] == []
    other.put([("a", "k1", vec(2))])
    assert VectorStore(tmp_path / "v", "two").nearest(vec(2), 1)[0][0][0] == "a"
    assert VectorStore(tmp_path / "v", "one").known() == {}  # its vectors were dropped


def test_a_torn_journal_loses_only_its_last_record(tmp_path: Path) -> None:
    s = VectorStore(tmp_path / "v", "fp")
    s.put([("a", "k1", vec(1)), ("b", "k2", vec(2))])
    journal = next((tmp_path / "v").glob("journal-*"))
    journal.write_bytes(journal.read_bytes()[:-7])  # a crash mid-append
    torn = VectorStore(tmp_path / "v", "fp")
    assert torn.known() == {"a": "k1"} and not torn.warnings
    torn.put([("c", "k3", vec(3))])  # the torn tail is cut, not run on from
    assert VectorStore(tmp_path / "v", "fp").known() == {"a": "k1", "c": "k3"}


def test_a_damaged_store_is_emptied_with_a_warning(tmp_path: Path) -> None:
    s = VectorStore(tmp_path / "v", "fp")
    s.put([("a", "k1", vec(1))])
    s.compact()
    next((tmp_path / "v").glob("base-*.npy")).write_bytes(b"not numpy")
    damaged = VectorStore(tmp_path / "v", "fp")
    assert damaged.known() == {} and "damaged" in damaged.warnings[0]
    damaged.put([("a", "k1", vec(1))])
    assert VectorStore(tmp_path / "v", "fp").known() == {"a": "k1"}


def test_replace_all_makes_the_store_complete(tmp_path: Path) -> None:
    s = VectorStore(tmp_path / "v", "fp")
    s.put([("gone", "k0", vec(0))])
    assert not s.complete
    assert s.replace_all({"a": "k1", "b": "k2"}) == 2
    again = VectorStore(tmp_path / "v", "fp")
    assert again.complete and "gone" not in again.known()


# -- the store against a model of it --------------------------------------------------------

ids = st.sampled_from(["a", "b", "c", "d", "e"])
keys = st.sampled_from(["k1", "k2", "k3"])
ops = st.lists(
    st.one_of(
        st.tuples(st.just("note"), ids, keys),
        st.tuples(st.just("put"), ids, keys, st.integers(0, 50)),
        st.tuples(st.just("del"), ids),
        st.tuples(st.just("compact")),
        st.tuples(st.just("reopen")),
    ),
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(ops=ops)
def test_the_store_agrees_with_a_model_of_it(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple]
) -> None:
    folder = tmp_path_factory.mktemp("store") / "v"
    s = VectorStore(folder, "fp")
    known: dict[str, str] = {}  # id -> key of its text
    vectors: dict[str, int] = {}  # id -> seed of its vector, if it has one
    deleted: set[str] = set()  # tombstones, until a compaction folds them away
    for op in ops:
        if op[0] == "note":
            _, i, k = op
            s.note([(i, k)], [])
            if known.get(i) != k:
                known[i] = k
                vectors.pop(i, None)
            deleted.discard(i)
        elif op[0] == "put":
            _, i, k, seed = op
            s.put([(i, k, vec(seed))])
            if known.get(i, k) == k and i not in deleted:
                known[i] = k
                vectors[i] = seed
        elif op[0] == "del":
            _, i = op
            s.note([], [i])
            if i in known:
                deleted.add(i)
            known.pop(i, None)
            vectors.pop(i, None)
        elif op[0] == "compact":
            s.compact()
            deleted.clear()
        else:
            s = VectorStore(folder, "fp")
        assert s.known() == known
        assert sorted(s.pending()) == sorted((i, k) for i, k in known.items() if i not in vectors)
        for i, seed in vectors.items():
            found = dict(s.nearest(vec(seed), 10)[0])
            assert found.get(i, 0) == pytest.approx(1.0, abs=1e-5)


def test_the_journal_is_folded_once_long(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_mod, "COMPACT_MIN", 3)
    s = VectorStore(tmp_path / "v", "fp")
    for n in range(10):
        s.put([(f"m{n}", "k", vec(n))])
    assert s.generation > 1
    again = VectorStore(tmp_path / "v", "fp")
    assert len(again.known()) == 10
    assert again.nearest(vec(7), 1)[0][0][0] == "m7"
    assert len(list((tmp_path / "v").glob("base-*.npy"))) == 1  # the old ones are gone
