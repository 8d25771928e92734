"""Benchmark kenomem against its peers on the same generated vaults.

    python bench/peers.py                        # 1,000 and 10,000 memories
    python bench/peers.py --quick                # 1k and 10k, fewer runs: a first look
    python bench/peers.py --sizes 100000         # minutes: Whoosh indexes 100k slowly
    python bench/peers.py --engines whoosh       # leave tantivy out

For each size, as whole processes on the same files and with run.py's three queries:
kenomem's cold `recall` on each engine asked for (`--engines`), its `reindex` and cold
`remember`; `rg -il`, `rg -l -i -w` and `grep -ril`; and basic-memory's own search command
(`basic-memory tool search-notes`), installed by this script into a separate virtual
environment built with a Python >= 3.12 (basic-memory needs one). Searches are interleaved
round after round, so that the machine's noise falls on all of them alike; ratios are to
`rg -il` of the same run. Each process's peak resident memory comes from `wait4`. Markdown
tables go to stdout, progress to stderr, every raw figure to a JSON file (bench/README.md).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from run import (  # noqa: E402
    QUERIES,
    Runner,
    cached_vault,
    check_queries,
    generator_digest,
    log,
    machine_facts,
    ms,
    remember_text,
    render_facts,
    secs,
    stats,
    table,
    working_copy,
)

BASIC_MEMORY = (
    "basic-memory==0.23.2"  # 0.24.x pins fastmcp 4.1.3, whose deps are not all on PyPI yet
)
# basic-memory's settings for a benchmark: no embeddings (the model would be downloaded),
# no update checks, no sync of every project before each command (we index once, first).
BM_CONFIG = (
    ("semantic_search_enabled", "false"),
    ("auto_update", "false"),
    ("cloud_promo_opt_out", "true"),
    ("skip_initialization_sync", "true"),
    ("index_changes", "false"),
    ("ensure_frontmatter_on_sync", "false"),
)
BM_MARKER = ".bench-basic-memory.json"
REFERENCE = "rg -il"  # what the ratios are to
TIME = "/usr/bin/time"  # GNU time, for each command's own peak RSS


@dataclass
class Run:
    seconds: float
    rss_kb: int  # peak resident set of the process (and of the children it waited for)
    code: int
    stdout: str = ""
    stderr: str = ""


def run(cmd: list[str], env: dict[str, str], capture: bool = False) -> Run:
    """One process: wall seconds from start to reaped, and its peak RSS from wait4 (the
    largest of the process and of the children it waited for, as Linux reports it)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            cmd, stdout=out if capture else subprocess.DEVNULL, stderr=err, env=env, text=True
        )
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Run(seconds, usage.ru_maxrss, proc.returncode, out.read(), err.read())


def peak_rss(cmd: list[str], env: dict[str, str]) -> tuple[Run, int | None]:
    """One run with its output, under GNU time when there is one, for the peak RSS of the
    command alone. wait4's figure cannot go below the RSS of this benchmark's own process:
    the child is forked (vforked) from it, and Linux carries the high-water mark over
    exec. GNU time is a small process, so its figure is the command's own."""
    if not TIME or not Path(TIME).exists():
        return run(cmd, env, capture=True), None
    with tempfile.NamedTemporaryFile("r") as report:
        done = run([TIME, "-f", "%M", "-o", report.name, *cmd], env, capture=True)
        lines = report.read().strip().splitlines()
    try:
        return done, int(lines[-1])
    except (IndexError, ValueError):
        return done, None


@dataclass
class Tool:
    """One thing timed: how to build its command for a query, and its environment."""

    name: str
    kind: str  # "kenomem", "text", "peer"
    build: Any  # (query) -> list[str]
    env: dict[str, str]
    runs: int  # measured rounds it takes part in
    failed: str | None = None


