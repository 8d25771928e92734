"""Benchmark `kenomem prune` on synthetic vaults.

    python bench/prune.py                          # 10,000 memories, 3 runs
    python bench/prune.py --sizes 100000 --runs 3  # takes a while: a copy per run

For each size, on a fresh indexed copy of the generated vault (bench/gen_vault.py: two
years of memories, about half of them episodes), it times as whole processes:

- `prune --dry-run --json`: planning alone (read every record, score, group);
- the first `prune --json`: the backlog of two years, summarised and archived at once;
- a second `prune --json` right after: what a nightly run costs once the backlog is gone
  (planning, nothing or little to move).

Each figure is the median of the runs; the counts come from prune's own JSON. Markdown
to stdout, progress to stderr, every raw figure to a JSON file.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from run import Runner, cached_vault, log, machine_facts, render_facts, table  # noqa: E402


def prune_cmd(runner: Runner, vault: Path, *extra: str) -> list[str]:
    return [runner.kenomem, "prune", "--vault", str(vault), "--json", *extra]


def indexed_copy(runner: Runner, n: int, cache: Path) -> Path:
    """The generated vault with its index built, cached beside it (reindexing 100k
    memories takes minutes; copying the result does not)."""
    source = cached_vault(n, cache, fresh=False)
    indexed = cache / f"prune-base-{n}"
    marker = indexed / ".bench-source"
    stamp = (source / ".bench-vault.json").read_text()
    if marker.exists() and marker.read_text() == stamp:
        return indexed
    if indexed.exists():
        shutil.rmtree(indexed)
    shutil.copytree(source, indexed, ignore=shutil.ignore_patterns(".kenomem"))
    log(f"  indexing {n} memories ...")
    runner.output([runner.kenomem, "reindex", "--vault", str(indexed), "--json"])
    marker.write_text(stamp)
    return indexed


def one_run(runner: Runner, base: Path, work: Path) -> dict[str, Any]:
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(base, work, symlinks=True)
    result: dict[str, Any] = {}
    for name, extra in (("dry_run", ("--dry-run",)), ("first", ()), ("second", ())):
        seconds, proc = runner.output(prune_cmd(runner, work, *extra))
        report = json.loads(proc.stdout)
        result[name] = {
            "wall": seconds,
            "active": report["active"],
            "retired": len(report["retire"]),
            "summaries": len(report["summaries"]),
            "kept": report["kept"],
        }
        log(
            f"    {name}: {seconds:.2f} s, {report['active']} active, "
            f"{len(report['retire'])} retired, {len(report['summaries'])} summaries"
        )
    shutil.rmtree(work)
    return result


def render(size: int, runs: list[dict[str, Any]]) -> str:
    def med(name: str) -> float:
        return statistics.median(r[name]["wall"] for r in runs)

    first = runs[0]
    rows = [
        [
            "`prune --dry-run` (plan only)",
            f"{med('dry_run'):.2f} s",
            f"{first['dry_run']['retired']} to retire, {first['dry_run']['summaries']} summaries",
        ],
        [
            "first `prune` (two years of backlog)",
            f"{med('first'):.2f} s",
            f"{first['first']['retired']} archived, {first['first']['summaries']} summaries "
            f"written, {first['first']['kept']} active left",
        ],
        [
            "second `prune` (nightly, backlog gone)",
            f"{med('second'):.2f} s",
            f"{first['second']['retired']} archived",
        ],
    ]
    head = f"### {size:,} memories ({first['dry_run']['active']:,} active), {len(runs)} runs\n\n"
    return head + table(["command", "median", "what it did"], rows, "lrl")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000", help="comma-separated vault sizes")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/kenomem-bench"))
    parser.add_argument("--out", type=Path, default=BENCH / "results" / "prune.json")
    parser.add_argument("--kenomem", default=str(Path(sys.executable).parent / "kenomem"))
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    runner = Runner(python=sys.executable, kenomem=args.kenomem, rg=shutil.which("rg"))
    facts = machine_facts(runner)
    print(render_facts(facts) + "\n")
    doc: dict[str, Any] = {"machine": facts, "sizes": {}}
    for size in (int(s) for s in args.sizes.split(",")):
        log(f"== {size:,} memories ==")
        base = indexed_copy(runner, size, args.cache)
        runs = []
        for i in range(args.runs):
            log(f"  run {i + 1}/{args.runs}")
            runs.append(one_run(runner, base, args.cache / f"prune-work-{size}"))
        doc["sizes"][str(size)] = runs
        print(render(size, runs) + "\n", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1))
    log(f"raw figures: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
