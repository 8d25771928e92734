"""The whole cycle, measured: is what an agent gets from kenomem better for having slept?

    python bench/lifecycle.py                                  # the five conversations
    python bench/lifecycle.py --conversations conv-26 --questions 40   # a quick loop
    python bench/lifecycle.py --show 5                          # and 5 blocks to read
    python bench/lifecycle.py --help                            # every option

The data is LoCoMo dev (see bench/locomo.py, whose loading and vaults this reuses), with
the audit's corrected answer key (locomo-dev-audit.json beside it: the corrected answer,
its remarks in parentheses left out, and the corrected evidence). For each conversation,
three ways of keeping it, and one block of at most 2,000 tokens per question from each:

- "sleep cycle": every turn logged to the buffer by the import `kenomem import --as
  buffer` runs (`Vault.import_file(target="buffer")`), then `consolidate` with the
  heuristics (no LLM), as cron would run it the day after the last session; the block is
  `kenomem context QUESTION --session CONV --budget 2000` (`build_context`, in process,
  no touch, "now" the day after the last session);
- "one memory per turn": `kenomem import` of the conversation (as bench/locomo.py builds
  it), no sleep; the same `context` call;
- "plain BM25": no kenomem; the turns ranked by Okapi BM25 (bench/locomo.py's, stemmed,
  stop words out), best first, packed into the same 2,000 tokens (four characters a
  token, as `context` counts by default), one "- 2023-05-08: Speaker: text" line each,
  dated as `context` dates an episode.

A question is answered when at least 80% of its gold answer's content words (lower
case, stop words out, compared by their stems) are in the block; a date in the answer
counts when the block holds it in one of its written forms ("7 May 2023", "May 7, 2023",
"7 May", "2023-05-07", "May 2023"). "Evidence in block": at least one of its evidence
turns is in the block, whole or for the most part (sentences covering two thirds of its
text). The chance control scores each question against another question's block of the
same conversation (a fixed derangement: the block of the question half a list away).
Categories 1-4 only (5, adversarial, has no answer to find), less the few questions whose
corrected answer is a remark on the question rather than an answer (they are listed).

Tables go to stdout, progress to stderr, and every figure to --json FILE.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

# kenomem first: the package PYTHONPATH names, before bench/locomo.py adds the repository's.
import kenomem  # isort: split

import locomo

from kenomem import Vault as ApiVault
from kenomem.agents.context import ContextRequest, build_context
from kenomem.config import accept_settings
from kenomem.files import store
from kenomem.index import Filters
from kenomem.sleep.consolidate import ConsolidateRequest, consolidate
from kenomem.vault.core import CoreVault

BUDGET = 2000
CHARS_PER_TOKEN = 4
ANSWERED_AT = 0.8
MOST_OF_A_TURN = 2 / 3
AUDIT = locomo.DEFAULT_DATA.parent / "locomo-dev-audit.json"
ROWS = ("sleep cycle", "one memory per turn", "plain BM25")
CATEGORIES = (1, 2, 3, 4)

_MONTHS = (
    "january february march april may june july august september october november december"
).split()
_MONTH = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?" + (
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_DMY = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)? {_MONTH},? (\d{{4}})\b", re.IGNORECASE)
_MDY = re.compile(rf"\b{_MONTH} (\d{{1,2}})(?:st|nd|rd|th)?,? (\d{{4}})\b", re.IGNORECASE)
_DM = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)? {_MONTH}\b", re.IGNORECASE)
_MY = re.compile(rf"\b{_MONTH},? (\d{{4}})\b", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
# A corrected answer that is a remark on the question, not an answer to it ("This advice
# was given by JON to GINA in D7:5", "Cannot be determined from transcript").
_REMARK = re.compile(
    r"D\d+:\d+|transcript|attribut|citation|evidence|reversed|cannot be determined"
    r"|uncertain|statement, not|did not have|not by",
    re.IGNORECASE,
)
DROPPED: list[str] = []  # questions left out, and why


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class Asked(NamedTuple):
    text: str
    category: int
    answer: str
    evidence: tuple[str, ...]


# -- the data ------------------------------------------------------------------------------


def load(
    path: Path, wanted: list[str], per_conversation: int | None
) -> list[tuple[locomo.Conversation, list[Asked]]]:
    """The conversations (bench/locomo.py's reading) and their questions of categories 1-4
    with the answers, the audit's corrections applied (answer and evidence)."""
    conversations, _ = locomo.load_data(path, wanted, None)
    items = {item["sample_id"]: item for item in json.loads(path.read_text(encoding="utf-8"))}
    fixes: dict[tuple[str, int], dict[str, Any]] = {}
    if AUDIT.exists() and path.name == locomo.DEFAULT_DATA.name:
        for fix in json.loads(AUDIT.read_text(encoding="utf-8")):
            fixes[(fix["sample_id"], int(fix["qa_index"]))] = fix
    counts = locomo.EvidenceCounts()
    out = []
    for conv in conversations:
        known = {t.dia_id for t in conv.turns}
        asked = []
        for n, qa in enumerate(items[conv.sample_id]["qa"]):
            category = int(qa["category"])
            if category not in CATEGORIES:
                continue
            answer, evidence = qa.get("answer"), qa.get("evidence") or []
            fix = fixes.get((conv.sample_id, n))
            if fix is not None and fix["question"].strip() == str(qa["question"]).strip():
                answer = re.sub(r"\s*\([^)]*\)", "", str(fix["correct_answer"])).strip()
                evidence = fix.get("correct_evidence") or evidence
                if _REMARK.search(answer):  # the audit says the question has no answer
                    DROPPED.append(f"{conv.sample_id} q{n}: {answer[:70]}")
                    continue
            where = f"{conv.sample_id} q{n}"
            ids = locomo.normalise_evidence(list(evidence), known, counts, where)
            if answer is None or not str(answer).strip() or not ids:
                continue
            asked.append(Asked(str(qa["question"]), category, str(answer), ids))
        if per_conversation is not None and len(asked) > per_conversation:
            step = len(asked) / per_conversation
            asked = [asked[int(i * step)] for i in range(per_conversation)]
        out.append((conv, asked))
    return out


def moment(conv: locomo.Conversation) -> datetime:
    """The day after the conversation's last session, at midnight: "now"."""
    day = conv.last_session.date() + timedelta(days=1)
    return datetime.combine(day, datetime.min.time(), UTC)


# -- the vaults ----------------------------------------------------------------------------


def sleep_vault(conv: locomo.Conversation, root: Path) -> tuple[CoreVault, dict[str, Any]]:
    """The conversation logged to the buffer by the import, then consolidated the day after
    its last session with the heuristics; (the vault, what the cycle made)."""
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(locomo.REPO / "vault-template", root)
    settings = root / "kenomem.toml"
    text = settings.read_text(encoding="utf-8").replace("# fsync = true", "fsync = false", 1)
    settings.write_text(re.sub(r"(?m)^\[(embeddings|recall)\]$", r"# [\1]", text) + "\n")
    accept_settings(root)
    api = ApiVault(root)
    imported = api.import_file(text=json.dumps(conv.source), target="buffer")
    if imported.created != len(conv.turns):
        raise SystemExit(f"{conv.sample_id}: logged {imported.created} of {len(conv.turns)}")
    started = time.perf_counter()
    result = consolidate(api.core, ConsolidateRequest(llm=""), now=moment(conv))
    made: Counter[str] = Counter()
    for plan in result.days:
        for action in plan.actions:
            if action.action in ("create", "summarize", "supersede", "propose"):
                kind = "summary" if action.action == "summarize" else action.type
                made[kind] += 1
    stats = {
        "entries": sum(p.entries for p in result.days),
        "trivia": sum(p.trivia for p in result.days),
        "days": len(result.days),
        "made": dict(made),
        "seconds": round(time.perf_counter() - started, 1),
    }
    return api.core, stats


def bodies(vault: CoreVault) -> list[str]:
    """Every active memory's body, normalised (`flat`)."""
    vault.sync()
    hits = vault.browse(Filters(), sort="time", reverse=False, limit=None).hits
    return [flat(store.read_body(vault.root, h.doc.path) or "") for h in hits]


def turn_text(turn: locomo.Turn) -> str:
    return turn.text


# -- the blocks ----------------------------------------------------------------------------


# What fills the blocks `context` gives: tokens by part, and memories shown, by vault.
FILL: dict[str, Counter[str]] = {}


def context_block(
    vault: CoreVault, conv: locomo.Conversation, question: str, row: str, summaries: set[str]
) -> str:
    request = ContextRequest(
        question, session=conv.sample_id, budget=BUDGET, touch=False, now=moment(conv)
    )
    result = build_context(vault, request)
    fill = FILL.setdefault(row, Counter())
    fill["blocks"] += 1
    for part in result.parts:
        fill[f"tokens: {part.name}"] += part.tokens
        if part.name in ("facts", "recent"):
            fill["memories shown"] += len(part.ids)
            fill["day summaries shown"] += sum(i in summaries for i in part.ids)
    return result.text


def summary_ids(vault: CoreVault) -> set[str]:
    vault.sync()
    hits = vault.browse(Filters(), sort="time", reverse=False, limit=None).hits
    return {h.doc.id for h in hits if "summary" in h.doc.tags}


def bm25_block(
    plain: locomo.PlainBM25, vault: CoreVault, dates: dict[str, datetime], question: str
) -> str:
    """The turns BM25 ranks, best first, as many as fit in the budget, each with its day
    (as `context` writes an episode's)."""
    lines, used = [], 0
    for _id, path in plain.top(question, len(plain.docs)):
        said = " ".join((store.read_body(vault.root, path) or "").split())
        line = f"- {dates[path]:%Y-%m-%d}: {said}\n"
        cost = -(-len(line) // CHARS_PER_TOKEN)
        if used + cost > BUDGET:
            continue
        lines.append(line)
        used += cost
    return "".join(lines)


# -- judging -------------------------------------------------------------------------------


def flat(text: str) -> str:
    return " ".join(text.lower().split())


def date_forms(day: int | None, month: int, year: int | None) -> list[str]:
    name = _MONTHS[month - 1]
    if day is not None and year is not None:
        return [
            f"{day} {name} {year}",
            f"{day} {name}, {year}",
            f"{name} {day}, {year}",
            f"{name} {day} {year}",
            f"{year}-{month:02d}-{day:02d}",
        ]
    if day is not None:
        return [f"{day} {name}", f"{name} {day}", f"-{month:02d}-{day:02d}"]
    forms = [f"{name} {year}", f"{name}, {year}", f"{year}-{month:02d}"]
    return forms


def spaced(answer: str) -> str:
    """The key's dates with their day and month apart: "7November, 2022" is "7 November,
    2022" (a few answers are written so)."""
    return re.sub(rf"(\d)(?={_MONTH}\b)", r"\1 ", answer, flags=re.IGNORECASE)


def _written(form: str, written: str) -> bool:
    if form.startswith("-"):  # a day of a month in an ISO date, the year unsaid
        return re.search(rf"\d{{4}}{re.escape(form)}(?!\d)", written) is not None
    return re.search(rf"(?<!\w){re.escape(form)}(?!\w)", written) is not None


def _month(word: str) -> int:
    word = word.lower().rstrip(".")
    return next(i for i, m in enumerate(_MONTHS, 1) if m.startswith(word[:3]))


def dates_in(answer: str) -> list[tuple[tuple[int, int], list[str]]]:
    """The dates an answer names: (their span, the forms that count as writing them).
    `answer` has its day and month apart ("7November" in the key: `spaced`)."""
    found: list[tuple[tuple[int, int], list[str]]] = []

    def free(span: tuple[int, int]) -> bool:
        return not any(a < span[1] and span[0] < b for (a, b), _ in found)

    for m in _DMY.finditer(answer):
        found.append((m.span(), date_forms(int(m[1]), _month(m[2]), int(m[3]))))
    for m in _MDY.finditer(answer):
        if free(m.span()):
            found.append((m.span(), date_forms(int(m[2]), _month(m[1]), int(m[3]))))
    for m in _DM.finditer(answer):
        if free(m.span()):
            found.append((m.span(), date_forms(int(m[1]), _month(m[2]), None)))
    for m in _MY.finditer(answer):
        if free(m.span()):
            found.append((m.span(), date_forms(None, _month(m[1]), int(m[2]))))
    return found


class Judge:
    """The answer rule and the evidence rule, with the index's analysis (lower case,
    English stop words out, Porter stems)."""

    def __init__(self, analyze: Any) -> None:
        self.analyze = analyze

    def content(self, answer: str) -> list[str]:
        return list(dict.fromkeys(self.analyze(answer)))

    def answered(self, answer: str, block: str) -> bool:
        """At least ANSWERED_AT of the answer's content words are in the block; the words
        of a date the answer names count only when the block writes that date."""
        answer = spaced(answer)
        if not self.content(answer):
            return flat(answer) in flat(block)
        have = set(self.analyze(block))
        written = flat(block)
        rest, total, hits = answer, 0, 0
        for (start, end), forms in dates_in(answer):
            weight = max(1, len(self.content(answer[start:end])))
            total += weight
            hits += weight if any(_written(f, written) for f in forms) else 0
            rest = rest[:start] + " " * (end - start) + rest[end:]
        words = self.content(rest)
        total += len(words)
        hits += sum(w in have for w in words)
        return hits >= ANSWERED_AT * total

    @staticmethod
    def holds_turn(text: str, written: str) -> bool:
        """Whether `written` (flattened) holds the turn, whole or for the most part."""
        whole = flat(text)
        if not whole:
            return False
        if whole in written:
            return True
        sentences = [flat(s) for s in _SENTENCE.split(text) if s.strip()]
        held = sum(len(s) for s in sentences if len(s) >= 12 and s in written)
        return held >= MOST_OF_A_TURN * len(whole)


# -- the run -------------------------------------------------------------------------------


class Scored(NamedTuple):
    sample_id: str
    category: int
    answered: dict[str, bool]
    evidence: dict[str, bool]
    chance: dict[str, bool]


def derangement(n: int) -> list[int]:
    """Each place's partner: the one half the list away (no place its own, n > 1)."""
    shift = max(1, n // 2)
    return [(i + shift) % n for i in range(n)]


def pct(values: list[bool]) -> str:
    return f"{100 * statistics.fmean(values):.1f}" if values else "-"


def table(scored: list[Scored]) -> tuple[str, dict[str, Any]]:
    groups = {**{str(c): (c,) for c in CATEGORIES}, "1-4": CATEGORIES}
    figures: dict[str, Any] = {}
    lines = [
        "| the vault was made by | "
        + " | ".join(
            f"cat {g} (n={sum(s.category in c for s in scored)})" for g, c in groups.items()
        )
        + " | evidence in block (1-4) |",
        "|---" + "|---:" * (len(groups) + 1) + "|",
    ]
    for row in ROWS:
        cells = []
        for name, cats in groups.items():
            got = [s.answered[row] for s in scored if s.category in cats]
            cells.append(pct(got))
            figures.setdefault(row, {})[name] = statistics.fmean(got) if got else None
        evidence = [s.evidence[row] for s in scored]
        figures[row]["evidence"] = statistics.fmean(evidence) if evidence else None
        lines.append(f"| {row} | " + " | ".join(cells) + f" | {pct(evidence)} |")
    for row in ROWS:
        cells = []
        for name, cats in groups.items():
            got = [s.chance[row] for s in scored if s.category in cats]
            cells.append(pct(got))
            figures.setdefault(f"chance: {row}", {})[name] = statistics.fmean(got) if got else None
        lines.append(f"| (chance: another question's block, {row}) | " + " | ".join(cells) + " | |")
    return "\n".join(lines), figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", nargs="?", default=None, metavar="PATH_TO_JSON")
    parser.add_argument("--conversations", nargs="+", metavar="ID", default=[])
    parser.add_argument(
        "--questions", type=int, metavar="N", help="N questions per conversation, spread evenly"
    )
    parser.add_argument("--show", type=int, default=0, metavar="N", help="print N sampled blocks")
    parser.add_argument("--seed", type=int, default=26, help="for --show's sample")
    parser.add_argument("--json", type=Path, metavar="FILE", help="every figure, as JSON")
    parser.add_argument("--work", type=Path, help="keep the vaults in this folder")
    args = parser.parse_args(argv)
    path = Path(args.path) if args.path else locomo.DEFAULT_DATA
    log(f"kenomem from {Path(kenomem.__file__).parent}")
    data = load(path, args.conversations, args.questions)
    for line in DROPPED:
        log(f"left out, the audit's answer is a remark: {line}")
    scored: list[Scored] = []
    shown: list[tuple[Asked, dict[str, str], dict[str, bool]]] = []
    cycle_stats: dict[str, Any] = {}
    coverage: dict[str, list[bool]] = {"sleep cycle": [], "one memory per turn": []}
    tmp = tempfile.TemporaryDirectory(prefix="kenomem-lifecycle-")
    work = args.work or Path(tmp.name)
    judge: Judge | None = None
    started = time.perf_counter()
    for conv, asked in data:
        slept, stats = sleep_vault(conv, work / f"{conv.sample_id}-sleep")
        turns, _turn_of, _ = locomo.build_vault(conv, work / f"{conv.sample_id}-turns")
        cycle_stats[conv.sample_id] = stats
        log(f"{conv.sample_id}: {len(conv.turns)} turns, {len(asked)} questions; cycle: {stats}")
        plain = locomo.PlainBM25(turns)
        hits = turns.browse(Filters(), sort="time", reverse=False, limit=None).hits
        dates = {h.doc.path: datetime.fromtimestamp(h.doc.time, UTC) for h in hits}
        judge = judge or Judge(turns.engine.analyze)
        by_id = {t.dia_id: t for t in conv.turns}
        # Which evidence turns a memory of each vault holds (verbatim, or most of it).
        for row, vault in (("sleep cycle", slept), ("one memory per turn", turns)):
            every = "\n".join(bodies(vault))
            for dia_id in sorted({e for q in asked for e in q.evidence}):
                coverage[row].append(judge.holds_turn(by_id[dia_id].text, every))
        blocks: list[dict[str, str]] = []
        gists = summary_ids(slept)
        for q in asked:
            blocks.append(
                {
                    "sleep cycle": context_block(slept, conv, q.text, ROWS[0], gists),
                    "one memory per turn": context_block(turns, conv, q.text, ROWS[1], set()),
                    "plain BM25": bm25_block(plain, turns, dates, q.text),
                }
            )
        other = derangement(len(asked))
        for i, q in enumerate(asked):
            answered = {r: judge.answered(q.answer, blocks[i][r]) for r in ROWS}
            written = {r: flat(blocks[i][r]) for r in ROWS}
            evidence = {
                r: any(judge.holds_turn(by_id[e].text, written[r]) for e in q.evidence)
                for r in ROWS
            }
            chance = {
                r: judge.answered(q.answer, blocks[other[i]][r]) if len(asked) > 1 else False
                for r in ROWS
            }
            scored.append(Scored(conv.sample_id, q.category, answered, evidence, chance))
            shown.append((q, blocks[i], answered))
        log(f"{conv.sample_id}: done in {time.perf_counter() - started:.0f} s")
    text, figures = table(scored)
    print(text)
    print()
    print("Evidence turns held by some memory of the vault (verbatim, or most of it):")
    for row, held in coverage.items():
        print(f"- {row}: {pct(held)}% of {len(held)}")
    totals: Counter[str] = Counter()
    for stats in cycle_stats.values():
        totals.update({"entries": stats["entries"], "trivia": stats["trivia"]})
        totals.update(stats["made"])
    print(f"The sleep cycle made: {dict(sorted(totals.items()))}")
    print("What fills a block, on average (tokens by part; memories shown):")
    for row, fill in FILL.items():
        n = max(1, fill.pop("blocks"))
        said = ", ".join(f"{k} {v / n:.0f}" for k, v in sorted(fill.items()) if v)
        print(f"- {row}: {said}")
    if args.show and shown:
        rng = random.Random(args.seed)
        for q, block, answered in rng.sample(shown, min(args.show, len(shown))):
            print("\n" + "=" * 80)
            print(f"Q ({q.category}): {q.text}\nGOLD: {q.answer}  evidence {', '.join(q.evidence)}")
            for row in ROWS:
                print(f"\n--- {row}: {'ANSWERED' if answered[row] else 'not answered'} ---")
                print(block[row])
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "figures": figures,
                    "evidence_held": {r: statistics.fmean(v) for r, v in coverage.items() if v},
                    "cycle": cycle_stats,
                    "fill": {r: dict(f) for r, f in FILL.items()},
                    "questions": len(scored),
                    "kenomem": str(Path(kenomem.__file__).parent),
                },
                indent=2,
            )
            + "\n"
        )
    log(f"{len(scored)} questions in {time.perf_counter() - started:.0f} s")
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
