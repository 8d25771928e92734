"""The two index engines: the same terms, the same scores, the same answers.

The tolerance, for the same documents on Whoosh and on tantivy:
- the analysed terms are identical (tantivy is fed the terms Whoosh's analyser makes);
- a hit's score differs by at most 5% (both keep a field's length in one lossy byte,
  encoded differently; the idf and the BM25 shape are made equal);
- in `recall`'s top 10 of a generated vault, at least 8 of 10 memories are the same for
  every query, and the first hit is the same for at least 90% of the queries;
- browse orders are the same, ties included, on a freshly built index; after updates and
  merges, ties may come in another order.
"""

from __future__ import annotations

import os
import random
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kenomem.errors import ConfigError, IndexCorrupt, LockTimeout
from kenomem.index import Boosts, Doc, Engine, Filters, SyncBatch, open_engine, stemming
from kenomem.recall.search import RecallRequest, recall
from kenomem.vault.core import CoreVault
from tests.conftest import set_engine, write
from tests.helpers import project_prose

tantivy = pytest.importorskip("tantivy")

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
T0 = NOW.timestamp()
both_engines = pytest.mark.both_engines


def doc(n: int, title: str, body: str, **keys: object) -> Doc:
    values: dict[str, object] = {
        "id": f"mem_{n:04d}",
        "path": f"semantic/{n:04d}.md",
        "type": "semantic",
        "status": "active",
        "scope": "global",
        "title": title,
        "tags": (),
        "body": body,
        "created": T0 - n * 3600,
        "time": T0 - n * 3600,
        "last_accessed": T0 - n * 60,
        "updated": T0,
        "access_count": n,
        "reinforced": 0,
        "importance": 5,
        "pinned": False,
        "preview": body[:40],
        "digest": f"d{n}",
    }
    values.update(keys)
    return Doc(**values)  # type: ignore[arg-type]


DOCS = [
    doc(1, "Garden", "Water the tomato bed daily", tags=("home", "Garden-Work")),
    doc(2, "Tomato varieties", "# Tomato varieties\n\ncherry and plum tomatoes", importance=9),
    doc(3, "Deploy steps", "Run terraform apply after review", type="procedural", tags=("work",)),
    doc(4, "Old deploy", "terraform plan was used", status="archived", tags=("work",)),
    doc(5, "Chat note", "the kettle is descaled", scope="chat:tg-1", importance=2),
    doc(6, "alice|city", "Alice lives in Lisbon", factkey="alice|city", pinned=True),
    doc(7, "A memory with", "A memory with a title from its body, about tomatoes", importance=9),
]


@pytest.fixture
def engine(tmp_path: Path, engine_name: str) -> Engine:
    made = open_engine(engine_name, tmp_path / "index", lock_timeout=2.0)
    made.rebuild(iter(DOCS))
    return made


def found(engine: Engine, text: str = "", **filters: object) -> list[str]:
    wanted = Filters(**filters)  # type: ignore[arg-type]
    if text:
        return sorted(h.doc.id[4:] for h in engine.search(text, wanted, Boosts(), 50).hits)
    return sorted(h.doc.id[4:] for h in engine.browse(wanted, "created", True, None).hits)


# -- the same terms ----------------------------------------------------------------------


def whoosh_terms(text: str) -> list[str]:
    from kenomem.index.whoosh_schema import schema as _schema

    return [token.text for token in _schema()["body"].analyzer(text)]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("abcXYZéİßﬁ_*.-' 09\n\tthe"), max_size=60))
def test_the_tantivy_terms_are_whooshs_terms(text: str) -> None:
    assert stemming.analyze(text) == whoosh_terms(text)


def test_the_tantivy_terms_are_whooshs_terms_on_real_text() -> None:
    text = project_prose()
    assert stemming.analyze(text) == whoosh_terms(text)
    assert stemming.joined(text).split() == whoosh_terms(text)


