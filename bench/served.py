"""Cold recall at scale with a watcher running: served by its command server, run alone,
and against the floors and `rg`.

    python bench/served.py                                 # 100,000 memories, tantivy
    python bench/served.py --sizes 10000 --engines tantivy,whoosh --runs 9

For each size and engine: a working copy indexed with that engine (kept in `--cache-dir`
and used again while its index matches), a `kenomem watch` on it, then round after round
and query after query, interleaved: `python -c pass`; the engine's floor (bench/floor.py
for Whoosh, bench/floor_tantivy.py with the query's analysed terms for tantivy); `kenomem
recall --json --no-touch` handed to the watcher's command server; the same run alone in
its own process (`KENOMEM_NO_SERVE=1`; the watcher still vouches for the index, so there
is no scan either way); a served recall that touches what it returns; `rg -il`. Ratios
are taken within each round and query, then the median of them is reported. Then cold
`remember`s, each once the watcher has indexed the one before; and the resident memory
of the watcher and of its command server. Markdown to stdout, progress
to stderr, raw figures to a JSON file.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from peers import run, set_engine  # noqa: E402
from run import (  # noqa: E402
    QUERIES,
    Runner,
    cached_vault,
    log,
    ms,
    remember_text,
    stats,
    table,
    working_copy,
)
from watch import Watcher  # noqa: E402

TARGET = 2.0  # issue 7: cold recall with tantivy under 2x its floor at 100k
OFF = {"KENOMEM_NO_SERVE": "1"}


def indexed_copy(runner: Runner, base: Path, work: Path, engine: str, n: int) -> Path:
    """`work`, a copy of `base` indexed with `engine`: reused while its index says so."""
    stats_cmd = [runner.kenomem, "stats", "--vault", str(work), "--json"]
    if (work / ".kenomem").is_dir():
        _, proc = runner.output(stats_cmd)
        try:
            found = json.loads(proc.stdout)
            if found.get("engine") == engine and found.get("memories") == n:
                log(f"  {engine} copy: {work} (cached)")
                return work
        except ValueError:
            pass
    log(f"  {engine} copy: copying {n:,} memories to {work} and indexing ...")
    working_copy(base, work)
    set_engine(work, engine)
    runner.timed([runner.kenomem, "reindex", "--vault", str(work), "--json"])
    return work


def server_pid(watcher: Watcher) -> int | None:
    """The command server's pid, as the watcher's log (--verbose) names it."""
    for _, line in watcher.lines:
        if "serving read-only commands" in line:
            return int(line.rsplit("(process ", 1)[1].rstrip(")"))
    return None


def _rss_kb(pid: int | None) -> int | None:
    if pid is None:
        return None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def tools(runner: Runner, vault: Path, engine: str) -> dict[str, Any]:
    """name -> (query -> (command, extra environment))."""
    if engine == "tantivy":
        from kenomem.index.stemming import analyze

        floor_script = str(BENCH / "floor_tantivy.py")

        def floor(q: str) -> list[str]:
            return [runner.python, floor_script, str(vault), *dict.fromkeys(analyze(q))]
    else:

        def floor(q: str) -> list[str]:
            return [runner.python, str(BENCH / "floor.py"), str(vault), q]

    def recall(q: str, *extra: str) -> list[str]:
        return [runner.kenomem, "recall", q, "--vault", str(vault), "--json", *extra]

    out: dict[str, Any] = {
        "python -c pass": lambda q: ([runner.python, "-c", "pass"], {}),
        "floor": lambda q: (floor(q), {}),
        "recall, served": lambda q: (recall(q, "--no-touch"), {}),
        "recall, alone": lambda q: (recall(q, "--no-touch"), OFF),
        "recall with touch, served": lambda q: (recall(q), {}),
    }
    if runner.rg:
        rg = runner.rg
        out["rg -il"] = lambda q: (
            [rg, "-il", *(a for w in q.split() for a in ("-e", w)), str(vault)],
            {},
        )
    return out


def timed(runner: Runner, cmd: list[str], extra: dict[str, str]) -> float:
    done = run(cmd, {**runner.env, **extra})
    if done.code not in (0, 1):  # rg exits 1 when it finds nothing
        raise RuntimeError(f"{cmd} exited {done.code}: {done.stderr[-500:]}")
    return done.seconds


def measure(runner: Runner, vault: Path, engine: str, args: argparse.Namespace) -> dict:
    named = tools(runner, vault, engine)
    watcher = Watcher(runner, vault)
    watcher.wait_started(600)
    watcher.wait_idle(600)
    server = server_pid(watcher)
    if server is None:
        log("  ! the watcher started no command server: served figures are local runs")
    rounds: list[dict[str, Any]] = []
    try:
        for r in range(args.warmup + args.runs):
            for query in QUERIES:
                row: dict[str, Any] = {"round": r - args.warmup, "query": query}
                for name, build in named.items():
                    row[name] = timed(runner, *build(query))
                if r >= args.warmup:
                    rounds.append(row)
            log(f"  round {r + 1 - args.warmup}/{args.runs}" if r >= args.warmup else "  warm-up")
        remember = remembers(runner, watcher, args)
        memory = {"watcher": _rss_kb(watcher.pid), "command server": _rss_kb(server)}
    finally:
        watcher.stop()
    return {
        "engine": engine,
        "rounds": rounds,
        "remember": remember,
        "rss_kb": memory,
        "server": server,
    }


def remembers(runner: Runner, watcher: Watcher, args: argparse.Namespace) -> list[float]:
    """Cold `remember`s of new memories (not served: it writes), each once the watcher has
    indexed the one before, as when an agent remembers now and then."""
    seconds = []
    for i in range(args.warmup + args.runs):
        watcher.wait_idle()
        text = remember_text(0, 10_000 + i)
        took = timed(runner, [runner.kenomem, "remember", text, "--vault", str(watcher.vault)], {})
        if i >= args.warmup:
            seconds.append(took)
    log(f"  remember: {args.runs} runs")
    return seconds


def summarize(result: dict[str, Any]) -> dict[str, Any]:
    rounds = result["rounds"]
    names = [k for k in rounds[0] if k not in ("round", "query")]
    medians = {name: stats([row[name] for row in rounds]) for name in names}

    def ratio(a: str, b: str) -> float | None:
        if b not in rounds[0]:
            return None
        return statistics.median(row[a] / row[b] for row in rounds)

    if result.get("remember"):
        medians["remember (a watcher running)"] = stats(result["remember"])
    return {
        "medians": medians,
        "served / floor": ratio("recall, served", "floor"),
        "alone / floor": ratio("recall, alone", "floor"),
        "touch served / floor": ratio("recall with touch, served", "floor"),
        "served / rg": ratio("recall, served", "rg -il"),
        "alone / rg": ratio("recall, alone", "rg -il"),
    }


def render(n: int, result: dict[str, Any], s: dict[str, Any]) -> str:
    rows = [[name, ms(v["median"]), ms(v["min"])] for name, v in s["medians"].items()]
    lines = [
        f"### {n:,} memories, {result['engine']}, a watcher running",
        "",
        table(["", "median", "min"], rows, "lrr"),
        "",
    ]
    for key in ("served / floor", "alone / floor", "touch served / floor", "served / rg"):
        if s[key] is not None:
            mark = ""
            if key == "served / floor" and result["engine"] == "tantivy":
                mark = " (target under 2x: " + ("met)" if s[key] < TARGET else "not met)")
            lines.append(f"- {key}: {s[key]:.2f}x{mark}")
    rss = result["rss_kb"]
    lines.append(
        "- resident memory: watcher "
        + ", command server ".join(
            f"{(rss[k] or 0) / 1024:.0f} MB" for k in ("watcher", "command server")
        )
    )
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    here = Path(sys.executable).parent
    p = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    p.add_argument("--sizes", default="100000", help="vault sizes, comma-separated")
    p.add_argument("--engines", default="tantivy", help="engines, comma-separated")
    p.add_argument("--runs", type=int, default=15, help="measured rounds")
    p.add_argument("--warmup", type=int, default=2, help="rounds not kept")
    p.add_argument("--cache-dir", type=Path, default=Path("/tmp/kenomem-bench"))
    p.add_argument("--python", default=str(here / "python"))
    p.add_argument("--kenomem", default=str(here / "kenomem"))
    p.add_argument("--rg", default="rg")
    stamp = datetime.now().strftime("%Y-%m-%d")
    p.add_argument("--out", type=Path, default=BENCH / "results" / f"{stamp}-served.json")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    runner = Runner(args.python, args.kenomem, shutil.which(args.rg))
    report: dict[str, Any] = {"load_average_start": os.getloadavg(), "sizes": {}}
    out = []
    for n in (int(x) for x in args.sizes.split(",")):
        log(f"\n== {n:,} memories ==")
        base = cached_vault(n, args.cache_dir, False)
        for engine in args.engines.split(","):
            work = indexed_copy(runner, base, args.cache_dir / f"served-{engine}-{n}", engine, n)
            result = measure(runner, work, engine, args)
            summary = summarize(result)
            report["sizes"].setdefault(str(n), {})[engine] = {**result, "summary": summary}
            out.append(render(n, result, summary))
    report["load_average_end"] = os.getloadavg()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1))
    print("\n\n".join(out))
    log(f"\nraw figures: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