@dataclass
class Bench:
    args: argparse.Namespace
    env: dict[str, str]
    notes: list[str] = field(default_factory=list)
    incidents: list[dict[str, Any]] = field(default_factory=list)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)
        log("  note: " + text)

    def checked(
        self, cmd: list[str], env: dict[str, str] | None = None, capture: bool = False
    ) -> Run:
        """A run that must succeed: run once more on failure; None of the two is hidden."""
        env = env or self.env
        first = run(cmd, env, capture)
        if first.code == 0:
            return first
        second = run(cmd, env, capture)
        self.incidents.append(
            {
                "cmd": cmd,
                "exit": first.code,
                "stderr": first.stderr.strip()[-2000:],
                "retry_exit": second.code,
                "retry_stderr": second.stderr.strip()[-2000:],
            }
        )
        log(f"  ! exit {first.code}, re-ran: exit {second.code}: {' '.join(cmd)}")
        if second.code != 0:
            tail = (second.stderr or first.stderr).strip().splitlines()[-3:]
            raise RuntimeError(f"exit {second.code}: {' '.join(cmd)}: " + " / ".join(tail))
        return second


# Finding a Python for basic-memory and building its virtual environment.


def python_version(python: str) -> tuple[int, int] | None:
    try:
        proc = subprocess.run(
            [python, "-c", "import sys; print(*sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    parts = proc.stdout.split()
    return (int(parts[0]), int(parts[1])) if proc.returncode == 0 and len(parts) == 2 else None


def find_python312(explicit: str | None) -> tuple[str | None, list[str]]:
    """A Python >= 3.12: --peers-python, then python3.1x on the PATH, then pyenv's and
    uv's installed versions. Returns it (or None) and what was tried."""
    candidates = [explicit] if explicit else []
    for minor in (14, 13, 12):
        found = shutil.which(f"python3.{minor}")
        if found:
            candidates.append(found)
    roots = [os.environ.get("PYENV_ROOT", ""), str(Path.home() / ".pyenv")]
    for root in filter(None, roots):
        candidates += sorted(glob.glob(f"{root}/versions/3.1[2-9]*/bin/python3"), reverse=True)
    candidates += sorted(
        glob.glob(str(Path.home() / ".local/share/uv/python/cpython-3.1[2-9]*/bin/python3")),
        reverse=True,
    )
    tried = []
    for python in dict.fromkeys(candidates):
        version = python_version(python)
        tried.append(f"{python}: {'.'.join(map(str, version)) if version else 'does not run'}")
        if version and version >= (3, 12):
            return python, tried
    return None, tried


def basic_memory_venv(bench: Bench) -> str | None:
    """The basic-memory command in --peers-venv, installed there first if needed."""
    venv: Path = bench.args.peers_venv
    command = venv / "bin" / "basic-memory"
    if command.exists() and run([str(command), "--version"], bench.env).code == 0:
        log(f"  basic-memory: {venv} (installed)")
        return str(command)
    python, tried = find_python312(bench.args.peers_python)
    if python is None:
        bench.note(
            "basic-memory: not run, needs Python >= 3.12, none available (tried: "
            + ("; ".join(tried) or "nothing found")
            + "; --peers-python to give one)"
        )
        return None
    log(f"  building {venv} with {python} and installing {bench.args.basic_memory} (minutes)")
    steps = [
        [python, "-m", "venv", "--clear", str(venv)],
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", bench.args.basic_memory],
    ]
    for step in steps:
        proc = subprocess.run(step, capture_output=True, text=True, env=bench.env)
        if proc.returncode != 0:
            errors = [line for line in proc.stderr.splitlines() if "ERROR" in line][-2:]
            bench.note(f"basic-memory: not run, `{' '.join(step)}` failed: " + " / ".join(errors))
            return None
    return str(command)


def basic_memory_vault(bench: Bench, command: str, vault: Path, n: int) -> tuple[Path, dict]:
    """A copy of the vault registered as basic-memory's project `bench`, with its own HOME
    (config and database), indexed once. basic-memory rewrites the frontmatter of every
    file it indexes, so it never sees the cached vault. Indexing is slow, so the indexed
    copy is kept in the cache dir and used again while the generator is unchanged."""
    cache: Path = bench.args.cache_dir
    work, home = cache / f"peers-bm-{n}", cache / f"peers-bm-home-{n}"
    marker = home / BM_MARKER
    wanted = {"n": n, "generator": generator_digest(), "package": bench.args.basic_memory}
    env = {**bench.env, "HOME": str(home), "NO_COLOR": "1"}
    if not bench.args.fresh and marker.exists():
        try:
            done = json.loads(marker.read_text())
            if done.get("wanted") == wanted:
                log(f"  basic-memory project: {work} (indexed before, in {done['seconds']:.0f} s)")
                return work, {"env": env, "index": done, "reused": True}
        except (ValueError, KeyError):
            pass
    for path in (work, home):
        if path.exists():
            shutil.rmtree(path)
    working_copy(vault, work)
    home.mkdir(parents=True)
    for key, value in BM_CONFIG:
        bench.checked([command, "config", "set", key, value], env)
    bench.checked([command, "project", "add", "bench", str(work), "--default"], env)
    log(f"  basic-memory: indexing {n:,} memories (slow: minutes at 10,000) ...")
    index = bench.checked([command, "reindex", "--search", "--project", "bench"], env, True)
    done = {"wanted": wanted, "seconds": index.seconds, "rss_kb": index.rss_kb}
    done["output"] = index.stdout.strip().splitlines()[-4:]
    marker.write_text(json.dumps(done))
    log(f"  basic-memory indexed in {index.seconds:.0f} s")
    return work, {"env": env, "index": done, "reused": False}


# kenomem's working copies.


def set_engine(vault: Path, engine: str) -> None:
    toml = vault / "kenomem.toml"
    text = toml.read_text() if toml.exists() else ""
    line = f'engine = "{engine}"'
    if '# engine = "whoosh"' in text:
        text = text.replace('# engine = "whoosh"', line, 1)
    elif "[index]" in text:
        text = text.replace("[index]", "[index]\n" + line, 1)
    else:
        text += f"\n[index]\n{line}\n"
    toml.write_text(text)


def kenomem_engine_copy(bench: Bench, vault: Path, n: int, engine: str) -> tuple[Path, list[Run]]:
    """A working copy indexed with `engine`: reindex runs (timed; for an engine other than
    whoosh, after one untimed reindex that switches the engine), then a check with stats."""
    args = bench.args
    work = working_copy(vault, args.cache_dir / f"peers-{engine}-{n}")
    set_engine(work, engine)
    reindex = [args.kenomem, "reindex", "--vault", str(work), "--json"]
    if engine != "whoosh":
        bench.checked(reindex, capture=True)
    runs = args.reindex_runs or (1 if n >= 100_000 and engine == "whoosh" else 3)
    timed = []
    for i in range(runs):
        r = bench.checked(reindex, capture=True)
        timed.append(r)
        per_second = json.loads(r.stdout).get("per_second")
        log(f"  {engine} reindex {i + 1}/{runs}: {r.seconds:.1f} s ({per_second}/s own)")
    stats_run = bench.checked([args.kenomem, "stats", "--vault", str(work), "--json"], capture=True)
    used = json.loads(stats_run.stdout).get("engine")
    if used != engine:
        raise RuntimeError(f"kenomem stats says engine {used!r}, not {engine!r}")
    return work, timed


# The measurements of one size.


def text_tools(bench: Bench, vault: Path) -> list[Tool]:
    def words(query: str) -> list[str]:
        return [arg for word in query.split() for arg in ("-e", word)]

    tools = []
    rg = bench.args.rg if shutil.which(bench.args.rg) else None
    if rg:
        tools.append(
            Tool("rg -il", "text", lambda q: [rg, "-il", *words(q), str(vault)], bench.env, 0)
        )
        tools.append(
            Tool(
                "rg -l -i -w",
                "text",
                lambda q: [rg, "-l", "-i", "-w", *words(q), str(vault)],
                bench.env,
                0,
            )
        )
    else:
        bench.note(f"rg: not found ({bench.args.rg}); ratios are to grep -ril instead")
    grep = shutil.which("grep")
    if grep:
        grep_cmd = [grep, "-ril", "--include=*.md", "--exclude-dir=.kenomem"]
        tools.append(
            Tool("grep -ril", "text", lambda q: [*grep_cmd, *words(q), str(vault)], bench.env, 0)
        )
    return tools


def count_hits(tool: Tool, out: str) -> int | None:
    if tool.kind == "text":
        return len(out.splitlines())
    try:
        doc = json.loads(out)
    except ValueError:
        return None
    if tool.kind == "peer":
        return doc.get("total", len(doc.get("results", [])))
    return len(doc.get("results", []))


def measure_size(bench: Bench, n: int, bm_command: str | None) -> dict[str, Any]:
    args = bench.args
    log(f"\n== {n:,} memories ==")
    vault = cached_vault(n, args.cache_dir, args.fresh)
    result: dict[str, Any] = {"size": n, "vault": str(vault), "reindex": {}, "skipped": {}}
    tools: list[Tool] = []
    copies: list[Path] = []
    remember_targets: dict[str, Path] = {}
    for engine in args.engines:
        try:
            work, timed = kenomem_engine_copy(bench, vault, n, engine)
        except (RuntimeError, ValueError) as exc:
            reason = str(exc).strip()
            bench.note(f"kenomem on {engine}: not run at {n:,}: {reason}")
            result["skipped"][f"kenomem {engine}"] = reason
            shutil.rmtree(args.cache_dir / f"peers-{engine}-{n}", ignore_errors=True)
            continue
        copies.append(work)
        result["reindex"][engine] = [
            {"wall": r.seconds, "rss_kb": r.rss_kb, "report": json.loads(r.stdout)} for r in timed
        ]
        remember_targets[engine] = work
        tools.append(
            Tool(
                f"kenomem recall ({engine})",
                "kenomem",
                lambda q, w=work: [args.kenomem, "recall", *q.split(), "--vault", str(w), "--json"],
                bench.env,
                args.runs,
            )
        )
    files = copies[0] if copies else working_copy(vault, args.cache_dir / f"peers-files-{n}")
    if not copies:
        copies.append(files)
    for tool in text_tools(bench, files):
        tool.runs = args.runs
        tools.append(tool)
    if bm_command and n > args.bm_max_size:
        bench.note(
            f"basic-memory: not run at {n:,} memories (over --bm-max-size {args.bm_max_size:,})"
        )
        result["skipped"]["basic-memory"] = f"over --bm-max-size {args.bm_max_size}"
    elif bm_command:
        try:
            work, info = basic_memory_vault(bench, bm_command, vault, n)
            result["basic_memory_index"] = {k: v for k, v in info.items() if k != "env"}
            tools.append(
                Tool(
                    "basic-memory search-notes",
                    "peer",
                    lambda q: [
                        bm_command,
                        "tool",
                        "search-notes",
                        q,
                        "--json",
                        "--project",
                        "bench",
                    ],
                    info["env"],
                    min(args.bm_runs, args.runs),
                )
            )
        except RuntimeError as exc:
            bench.note(f"basic-memory: not run at {n:,}: {exc}")
            result["skipped"]["basic-memory"] = str(exc)

    # One untimed run of each, for the bytecode caches and the number of hits.
    hits: dict[str, dict[str, int | None]] = {}
    peaks: dict[str, dict[str, int | None]] = {}
    for tool in tools:
        hits[tool.name] = {}
        for query in QUERIES:
            first, rss = peak_rss(tool.build(query), tool.env)
            peaks.setdefault(tool.name, {})[query] = rss
            if first.code not in (0, 1) or (first.code == 1 and tool.kind != "text"):
                tool.failed = f"exit {first.code}: {first.stderr.strip()[-300:]}"
                bench.note(f"{tool.name}: left out at {n:,}, {tool.failed}")
                break
            hits[tool.name][query] = count_hits(tool, first.stdout)
    result["hits"] = hits
    result["peak_rss_kb"] = peaks
    result["python_pass_peak_rss_kb"] = peak_rss([args.python, "-c", "pass"], bench.env)[1]
    tools = [t for t in tools if not t.failed]

    rounds: list[dict[str, Any]] = []
    bare: list[Run] = []
    for r in range(args.warmup + args.runs):
        kept = r - args.warmup
        one = run([args.python, "-c", "pass"], bench.env)
        if kept >= 0:
            bare.append(one)
        for query in QUERIES:
            row: dict[str, Any] = {"round": kept, "query": query}
            for tool in tools:
                if kept >= tool.runs or (kept < 0 and tool.kind == "peer" and r > 0):
                    continue
                x = run(tool.build(query), tool.env)
                if x.code not in (0, 1):
                    bench.incidents.append(
                        {"cmd": tool.build(query), "exit": x.code, "stderr": x.stderr[-2000:]}
                    )
                    log(f"  ! {tool.name}: exit {x.code}")
                    continue
                row[tool.name] = {"seconds": x.seconds, "rss_kb": x.rss_kb}
            if kept >= 0:
                rounds.append(row)
        log(
            f"  search round {kept + 1}/{args.runs}"
            if kept >= 0
            else f"  warm-up {r + 1}/{args.warmup}"
        )
    result["rounds"] = rounds
    result["python_pass"] = [{"seconds": b.seconds, "rss_kb": b.rss_kb} for b in bare]

    # Cold remember on each engine, interleaved.
    remember: dict[str, list[dict[str, float]]] = {e: [] for e in remember_targets}
    for r in range(args.warmup + args.runs):
        for engine, work in remember_targets.items():
            cmd = [args.kenomem, "remember", remember_text(n, r + 1), "--vault", str(work)]
            x = run(cmd, bench.env)
            if x.code != 0:
                bench.incidents.append({"cmd": cmd, "exit": x.code, "stderr": x.stderr[-2000:]})
                log(f"  ! remember ({engine}): exit {x.code}: {x.stderr.strip()[-300:]}")
                continue
            if r >= args.warmup:
                remember[engine].append({"seconds": x.seconds, "rss_kb": x.rss_kb})
    result["remember"] = remember
    log(f"  remember: {args.runs} runs on {', '.join(remember_targets) or 'no engine'}")
    if not args.keep_work:
        for path in copies:
            shutil.rmtree(path, ignore_errors=True)
    return result


# The summary and its tables.


def ratio_text(x: float) -> str:
    return f"{x:.2f}×" if x < 10 else f"{x:.0f}×"


def mb(kb: float) -> str:
    return f"{kb / 1024:.0f} MB"


def summarize(result: dict[str, Any]) -> dict[str, Any]:
    n = result["size"]
    rounds = result["rounds"]
    names = list(dict.fromkeys(k for row in rounds for k in row if k not in ("round", "query")))
    reference = REFERENCE if REFERENCE in names else ("grep -ril" if "grep -ril" in names else None)
    search: dict[str, Any] = {}
    for name in names:
        rows = [row for row in rounds if name in row]
        secs_ = [row[name]["seconds"] for row in rows]
        rss = [row[name]["rss_kb"] for row in rows]
        entry: dict[str, Any] = {"time": stats(secs_), "rss_kb": stats(rss)}
        own = [v for v in result.get("peak_rss_kb", {}).get(name, {}).values() if v]
        if own:
            entry["own_peak_rss_kb"] = max(own)
        if reference:
            ref = [row[reference]["seconds"] for row in rows if reference in row]
            entry["to_reference"] = statistics.median(secs_) / statistics.median(ref)
            entry["to_reference_per_round"] = statistics.median(
                row[name]["seconds"] / row[reference]["seconds"] for row in rows if reference in row
            )
        entry["by_query"] = {
            q: statistics.median(row[name]["seconds"] for row in rows if row["query"] == q)
            for q in QUERIES
            if any(row["query"] == q for row in rows)
        }
        search[name] = entry
    reindex = {}
    for engine, runs in result["reindex"].items():
        walls = [r["wall"] for r in runs]
        reindex[engine] = {
            "time": stats(walls),
            "per_second_wall": n / statistics.median(walls),
            "per_second_reported": statistics.median(
                r["report"].get("per_second", 0) for r in runs
            ),
            "rss_kb": max(r["rss_kb"] for r in runs),
        }
    remember = {
        engine: {
            "time": stats([r["seconds"] for r in runs]),
            "rss_kb": stats([r["rss_kb"] for r in runs]),
        }
        for engine, runs in result["remember"].items()
        if runs
    }
    s: dict[str, Any] = {
        "reference": reference,
        "search": search,
        "reindex": reindex,
        "remember": remember,
        "python_pass": stats([b["seconds"] for b in result["python_pass"]]),
        "python_pass_rss_kb": statistics.median(b["rss_kb"] for b in result["python_pass"]),
    }
    bm = result.get("basic_memory_index")
    if bm:
        s["basic_memory_index"] = {
            "seconds": bm["index"]["seconds"],
            "per_second": n / bm["index"]["seconds"],
            "rss_kb": bm["index"]["rss_kb"],
            "reused": bm["reused"],
        }
    return s


def render(result: dict[str, Any], s: dict[str, Any]) -> str:
    n = result["size"]
    ref = s["reference"]
    out = [f"### {n:,} memories (peers)", ""]
    rows = []
    for name, e in s["search"].items():
        t = e["time"]
        ratio = "–"
        if ref:
            per_round = ratio_text(e["to_reference_per_round"])
            ratio = f"{ratio_text(e['to_reference'])} (per round {per_round})"
        hits = result["hits"].get(name, {})
        hit_text = " / ".join("?" if h is None else str(h) for h in hits.values())
        iq = "–" if t["n"] < 2 else f"{ms(t['q1'])[:-3]}–{ms(t['q3'])}"
        rows.append(
            [
                name,
                str(t["n"]),
                ms(t["median"]),
                ms(t["min"]),
                iq,
                ratio,
                mb(e["own_peak_rss_kb"]) if "own_peak_rss_kb" in e else "?",
                hit_text,
            ]
        )
    p = s["python_pass"]
    rows.append(
        [
            "python -c pass",
            str(p["n"]),
            ms(p["median"]),
            ms(p["min"]),
            "–",
            "",
            mb(result["python_pass_peak_rss_kb"]) if result.get("python_pass_peak_rss_kb") else "?",
            "",
        ]
    )
    header = [
        "cold search (a new process)",
        "runs",
        "median",
        "min",
        "IQR",
        f"× {ref or '?'}",
        "peak RSS",
        "hits per query",
    ]
    out.append(
        "Medians over the three queries and the rounds, interleaved; the ratio is to "
        f"`{ref}` in the same rounds. Peak RSS: the largest over the three queries, under "
        "GNU time. Hits: results returned (kenomem: up to 10; basic-memory: its total), "
        "or files listed."
    )
    out += ["", table(header, rows, "lrrrrlrl"), ""]
    rows = []
    for engine, e in s["reindex"].items():
        t = e["time"]
        rows.append(
            [
                f"kenomem reindex ({engine})",
                str(t["n"]),
                f"{secs(t['median'])} s",
                f"{e['per_second_wall']:,.0f} mem/s (own: {e['per_second_reported']:,.0f}/s)",
                mb(e["rss_kb"]),
            ]
        )
    bm = s.get("basic_memory_index")
    if bm:
        reused = ", indexed by an earlier run" if bm["reused"] else ""
        rows.append(
            [
                "basic-memory reindex --search",
                "1",
                f"{secs(bm['seconds'])} s",
                f"{bm['per_second']:,.1f} mem/s{reused}",
                mb(bm["rss_kb"]),
            ]
        )
    for engine, e in s["remember"].items():
        t = e["time"]
        rows.append(
            [
                f"kenomem remember ({engine})",
                str(t["n"]),
                ms(t["median"]),
                f"min {ms(t['min'])}",
                f"{mb(e['rss_kb']['median'])} (max {mb(e['rss_kb']['max'])})",
            ]
        )
    out += [
        table(["indexing and writing", "runs", "median", "rate", "peak RSS"], rows, "lrrll"),
        "",
    ]
    if result["skipped"]:
        out += ["Not run: " + "; ".join(f"{k}: {v}" for k, v in result["skipped"].items()), ""]
    return "\n".join(out)


# The command line.


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    here = Path(sys.executable).parent
    today = datetime.now().strftime("%Y-%m-%d")
    default_out = BENCH / "results" / f"{today}-{socket.gethostname()}-peers.json"
    p = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    p.add_argument("--sizes", default="1000,10000", help="vault sizes, comma-separated")
    p.add_argument(
        "--engines",
        default="whoosh,tantivy",
        help="kenomem's engines to run; one that cannot be used is left out with a note",
    )
    p.add_argument("--runs", type=int, default=11, help="measured rounds of every search")
    p.add_argument("--warmup", type=int, default=1, help="warm-up rounds, not kept")
    p.add_argument(
        "--reindex-runs",
        type=int,
        default=0,
        help="kenomem reindex runs per engine (0: 3, or 1 for whoosh at 100,000 and more)",
    )
    p.add_argument(
        "--bm-runs",
        type=int,
        default=5,
        help="measured rounds of basic-memory's search (each takes seconds)",
    )
    p.add_argument(
        "--bm-max-size",
        type=int,
        default=10_000,
        help="largest vault basic-memory indexes (~7 memories/s here)",
    )
    p.add_argument("--no-basic-memory", action="store_true", help="leave basic-memory out")
    p.add_argument("--basic-memory", default=BASIC_MEMORY, help="the pip requirement installed")
    p.add_argument(
        "--peers-python", help="a Python >= 3.12 for basic-memory's venv (default: looked for)"
    )
    p.add_argument(
        "--cache-dir",
        type=Path,
        default=Path("/tmp/kenomem-bench"),
        help="generated vaults, as <cache-dir>/<size>, and working copies",
    )
    p.add_argument(
        "--peers-venv",
        type=Path,
        help="basic-memory's virtual environment (default: <cache-dir>/peers-venv)",
    )
    p.add_argument(
        "--fresh",
        action="store_true",
        help="generate the vaults, and index basic-memory's copies, again",
    )
    p.add_argument("--keep-work", action="store_true", help="keep kenomem's working copies")
    p.add_argument(
        "--quick",
        action="store_true",
        help="1k and 10k, 3 rounds, 2 of basic-memory, 1 reindex: a first look",
    )
    p.add_argument("--python", default=str(here / "python"), help="the Python of python -c pass")
    p.add_argument("--kenomem", default=str(here / "kenomem"), help="the kenomem command")
    p.add_argument("--rg", default="rg", help="the ripgrep command")
    p.add_argument("--out", type=Path, default=default_out, help="the JSON file of raw figures")
    args = p.parse_args(argv)
    if args.quick:
        args.runs, args.warmup, args.bm_runs = 3, 1, 2
        args.reindex_runs = args.reindex_runs or 1
        if args.sizes == p.get_default("sizes"):
            args.sizes = "1000,10000"
    try:
        args.sizes = [int(size.replace("_", "")) for size in args.sizes.split(",")]
    except ValueError:
        p.error(f"--sizes: not a list of numbers: {args.sizes}")
    args.engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    if min(args.sizes) < 1 or args.runs < 1 or args.warmup < 0 or args.bm_runs < 1:
        p.error("sizes and runs must be positive, warm-up rounds not negative")
    for name in ("python", "kenomem"):
        if not shutil.which(getattr(args, name)):
            p.error(f"--{name}: not found: {getattr(args, name)}")
    args.peers_venv = args.peers_venv or args.cache_dir / "peers-venv"
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    check_queries()
    runner = Runner(args.python, args.kenomem, shutil.which(args.rg))
    bench = Bench(args, runner.env)
    facts = machine_facts(runner)
    print(render_facts(facts) + "\n", flush=True)
    doc: dict[str, Any] = {
        "started": datetime.now().isoformat(timespec="seconds"),
        "machine": facts,
        "settings": {
            k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items() if k != "out"
        }
        | {"queries": list(QUERIES), "unit": "seconds; rss in KB"},
        "notes": bench.notes,
        "sizes": {},
        "incidents": bench.incidents,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    try:
        bm_command = None
        if args.no_basic_memory:
            bench.note("basic-memory: left out (--no-basic-memory)")
        else:
            bm_command = basic_memory_venv(bench)
            if bm_command:
                version = run([bm_command, "--version"], bench.env, capture=True).stdout.strip()
                facts["basic_memory"] = version
                facts["basic_memory_python"] = run(
                    [str(Path(bm_command).parent / "python"), "--version"], bench.env, capture=True
                ).stdout.strip()
                log(f"  {version} ({facts['basic_memory_python']})")
        for n in args.sizes:
            result = measure_size(bench, n, bm_command)
            summary = summarize(result)
            doc["sizes"][str(n)] = {"raw": result, "summary": summary}
            args.out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
            print(render(result, summary), flush=True)
    except KeyboardInterrupt:
        log("interrupted")
        return 1
    finally:
        doc["finished"] = datetime.now().isoformat(timespec="seconds")
        args.out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        log(f"\nraw figures: {args.out}")
    if bench.notes:
        print("Notes:\n" + "\n".join(f"- {note}" for note in bench.notes), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
