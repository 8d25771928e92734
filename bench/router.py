"""The type router: how often `remember` files a sentence as the kind of memory it is.

    python bench/router.py              # accuracy overall and per type, and the confusions
    python bench/router.py --wrong      # and every sentence it files wrongly

bench/data/router.json holds labelled sentences (a third or so of each type, with hard
cases: reported speech that says "always", events with "never", facts about people,
first-person preferences, questions). Each is classified by
`kenomem.capture.classify.classify`, the rule set `remember` uses when it is given no
`--type`; no vault, no process: the figures are of the rules alone. Markdown to stdout.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))  # the checkout's kenomem, run from anywhere

from kenomem.capture.classify import classify  # noqa: E402

DATA = BENCH / "data" / "router.json"
TYPES = ("semantic", "episodic", "procedural")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the labelled set")
    parser.add_argument("--wrong", action="store_true", help="list the misfiled sentences")
    args = parser.parse_args()
    rows = json.loads(args.data.read_text(encoding="utf-8"))["sentences"]
    confusion: Counter[tuple[str, str]] = Counter()
    wrong = []
    for row in rows:
        got = classify(row["text"])
        confusion[row["type"], got] += 1
        if got != row["type"]:
            wrong.append((row["type"], got, row["kind"], row["text"]))
    right = sum(n for (want, got), n in confusion.items() if want == got)
    print(f"Router accuracy: {right}/{len(rows)} = {right / len(rows):.1%}\n")
    print("| type | sentences | right | accuracy |")
    print("| --- | ---: | ---: | ---: |")
    for kind in TYPES:
        total = sum(n for (want, _), n in confusion.items() if want == kind)
        ok = confusion[kind, kind]
        print(f"| {kind} | {total} | {ok} | {ok / total:.1%} |" if total else f"| {kind} | 0 |")
    print("\nConfusion (rows: the label, columns: what the router said)\n")
    print("| label \\ filed as | " + " | ".join(TYPES) + " |")
    print("| --- |" + " ---: |" * len(TYPES))
    for want in TYPES:
        print(f"| {want} | " + " | ".join(str(confusion[want, got]) for got in TYPES) + " |")
    if args.wrong:
        print("\nMisfiled\n")
        for want, got, kind, text in sorted(wrong):
            print(f"- {want} filed as {got} ({kind}): {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