def test_term_offsets_are_whooshs(tmp_path: Path) -> None:
    whoosh = open_engine("whoosh", tmp_path / "index")
    whoosh.rebuild(iter(DOCS[:1]))
    text = project_prose()[:20000]
    wanted = stemming.analyze("the index engine recalls memories quickly, e.g. kenomem.toml")
    assert stemming.term_offsets(text, wanted) == whoosh.term_offsets(text, wanted)


# -- the same behaviour, on each engine ---------------------------------------------------


@both_engines
def test_stored_fields_come_back_without_the_body(engine: Engine) -> None:
    got = engine.lookup(["mem_0001", "mem_0006", "mem_9999"])
    assert set(got) == {"mem_0001", "mem_0006"}
    assert got["mem_0001"] == DOCS[0]._replace(body="")
    assert got["mem_0006"] == DOCS[5]._replace(body="")
    assert engine.count() == len(DOCS)
    assert engine.size_bytes() > 0


@both_engines
def test_filters(engine: Engine) -> None:
    assert found(engine, "tomato") == ["0001", "0002", "0007"]
    assert found(engine, "terraform") == ["0003"]
    assert found(engine, "terraform", statuses=("active", "archived")) == ["0003", "0004"]
    assert found(engine, statuses=()) == ["0001", "0002", "0003", "0004", "0005", "0006", "0007"]
    assert found(engine, types=("procedural",)) == ["0003"]
    assert found(engine, tags=("work",), statuses=()) == ["0003", "0004"]
    assert found(engine, tags=("WORK", "garden-work")) == []
    assert found(engine, tags=("home", "garden-work")) == ["0001"]
    assert found(engine, scopes=("chat:tg-1",)) == ["0005"]
    assert found(engine, ids=("mem_0002", "mem_0005")) == ["0002", "0005"]
    assert found(engine, factkeys=("alice|city",)) == ["0006"]
    # since and until bound `time`, both ends included
    assert found(engine, since=T0 - 3 * 3600) == ["0001", "0002", "0003"]
    assert found(engine, until=T0 - 5 * 3600) == ["0005", "0006", "0007"]
    assert found(engine, "tomato", since=T0 - 2 * 3600, until=T0 - 2 * 3600) == ["0002"]


@both_engines
def test_fields_and_boosts(engine: Engine) -> None:
    def top(text: str, boosts: Boosts) -> list[str]:
        return [h.doc.id[4:] for h in engine.search(text, Filters(), boosts, 10).hits]

    assert top("garden", Boosts()) == ["0001"]  # the title and a tag
    assert top("garden", Boosts(title=0, tags=0)) == []
    assert top("home", Boosts(tags=0)) == []
    # A title is searched apart from the body when a person wrote it (a heading counts),
    # not when it repeats the body's first words.
    assert top("varieties", Boosts(body=0, tags=0)) == ["0002"]
    assert top("memory", Boosts(body=0, tags=0)) == []
    assert top("memory", Boosts()) == ["0007"]
    result = engine.search("the tomatoes", Filters(), Boosts(), 10)
    assert result.terms == ("tomato",)
    assert engine.search("the of and", Filters(), Boosts(), 10).hits == []


@both_engines
@pytest.mark.parametrize("sort", ["created", "time", "importance", "last_accessed", "title"])
def test_browse_sorts(engine: Engine, sort: str) -> None:
    every = Filters(statuses=())
    for reverse in (True, False):
        result = engine.browse(every, sort, reverse, None)
        keys = [getattr(hit.doc, sort) for hit in result.hits]
        assert keys == sorted(keys, reverse=reverse)
        assert result.total == len(DOCS)
    first = engine.browse(Filters(), sort, True, 2)
    assert len(first.hits) == 2
    assert first.total == 6  # every match, not only those returned


@both_engines
def test_known_terms_and_near(engine: Engine) -> None:
    terms = stemming.analyze("kettle lisbon tomato zeppelin")
    assert engine.known_terms(terms) == {"kettl", "lisbon", "tomato"}
    assert engine.known_terms(terms, ignore=["mem_0005", "mem_9999"]) == {"lisbon", "tomato"}
    near = engine.near("the kettle is descaled today", Filters(), 0.6, 10)
    assert [h.doc.id for h in near.hits] == ["mem_0005"]
    assert near.terms == ("kettl", "descal", "todai")


