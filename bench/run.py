"""Benchmark kenomem's command line against a floor, on synthetic vaults.

    python bench/run.py                        # 1,000 and 10,000 memories, 15 runs
    python bench/run.py --sizes 100000         # takes minutes to index
    python bench/run.py --sizes 1000 --runs 5  # a quick look

For each size it measures, as whole processes: `kenomem reindex`, a cold `kenomem recall`
(with and without --no-touch) against bench/floor.py and `rg -il`, a cold `kenomem
remember`, and the imports of one recall (`python -X importtime`). Each figure is a median
of several runs after warm-up runs; recall, floor and rg are interleaved so that the
machine's noise falls on all of them alike. Markdown tables go to stdout, progress to
stderr, and every raw timing to a JSON file (see bench/README.md).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import shutil
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from gen_vault import SUBJECTS, TOPICS, WORDS, generate  # noqa: E402

# Three fixed queries from the generator's vocabulary: a topic pair with a person, two
# topics, three topics.
QUERIES = ("kubernetes deadline marco", "invoice budget", "passport flight hotel")
RECALL_TARGET = 1.3  # the target at 10k: cold recall within 1.3x the floor
REMEMBER_TARGET_MS = 100.0  # ... and cold remember under the floor + 100 ms
TARGET_SIZE = 10_000
WARMUP_SIZE = 30  # the tiny vault every command runs on once, for the bytecode caches
MARKER = ".bench-vault.json"  # in a cached vault: what generated it


class BenchError(Exception):
    """A command failed twice in a row."""


class Timer:
    """Wall-clock seconds of a `with` block."""

    def __enter__(self) -> Timer:
        self.seconds = 0.0
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self._start


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@dataclass
class Runner:
    """Runs the commands, with an environment that lets Python write bytecode caches.

    A command that fails is run once more, with its stderr captured and shown; the
    incident is kept for the JSON file. A second failure stops the benchmark.
    """

    python: str
    kenomem: str
    rg: str | None
    baseline: str | None = None  # the kenomem command of an earlier release, if compared
    env: dict[str, str] = field(default_factory=dict)
    incidents: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

    def timed(self, cmd: list[str]) -> float:
        """Seconds of one run, output discarded."""
        try:
            with Timer() as t:
                subprocess.run(
                    cmd,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    env=self.env,
                    check=True,
                )
            return t.seconds
        except subprocess.CalledProcessError as exc:
            first = exc.returncode
        with Timer() as t:
            proc = subprocess.run(
                cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=self.env, text=True
            )
        self._failed(cmd, first, "", proc)
        return t.seconds

    def output(self, cmd: list[str]) -> tuple[float, subprocess.CompletedProcess[str]]:
        """Seconds of one run, with its stdout and stderr."""
        with Timer() as t:
            proc = subprocess.run(cmd, capture_output=True, env=self.env, text=True)
        if proc.returncode == 0:
            return t.seconds, proc
        first, first_stderr = proc.returncode, proc.stderr
        with Timer() as t:
            proc = subprocess.run(cmd, capture_output=True, env=self.env, text=True)
        self._failed(cmd, first, first_stderr, proc)
        return t.seconds, proc

    def _failed(
        self, cmd: list[str], first: int, first_stderr: str, retry: subprocess.CompletedProcess
    ) -> None:
        """Report a failed run and its re-run; stop if the re-run failed too."""
        ok = retry.returncode == 0
        self.incidents.append(
            {
                "cmd": cmd,
                "exit": first,
                "stderr": first_stderr.strip(),
                "retry_exit": retry.returncode,
                "retry_stderr": (retry.stderr or "").strip(),
            }
        )
        log(f"  ! exit {first}: {' '.join(cmd)}")
        for stderr in (first_stderr, retry.stderr or ""):
            if stderr.strip():
                log("    " + stderr.strip().replace("\n", "\n    "))
        log(f"    re-ran once: {'ok' if ok else f'exit {retry.returncode}'}")
        if not ok:
            raise BenchError(f"failed twice: {' '.join(cmd)}")

    # The commands measured, as lists of arguments.

    def recall(
        self, vault: Path, query: str, touch: bool = True, kenomem: str | None = None
    ) -> list[str]:
        command = kenomem or self.kenomem
        cmd = [command, "recall", *query.split(), "--vault", str(vault), "--json"]
        return cmd if touch else [*cmd, "--no-touch"]

    def floor(self, vault: Path, query: str) -> list[str]:
        return [self.python, str(BENCH / "floor.py"), str(vault), *query.split()]

    def rg_cmd(self, vault: Path, query: str) -> list[str]:
        assert self.rg is not None
        words = [arg for word in query.split() for arg in ("-e", word)]
        return [self.rg, "-il", *words, str(vault)]

    def remember(self, vault: Path, text: str) -> list[str]:
        return [self.kenomem, "remember", text, "--vault", str(vault)]

    def reindex(self, vault: Path) -> list[str]:
        return [self.kenomem, "reindex", "--vault", str(vault), "--json"]

    def importtime(self, vault: Path, query: str) -> list[str]:
        recall = ["recall", *query.split(), "--vault", str(vault), "--no-touch"]
        return [self.python, "-X", "importtime", "-m", "kenomem", *recall]

    def bare(self) -> list[str]:
        return [self.python, "-c", "pass"]


# Statistics and formatting.


def stats(values: list[float]) -> dict[str, float]:
    """Median, min, max and quartiles (inclusive method; q1 = q3 = the value for one run)."""
    if len(values) > 1:
        q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    else:
        q1 = q3 = values[0]
    return {
        "n": len(values),
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "q1": q1,
        "q3": q3,
    }


def number(seconds: float) -> str:
    """Milliseconds, to three significant figures or so."""
    value = seconds * 1000
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.1f}"


def ms(seconds: float) -> str:
    return number(seconds) + " ms"


def signed_ms(seconds: float) -> str:
    return ("+" if seconds >= 0 else "−") + ms(abs(seconds))


def secs(seconds: float) -> str:
    return f"{seconds:.2f}" if seconds < 10 else f"{seconds:.1f}"


def iqr(s: dict[str, float], fmt: Any = number, unit: str = "ms") -> str:
    return "–" if s["n"] < 2 else f"{fmt(s['q1'])}–{fmt(s['q3'])} {unit}"


def table(header: list[str], rows: list[list[str]], align: str) -> str:
    """A markdown table; `align` has one letter per column, l or r."""
    marks = ["---:" if a == "r" else "---" for a in align]
    lines = [header, marks, *rows]
    return "\n".join("| " + " | ".join(line) + " |" for line in lines)


# The vaults.


def generator_digest() -> str:
    return hashlib.sha256((BENCH / "gen_vault.py").read_bytes()).hexdigest()[:16]


def cached_vault(n: int, cache_dir: Path, fresh: bool) -> Path:
    """The generated vault of n memories, made again only if missing, stale or --fresh."""
    vault = cache_dir / str(n)
    wanted = {"n": n, "generator": generator_digest()}
    marker = vault / MARKER
    if not fresh and marker.exists():
        try:
            if json.loads(marker.read_text()) == wanted:
                log(f"  vault: {vault} (cached)")
                return vault
        except ValueError:
            pass
    log(f"  generating {n} memories in {vault} ...")
    with Timer() as t:
        cache_dir.mkdir(parents=True, exist_ok=True)
        generate(n, vault)
        marker.write_text(json.dumps(wanted))
    log(f"  generated in {t.seconds:.1f} s")
    return vault


def working_copy(vault: Path, work: Path) -> Path:
    """A copy of the vault's files, without index, for commands that write to the vault
    (reindex, recall's touch, remember), so that the cached vault stays as generated."""
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(vault, work, ignore=shutil.ignore_patterns(".kenomem", MARKER))
    return work


def remember_text(n: int, counter: int) -> str:
    """A distinct text for each counter, classified as semantic (no time or rule words),
    and far from every other one (different random words), so it creates a memory."""
    rng = random.Random(f"remember-{n}-{counter}")
    words = [*rng.sample(TOPICS, 6), rng.choice(SUBJECTS).capitalize()]
    return f"Benchmark note {counter} about " + " ".join(words) + "."


# The measurements.


def warm_up(runner: Runner, cache_dir: Path) -> None:
    """Run every command once on a tiny vault, so that the bytecode caches exist."""
    log(f"warm-up: every command once on {WARMUP_SIZE} memories")
    vault = cache_dir / "warmup"
    generate(WARMUP_SIZE, vault)
    query = QUERIES[0]
    runner.output(runner.reindex(vault))
    for cmd in (
        runner.recall(vault, query),
        runner.recall(vault, query, touch=False),
        runner.floor(vault, query),
        runner.remember(vault, remember_text(0, 0)),
        runner.importtime(vault, query),
        runner.bare(),
    ):
        runner.timed(cmd)
    if runner.baseline:
        old = cache_dir / "warmup-baseline"
        generate(WARMUP_SIZE, old)
        runner.output([runner.baseline, "reindex", "--vault", str(old), "--json"])
        runner.timed(runner.recall(old, query, kenomem=runner.baseline))


def measure_reindex(runner: Runner, vault: Path, runs: int) -> list[dict[str, Any]]:
    """`kenomem reindex --json` runs: wall seconds and the command's own report."""
    results = []
    for i in range(runs):
        seconds, proc = runner.output(runner.reindex(vault))
        report = json.loads(proc.stdout)
        results.append({"wall": seconds, "report": report})
        log(f"  reindex {i + 1}/{runs}: {seconds:.1f} s, {report.get('per_second')}/s")
    return results


def measure_recall(
    runner: Runner, vault: Path, warmup: int, runs: int, baseline_vault: Path | None = None
) -> tuple[list[dict[str, Any]], list[float]]:
    """Rounds of, for each query: floor, recall, recall --no-touch, rg, and with a
    baseline its recall and recall --no-touch on its own copy of the vault; and one bare
    `python -c pass` per round. Warm-up rounds are run first and not kept."""
    rounds: list[dict[str, Any]] = []
    bare: list[float] = []
    for r in range(warmup + runs):
        kept = r >= warmup
        seconds = runner.timed(runner.bare())
        if kept:
            bare.append(seconds)
        for query in QUERIES:
            row: dict[str, Any] = {"round": r - warmup, "query": query}
            row["floor"] = runner.timed(runner.floor(vault, query))
            row["recall"] = runner.timed(runner.recall(vault, query))
            row["recall_no_touch"] = runner.timed(runner.recall(vault, query, touch=False))
            if runner.rg:
                row["rg"] = runner.timed(runner.rg_cmd(vault, query))
            if runner.baseline and baseline_vault is not None:
                old = runner.baseline
                row["baseline"] = runner.timed(runner.recall(baseline_vault, query, kenomem=old))
                row["baseline_no_touch"] = runner.timed(
                    runner.recall(baseline_vault, query, touch=False, kenomem=old)
                )
            if kept:
                rounds.append(row)
        label = f"{r + 1 - warmup}/{runs}" if kept else f"warm-up {r + 1}/{warmup}"
        log(f"  recall round {label}")
    return rounds, bare


def measure_remember(
    runner: Runner, vault: Path, n: int, warmup: int, runs: int
) -> list[dict[str, Any]]:
    """Rounds of: floor (the queries in turn), then `remember` of a new, distinct text."""
    rounds = []
    for r in range(warmup + runs):
        query = QUERIES[r % len(QUERIES)]
        floor = runner.timed(runner.floor(vault, query))
        remember = runner.timed(runner.remember(vault, remember_text(n, r + 1)))
        if r >= warmup:
            rounds.append({"round": r - warmup, "floor": floor, "remember": remember})
    log(f"  remember: {runs} runs (+{warmup} warm-up) done")
    return rounds


def parse_importtime(stderr: str) -> dict[str, list[int]]:
    """{module: [self µs, cumulative µs]} from `python -X importtime`'s stderr."""
    modules: dict[str, list[int]] = {}
    for line in stderr.splitlines():
        if not line.startswith("import time:"):
            continue
        parts = line[len("import time:") :].split("|")
        if len(parts) != 3 or not parts[0].strip().isdigit():
            continue  # the header line
        name = parts[2].strip()
        if name not in modules:
            modules[name] = [int(parts[0]), int(parts[1])]
    return modules


def measure_importtime(runner: Runner, vault: Path, runs: int) -> list[dict[str, list[int]]]:
    """The imports of `python -X importtime -m kenomem recall ... --no-touch`."""
    results = []
    for _ in range(runs):
        _, proc = runner.output(runner.importtime(vault, QUERIES[0]))
        results.append(parse_importtime(proc.stderr))
    log(f"  importtime: {runs} runs done")
    return results


def measure_size(runner: Runner, n: int, args: argparse.Namespace) -> dict[str, Any]:
    log(f"\n== {n:,} memories ==")
    vault = cached_vault(n, args.cache_dir, args.fresh)
    work = working_copy(vault, args.cache_dir / f"work-{n}")
    log(f"  working copy: {work}")
    reindex_runs = args.reindex_runs or (1 if n >= 100_000 else 3)
    result: dict[str, Any] = {"size": n, "vault": str(vault), "working_copy": str(work)}
    result["reindex"] = measure_reindex(runner, work, reindex_runs)
    old = None
    if runner.baseline:
        old = working_copy(vault, args.cache_dir / f"work-baseline-{n}")
        runner.output([runner.baseline, "reindex", "--vault", str(old), "--json"])
        result["baseline_working_copy"] = str(old)
    result["recall"], result["python_pass"] = measure_recall(
        runner, work, args.warmup, args.runs, old
    )
    result["remember"] = measure_remember(runner, work, n, args.warmup, args.runs)
    result["importtime"] = measure_importtime(runner, work, args.importtime_runs)
    if not args.keep_work:
        shutil.rmtree(work)
        if old is not None:
            shutil.rmtree(old)
    return result


# The summary and its tables.


def summarize(result: dict[str, Any]) -> dict[str, Any]:
    """Medians, quartiles and ratios of one size's raw timings."""
    n = result["size"]
    rounds = result["recall"]
    walls = [r["wall"] for r in result["reindex"]]
    own = [r["report"]["per_second"] for r in result["reindex"]]
    s: dict[str, Any] = {
        "reindex": stats(walls),
        "reindex_per_second_wall": n / statistics.median(walls),
        "reindex_per_second_reported": statistics.median(own),
        "python_pass": stats(result["python_pass"]),
    }
    commands = ["floor", "recall", "recall_no_touch"] + (["rg"] if "rg" in rounds[0] else [])
    if "baseline" in rounds[0]:
        commands += ["baseline", "baseline_no_touch"]

    def block(rows: list[dict[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {c: stats([r[c] for r in rows]) for c in commands}
        for c in commands[1:]:
            out[f"{c}/floor"] = out[c]["median"] / out["floor"]["median"]
            out[f"{c}/floor per round"] = statistics.median(r[c] / r["floor"] for r in rows)
        if "rg" in commands:
            out["recall/rg"] = out["recall"]["median"] / out["rg"]["median"]
        if "baseline" in commands:
            for mine, theirs in (("recall", "baseline"), ("recall_no_touch", "baseline_no_touch")):
                out[f"{mine}/{theirs}"] = out[mine]["median"] / out[theirs]["median"]
                out[f"{mine}/{theirs} per round"] = statistics.median(
                    r[mine] / r[theirs] for r in rows
                )
        return out

    s["queries"] = {q: block([r for r in rounds if r["query"] == q]) for q in QUERIES}
    s["overall"] = block(rounds)
    rem = result["remember"]
    s["remember"] = stats([r["remember"] for r in rem])
    s["remember_floor"] = stats([r["floor"] for r in rem])
    s["remember-floor"] = s["remember"]["median"] - s["remember_floor"]["median"]
    s["remember-floor per round"] = statistics.median(r["remember"] - r["floor"] for r in rem)
    s["imports"] = summarize_imports(result["importtime"])
    return s


def summarize_imports(runs: list[dict[str, list[int]]]) -> dict[str, Any]:
    """The total (seconds, as the other figures), and medians over the runs in ms:
    kenomem's own modules, by top-level package, and the ten largest modules by self time."""
    names = [name for name in runs[0] if all(name in run for run in runs)]

    def med(name: str, i: int) -> float:
        return statistics.median(run[name][i] for run in runs) / 1000

    def total(keep: Any) -> float:
        return (
            statistics.median(sum(v[0] for k, v in run.items() if keep(k)) for run in runs) / 1000
        )

    packages: dict[str, float] = {}
    for name in names:
        top = name.split(".")[0]
        packages[top] = packages.get(top, 0.0) + med(name, 0)
    largest = sorted(names, key=lambda name: med(name, 0), reverse=True)[:10]
    return {
        "total": stats([sum(v[0] for v in run.values()) / 1e6 for run in runs]),
        "kenomem_ms": total(lambda k: k == "kenomem" or k.startswith("kenomem.")),
        "modules": statistics.median(len(run) for run in runs),
        "by_package_ms": dict(sorted(packages.items(), key=lambda kv: -kv[1])[:8]),
        "largest": [
            {"module": k, "self_ms": med(k, 0), "cumulative_ms": med(k, 1)} for k in largest
        ],
    }


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def render(result: dict[str, Any], s: dict[str, Any], runs: int) -> str:
    n = result["size"]
    o = s["overall"]
    at_target = n == TARGET_SIZE
    rx = s["reindex"]
    rows = [
        [
            f"reindex ({rx['n']} run{'s' if rx['n'] > 1 else ''})",
            f"{secs(rx['median'])} s = {s['reindex_per_second_wall']:,.0f} mem/s",
            secs(rx["min"]) + " s",
            iqr(rx, secs, "s"),
            f"kenomem's own per_second: {s['reindex_per_second_reported']:,.0f}/s",
        ],
    ]

    def row(label: str, st: dict[str, float], note: str) -> list[str]:
        return [label, ms(st["median"]), ms(st["min"]), iqr(st), note]

    rows.append(row("floor (bench/floor.py)", o["floor"], "1.00×"))
    labels = {"recall": "recall --json", "recall_no_touch": "recall --json --no-touch"}
    for key, label in labels.items():
        ratio, per_round = o[f"{key}/floor"], o[f"{key}/floor per round"]
        note = f"{ratio:.2f}× floor (per round {per_round:.2f}×)"
        if key == "recall" and at_target:
            note += f"; target ≤ {RECALL_TARGET}×: {verdict(ratio <= RECALL_TARGET)}"
        rows.append(row(label, o[key], note))
    if "rg" in o:
        rows.append(row("rg -il (query words)", o["rg"], f"recall is {o['recall/rg']:.1f}× rg"))
    if "baseline" in o:
        for key, mine, label in (
            ("baseline", "recall", "baseline recall --json"),
            ("baseline_no_touch", "recall_no_touch", "baseline recall --json --no-touch"),
        ):
            note = (
                f"{o[f'{key}/floor']:.2f}× floor; this one / baseline "
                f"{o[f'{mine}/{key}']:.2f}× (per round {o[f'{mine}/{key} per round']:.2f}×)"
            )
            rows.append(row(label, o[key], note))
    diff = s["remember-floor"]
    note = f"floor {signed_ms(diff)} (per round {signed_ms(s['remember-floor per round'])})"
    if at_target:
        note += f"; target < +{REMEMBER_TARGET_MS:.0f} ms: "
        note += verdict(diff * 1000 < REMEMBER_TARGET_MS)
    rows.append(row("remember (new memory)", s["remember"], note))
    rows.append(row("python -c pass", s["python_pass"], ""))
    imp = s["imports"]
    note = f"kenomem's own: {imp['kenomem_ms']:.1f} ms; {imp['modules']:.0f} modules in all"
    rows.append(row(f"imports of one recall ({imp['total']['n']} runs)", imp["total"], note))
    out = [f"### {n:,} memories", ""]
    out.append(
        f"Medians of {runs} runs (min, interquartile range); recall, floor and rg "
        f"{'and the baseline ' if 'baseline' in o else ''}interleaved; remember "
        "interleaved with the floor."
    )
    out += ["", table(["measurement", "median", "min", "IQR", "comparison"], rows, "lrrrl"), ""]

    qrows = []
    for q, b in s["queries"].items():
        cells = [
            f"`{q}`",
            ms(b["floor"]["median"]),
            ms(b["recall"]["median"]),
            f"{b['recall/floor']:.2f}×",
            f"{b['recall/floor per round']:.2f}×",
            ms(b["recall_no_touch"]["median"]),
            f"{b['recall_no_touch/floor']:.2f}×",
        ]
        if "rg" in b:
            cells += [ms(b["rg"]["median"]), f"{b['recall/rg']:.1f}×"]
        qrows.append(cells)
    header = ["query", "floor", "recall", "/floor", "/floor per round", "--no-touch", "/floor"]
    if "rg" in o:
        header += ["rg", "recall/rg"]
    out += [table(header, qrows, "l" + "r" * (len(header) - 1)), ""]

    irows = [
        [f"`{m['module']}`", f"{m['self_ms']:.1f}", f"{m['cumulative_ms']:.1f}"]
        for m in imp["largest"]
    ]
    out += [table(["largest imports (self time)", "self ms", "cumulative ms"], irows, "lrr")]
    packages = ", ".join(f"{k} {v:.1f}" for k, v in imp["by_package_ms"].items())
    out += ["", f"Import self time by top-level package (ms): {packages}.", ""]
    return "\n".join(out)


# Machine facts.


def first_line(cmd: list[str], env: dict[str, str]) -> str | None:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    lines = proc.stdout.strip().splitlines()
    return lines[0] if lines else None


def machine_facts(runner: Runner) -> dict[str, Any]:
    probe = (
        "import importlib.metadata as m, platform; "
        "print(platform.python_version(), m.version('whoosh3'))"
    )
    python_version, whoosh = (first_line([runner.python, "-c", probe], runner.env) or "? ?").split()
    cpu = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    git = ["git", "-C", str(BENCH.parent)]
    commit = first_line([*git, "rev-parse", "--short", "HEAD"], runner.env)
    if commit and first_line([*git, "status", "--porcelain", "--", "kenomem"], runner.env):
        commit += ", kenomem/ modified"
    return {
        "host": socket.gethostname(),
        "cores": os.cpu_count(),
        "cpu": cpu,
        "os": platform.platform(),
        "python": python_version,
        "python_path": runner.python,
        "whoosh3": whoosh,
        "kenomem": first_line([runner.kenomem, "--version"], runner.env),
        "kenomem_path": runner.kenomem,
        "baseline": first_line([runner.baseline, "--version"], runner.env)
        if runner.baseline
        else None,
        "baseline_path": runner.baseline,
        "rg": first_line([runner.rg, "--version"], runner.env) if runner.rg else None,
        "commit": commit,
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def render_facts(facts: dict[str, Any]) -> str:
    return (
        f"Machine: {facts['cores']} cores ({facts['cpu'] or 'unknown CPU'}), {facts['os']}; "
        f"Python {facts['python']}, whoosh3 {facts['whoosh3']}, {facts['kenomem']}"
        f" (commit {facts['commit'] or '?'}); {facts['rg'] or 'rg not found'}; "
        f"load average {' '.join(map(str, facts['load_average']))} at the start."
    )


# The command line.


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    here = Path(sys.executable).parent
    today = datetime.now().strftime("%Y-%m-%d")
    default_out = BENCH / "results" / f"{today}-{socket.gethostname()}.json"
    p = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument(
        "--sizes",
        default="1000,10000",
        help="vault sizes, comma-separated (100000 takes minutes to index)",
    )
    p.add_argument("--runs", type=int, default=15, help="measured runs of each command")
    p.add_argument("--warmup", type=int, default=2, help="warm-up runs before the measured")
    p.add_argument(
        "--reindex-runs",
        type=int,
        default=0,
        help="reindex runs per size (0: 1 at 100,000 and more, else 3)",
    )
    p.add_argument(
        "--importtime-runs",
        type=int,
        default=5,
        help="runs of python -X importtime (medians per module)",
    )
    p.add_argument(
        "--cache-dir",
        type=Path,
        default=Path("/tmp/kenomem-bench"),
        help="where the generated vaults are kept, as <cache-dir>/<size>",
    )
    p.add_argument("--fresh", action="store_true", help="generate the vaults again")
    p.add_argument(
        "--keep-work",
        action="store_true",
        help="keep the working copies (<cache-dir>/work-<size>) afterwards",
    )
    p.add_argument("--python", default=str(here / "python"), help="the Python of floor.py etc.")
    p.add_argument("--kenomem", default=str(here / "kenomem"), help="the kenomem command")
    p.add_argument("--out", type=Path, default=default_out, help="the JSON file of raw timings")
    p.add_argument(
        "--baseline",
        default=None,
        help="the kenomem command of an earlier release (e.g. a git worktree's venv): its "
        "recall is timed too, interleaved, on its own copy of each vault",
    )
    args = p.parse_args(argv)
    try:
        args.sizes = [int(size.replace("_", "")) for size in args.sizes.split(",")]
    except ValueError:
        p.error(f"--sizes: not a list of numbers: {args.sizes}")
    if min(args.sizes) < 1 or args.runs < 1 or args.warmup < 0 or args.importtime_runs < 1:
        p.error("sizes and runs must be positive, warm-up runs not negative")
    for name in ("python", "kenomem", *(("baseline",) if args.baseline else ())):
        if not shutil.which(getattr(args, name)):
            p.error(f"--{name}: not found: {getattr(args, name)}")
    return args


def check_queries() -> None:
    vocabulary = {w.lower() for w in (*TOPICS, *SUBJECTS, *WORDS)}
    missing = [w for q in QUERIES for w in q.split() if w not in vocabulary]
    if missing:
        raise SystemExit(f"query words no longer in gen_vault's vocabulary: {missing}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    check_queries()
    rg = shutil.which("rg")
    runner = Runner(args.python, args.kenomem, rg, args.baseline)
    facts = machine_facts(runner)
    print(render_facts(facts) + "\n", flush=True)
    if not rg:
        log("rg not found: the rg comparison is left out")
    doc: dict[str, Any] = {
        "started": datetime.now().isoformat(timespec="seconds"),
        "machine": facts,
        "settings": {
            "sizes": args.sizes,
            "runs": args.runs,
            "warmup": args.warmup,
            "reindex_runs": args.reindex_runs,
            "importtime_runs": args.importtime_runs,
            "baseline": args.baseline,
            "queries": list(QUERIES),
            "unit": "seconds; importtime: raw in microseconds, summary in ms",
        },
        "sizes": {},
        "incidents": runner.incidents,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    try:
        warm_up(runner, args.cache_dir)
        for n in args.sizes:
            result = measure_size(runner, n, args)
            summary = summarize(result)
            doc["sizes"][str(n)] = {"raw": result, "summary": summary}
            args.out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
            print(render(result, summary, args.runs), flush=True)
    except BenchError as exc:
        log(f"stopped: {exc}")
        return 1
    finally:
        doc["finished"] = datetime.now().isoformat(timespec="seconds")
        args.out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        log(f"\nraw timings: {args.out}")
    if runner.incidents:
        log(f"{len(runner.incidents)} command(s) failed once and were re-run; see the JSON")
    return 0


if __name__ == "__main__":
    sys.exit(main())