@both_engines
def test_apply_adds_replaces_and_deletes(engine: Engine) -> None:
    batch = SyncBatch()
    batch.upserts.append(DOCS[0]._replace(body="a zeppelin now", title="Zeppelin"))
    batch.upserts.append(doc(8, "New", "another zeppelin"))
    batch.deletes.append("mem_0003")
    engine.apply(batch)
    assert found(engine, "zeppelin") == ["0001", "0008"]
    assert found(engine, "tomato") == ["0002", "0007"]
    assert found(engine, "terraform", statuses=()) == ["0004"]
    assert engine.count() == len(DOCS)


# -- the same scores and ranking ----------------------------------------------------------


def generated_docs(count: int, seed: int = 7) -> list[Doc]:
    rng = random.Random(seed)
    words = project_prose().split()
    out = []
    for n in range(count):
        body = " ".join(rng.choice(words) for _ in range(rng.randint(5, 120)))
        title = " ".join(rng.choice(words) for _ in range(3)) if rng.random() < 0.5 else body
        tags = tuple(rng.sample(["work", "home", "travel", "music", "food"], rng.randint(0, 2)))
        out.append(doc(n, title[:60], body, tags=tags, importance=rng.randint(1, 10)))
    return out


def test_scores_are_the_same_on_both_engines(tmp_path: Path) -> None:
    docs = generated_docs(400)
    whoosh = open_engine("whoosh", tmp_path / "index")
    fast = open_engine("tantivy", tmp_path / "index")
    whoosh.rebuild(iter(docs))
    fast.rebuild(iter(docs))
    rng = random.Random(3)
    words = [w for d in docs[:40] for w in stemming.analyze(d.body)]
    for _ in range(40):
        query = " ".join(rng.sample(words, 3))
        a = {h.doc.id: h.score for h in whoosh.search(query, Filters(), Boosts(), 10).hits}
        b = {h.doc.id: h.score for h in fast.search(query, Filters(), Boosts(), 10).hits}
        # Nearly the same ten (or all, for a query that few documents match).
        assert len(a.keys() & b.keys()) >= min(8, max(len(a), len(b))), query
        for mem_id in a.keys() & b.keys():
            assert b[mem_id] == pytest.approx(a[mem_id], rel=0.05), query


YAML_WORDS = {"yes", "no", "true", "false", "null", "on", "off", "y", "n"}


def test_browse_orders_are_the_same_on_both_engines(tmp_path: Path) -> None:
    docs = generated_docs(300)
    engines = [open_engine(name, tmp_path / "index") for name in ("whoosh", "tantivy")]
    for engine in engines:
        engine.rebuild(iter(docs))
    for sort in ("created", "importance", "title"):  # importance: many ties
        for reverse in (True, False):
            a, b = (
                [h.doc.id for h in e.browse(Filters(), sort, reverse, None).hits] for e in engines
            )
            assert a == b, (sort, reverse)


def write_generated_vault(vault_dir: Path, count: int) -> None:
    rng = random.Random(11)
    words = project_prose().lower().split()
    words = [w.strip(".,:;`()[]*#\"'") for w in words]
    words = [w for w in words if w.isalpha() and w not in YAML_WORDS]
    for n in range(count):
        created = NOW - timedelta(hours=rng.randint(1, 24 * 400))
        body = " ".join(rng.choice(words) for _ in range(rng.randint(8, 150)))
        title = " ".join(rng.choice(words) for _ in range(rng.randint(2, 5)))
        tags = ", ".join(rng.sample(["work", "home", "travel", "music"], rng.randint(0, 2)))
        stamp = created.strftime("%Y-%m-%dT%H:%M:%SZ")
        text = (
            f"---\nid: mem_gen_{n:04d}\ntitle: {title}\ntags: [{tags}]\ncreated: {stamp}\n"
            f"last_accessed: {stamp}\nimportance: {rng.randint(1, 10)}\n---\n\n{body}\n"
        )
        write(vault_dir, f"semantic/gen-{n:04d}.md", text)


@pytest.mark.slow
def test_recall_ranks_alike_on_both_engines(tmp_path: Path, vault_dir: Path) -> None:
    import shutil

    set_engine(vault_dir, "whoosh")
    write_generated_vault(vault_dir, 300)
    other = tmp_path / "tantivy-vault"
    shutil.copytree(vault_dir, other)
    set_engine(other, "tantivy")
    vaults = [CoreVault.open(vault_dir), CoreVault.open(other)]
    assert [v.engine.name for v in vaults] == ["whoosh", "tantivy"]
    rng = random.Random(5)
    words = [t for p in sorted(vault_dir.glob("semantic/*.md"))[:30] for t in p.read_text().split()]
    words = [w for w in words if w.isalpha() and len(w) > 3]
    queries = [" ".join(rng.sample(words, rng.randint(1, 4))) for _ in range(40)]
    same_first = 0
    for query in queries:
        tops = [
            [r.id for r in recall(v, RecallRequest(query, touch=False, now=NOW)).results]
            for v in vaults
        ]
        assert len(set(tops[0]) & set(tops[1])) >= min(8, len(tops[0])), query
        same_first += tops[0][:1] == tops[1][:1]
    assert same_first >= 0.9 * len(queries)


# -- choosing the engine ------------------------------------------------------------------


def test_switching_engines_rebuilds_the_index(vault_dir: Path) -> None:
    set_engine(vault_dir, "whoosh")
    write(vault_dir, "semantic/quince.md", "# Quince\n\nThe quince tree is by the gate.\n")
    vault = CoreVault.open(vault_dir)
    (before,) = [r.id for r in recall(vault, RecallRequest("quince", now=NOW)).results]
    for name in ("tantivy", "whoosh"):
        set_engine(vault_dir, name)
        switched = CoreVault.open(vault_dir)
        assert switched.engine.name == name
        report = switched.sync()
        assert report.rebuilt
        (warning,) = switched.warnings
        assert warning == f"rebuilt the index: the engine changed to {name}"
        assert [r.id for r in recall(switched, RecallRequest("quince", now=NOW)).results] == [
            before
        ]
        assert (vault_dir / ".kenomem" / "index" / name).is_dir()
        other = "whoosh" if name == "tantivy" else "tantivy"
        assert not (vault_dir / ".kenomem" / "index" / other).exists()  # no dead weight
        assert not CoreVault.open(vault_dir).sync().rebuilt


def test_tantivy_missing_is_a_config_error_with_the_pip_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "tantivy", None)
    monkeypatch.delitem(sys.modules, "kenomem.index.tantivy_engine", raising=False)
    with pytest.raises(ConfigError) as caught:
        open_engine("tantivy", tmp_path)
    assert caught.value.hint == "pip install 'kenomem[tantivy]'"
    with pytest.raises(ConfigError, match="unknown index engine"):
        open_engine("lucene", tmp_path)


# -- damage and locks (tantivy) -----------------------------------------------------------


def tantivy_vault(vault_dir: Path) -> CoreVault:
    set_engine(vault_dir, "tantivy")
    write(vault_dir, "semantic/quince.md", "# Quince\n\nThe quince tree is by the gate.\n")
    write(vault_dir, "semantic/kettle.md", "# Kettle\n\nThe kettle is descaled.\n")
    vault = CoreVault.open(vault_dir)
    vault.sync()
    return vault


@pytest.mark.parametrize(
    "suffix, damage",
    [
        (".idx", "garbage"),  # tantivy 0.27 panics on this one: PanicException
        (".fast", "garbage"),
        (".store", "half"),
        (".term", "empty"),
        ("meta.json", "garbage"),
    ],
)
def test_a_damaged_tantivy_index_is_rebuilt_with_a_warning(
    vault_dir: Path, suffix: str, damage: str
) -> None:
    tantivy_vault(vault_dir)
    folder = vault_dir / ".kenomem" / "index" / "tantivy"
    files = [p for p in folder.iterdir() if p.name.endswith(suffix)]
    assert files
    for path in files:
        data = path.read_bytes()
        if damage == "garbage":
            rng = random.Random(0)
            cut = len(data) // 4
            data = data[:cut] + bytes(rng.randrange(256) for _ in range(64)) + data[cut + 64 :]
        path.write_bytes({"half": data[: len(data) // 2], "empty": b""}.get(damage, data))
    vault = CoreVault.open(vault_dir)
    for word in ("quince", "kettle"):
        hits = recall(vault, RecallRequest(word, touch=False, now=NOW)).results
        assert [r.path for r in hits] == [f"semantic/{word}.md"]
        listed = vault.browse(Filters(), "title", False, None).hits
        assert [h.doc.title for h in listed] == ["Kettle", "Quince"]
    assert any(w.startswith("rebuilt the index: the index cannot be read") for w in vault.warnings)
    again = CoreVault.open(vault_dir)
    assert len(recall(again, RecallRequest("quince", now=NOW)).results) == 1
    assert again.warnings == []


def test_a_panic_is_index_corrupt_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kenomem.index import tantivy_engine

    class PanicException(BaseException):  # as pyo3_runtime names it
        pass

    made = open_engine("tantivy", tmp_path / "index")
    made.rebuild(iter(DOCS))

    def panics(*args: object, **kw: object) -> None:
        raise PanicException("index out of bounds")

    monkeypatch.setattr(tantivy_engine.tantivy.Index, "open", panics)
    fresh = open_engine("tantivy", tmp_path / "index")
    with pytest.raises(IndexCorrupt, match="tantivy panicked"):
        fresh.search("tomato", Filters(), Boosts(), 10)
    with pytest.raises(KeyboardInterrupt), tantivy_engine._corruption_guard():
        raise KeyboardInterrupt


def test_a_second_writer_waits_for_the_first(tmp_path: Path) -> None:
    first = open_engine("tantivy", tmp_path / "index", lock_timeout=0.3)
    first.rebuild(iter(DOCS))
    held = tantivy.Index.open(str(tmp_path / "index" / "tantivy")).writer(15_000_000, 1)
    batch = SyncBatch()
    batch.upserts.append(doc(8, "New", "a zeppelin"))
    with pytest.raises(LockTimeout):
        first.apply(batch)
    assert first.count() == len(DOCS)  # readers do not wait for the writer

    patient = open_engine("tantivy", tmp_path / "index", lock_timeout=20.0)
    done = threading.Thread(target=patient.apply, args=(batch,))
    done.start()
    time.sleep(0.3)
    assert done.is_alive()
    del held  # frees the lock
    done.join(20)
    assert not done.is_alive()
    assert found(patient, "zeppelin") == ["0008"]


def test_a_writer_killed_with_sigkill_leaves_no_lock_behind(tmp_path: Path) -> None:
    import subprocess

    engine = open_engine("tantivy", tmp_path / "index", lock_timeout=1.0)
    engine.rebuild(iter(DOCS))
    code = (
        "import os, signal, sys, tantivy\n"
        "writer = tantivy.Index.open(sys.argv[1]).writer(15_000_000, 1)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    child = subprocess.run([sys.executable, "-c", code, str(tmp_path / "index" / "tantivy")])
    assert child.returncode == -9
    batch = SyncBatch()
    batch.upserts.append(doc(8, "New", "a zeppelin"))
    engine.apply(batch)
    assert found(engine, "zeppelin") == ["0008"]


def test_a_reader_sees_what_another_process_committed(tmp_path: Path) -> None:
    reader = open_engine("tantivy", tmp_path / "index")
    writer = open_engine("tantivy", tmp_path / "index")
    writer.rebuild(iter(DOCS))
    assert found(reader, "zeppelin") == []
    batch = SyncBatch()
    batch.upserts.append(doc(8, "New", "a zeppelin"))
    writer.apply(batch)
    assert found(reader, "zeppelin") == ["0008"]
    writer.rebuild(iter([*DOCS, doc(9, "Later", "another zeppelin")]))
    assert found(reader, "zeppelin") == ["0009"]
    assert os.listdir(tmp_path / "index") == ["tantivy"]  # nothing left of the swap
