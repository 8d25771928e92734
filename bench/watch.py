"""Benchmark `kenomem watch`: save-to-recall latency, an idle watcher's CPU, and cold recall
with and without a live watcher, on synthetic vaults.

    python bench/watch.py                       # 10,000 memories; recall at 100,000
    python bench/watch.py --size 1000 --runs 10 --idle-seconds 10 --recall-size 1000

1. With `kenomem watch` running on a working copy of the vault (--size memories), each run
   saves a memory file the way an editor does (a temporary file renamed over, or an
   existing file truncated and written in place) with a new made-up word in it, then runs
   `kenomem recall WORD --json --no-touch`, as whole processes one after the other, until
   the file is among the results: the latency is from the end of the save to the end of
   that recall.
2. Then, the vault left alone, the CPU time of the watcher's process (utime + stime from
   /proc/PID/stat) over --idle-seconds.
3. Cold `kenomem recall QUERY --json --no-touch` on --recall-size memories, interleaved
   with bench/floor.py, first without a watcher, then with one running and idle.

Markdown tables go to stdout, progress to stderr, and every raw timing to a JSON file (see
bench/README.md).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from gen_vault import sentence  # noqa: E402
from run import (  # noqa: E402
    QUERIES,
    BenchError,
    Runner,
    Timer,
    cached_vault,
    check_queries,
    first_line,
    iqr,
    log,
    machine_facts,
    ms,
    render_facts,
    secs,
    signed_ms,
    stats,
    table,
    verdict,
    warm_up,
    working_copy,
)

LATENCY_TARGET = 1.0  # the target: save to recall under 1 s at the 95th percentile
TARGET_SIZE = 10_000
HEARTBEAT = ".kenomem/watcher"  # "pid time pending", written by the watcher
FRESH_SECONDS = 3.0  # commands trust a beat this recent (kenomem/index/heartbeat.py)
MODES = ("rename", "in-place")  # how a run saves its file, in turn


# The watcher, as a process of its own.


class Beat:
    """The watcher's heartbeat line: its pid, when it beat (epoch seconds), what is pending."""

    def __init__(self, pid: int, beat: float, pending: int) -> None:
        self.pid, self.time, self.pending = pid, beat, pending

    @classmethod
    def read(cls, vault: Path) -> Beat | None:
        try:
            pid, beat, pending = (vault / HEARTBEAT).read_text().split()
            return cls(int(pid), float(beat), int(pending))
        except (OSError, ValueError):
            return None


class Watcher:
    """`kenomem watch --vault V --verbose --json` in the background.

    Its stderr (the log) is read by a thread that stamps each line with the time it
    arrived; its stdout is the summary it prints when stopped.
    """

    def __init__(self, runner: Runner, vault: Path) -> None:
        self.vault = vault
        self.cmd = [runner.kenomem, "watch", "--vault", str(vault), "--verbose", "--json"]
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            self.cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=runner.env
        )
        self.lines: list[tuple[float, str]] = []  # (perf_counter when read, line)
        self.arrived = threading.Condition()
        self.stdout = b""
        self._threads = [
            threading.Thread(target=self._read_log, args=(self.proc.stderr,), daemon=True),
            threading.Thread(target=self._read_out, args=(self.proc.stdout,), daemon=True),
        ]
        for thread in self._threads:
            thread.start()
        self.exit: int | None = None

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _read_log(self, stream: IO[bytes]) -> None:
        for raw in iter(stream.readline, b""):
            stamp = time.perf_counter()
            with self.arrived:
                self.lines.append((stamp, raw.decode(errors="replace").rstrip("\n")))
                self.arrived.notify_all()

    def _read_out(self, stream: IO[bytes]) -> None:
        self.stdout = stream.read()

    def _check_alive(self) -> None:
        if self.proc.poll() is not None:
            tail = "\n    ".join(line for _, line in self.lines[-10:])
            raise BenchError(f"the watcher exited with {self.proc.returncode}:\n    {tail}")

    def beat(self) -> Beat | None:
        beat = Beat.read(self.vault)
        return beat if beat is not None and beat.pid == self.pid else None

    def trusted(self) -> bool:
        """Whether commands would skip their scan now: a fresh beat with nothing pending."""
        beat = self.beat()
        return beat is not None and not beat.pending and time.time() - beat.time <= FRESH_SECONDS

    def wait_started(self, timeout: float) -> float:
        """Seconds from the start of the process to its first heartbeat."""
        while self.beat() is None:
            self._check_alive()
            if time.perf_counter() - self.started > timeout:
                raise BenchError(f"no heartbeat from the watcher after {timeout:.0f} s")
            time.sleep(0.02)
        return time.perf_counter() - self.started

    def reindexed(self, path: str, start: int) -> float | None:
        """When the first log line from `start` on said it reindexed `path`."""
        return next(
            (
                stamp
                for stamp, line in self.lines[start:]
                if line.split(" ", 2)[-1].startswith("reindexed:") and path in line
            ),
            None,
        )

    def wait_reindexed(self, path: str, start: int, timeout: float) -> float | None:
        """Until the watcher logs that it reindexed `path`; when the line arrived."""
        deadline = time.perf_counter() + timeout
        with self.arrived:
            while (stamp := self.reindexed(path, start)) is None:
                self._check_alive()
                left = deadline - time.perf_counter()
                if left <= 0:
                    return None
                self.arrived.wait(min(left, 0.5))
        return stamp

    def wait_idle(self, timeout: float = 30.0) -> None:
        """Until the watcher beats, after now, with nothing pending."""
        since = time.time()
        deadline = time.perf_counter() + timeout
        while True:
            self._check_alive()
            beat = self.beat()
            if beat is not None and beat.time >= since and not beat.pending:
                return
            if time.perf_counter() > deadline:
                raise BenchError(f"the watcher was not idle after {timeout:.0f} s")
            time.sleep(0.02)

    def cpu(self) -> dict[str, float]:
        """CPU seconds of the process (all its threads), and its context switches."""
        text = Path(f"/proc/{self.pid}/stat").read_text()
        fields = text[text.rindex(")") + 2 :].split()  # fields[0] is field 3, the state
        tick = os.sysconf("SC_CLK_TCK")
        switches = 0
        for task in Path(f"/proc/{self.pid}/task").iterdir():
            try:
                for line in (task / "status").read_text().splitlines():
                    if "ctxt_switches:" in line:  # voluntary and not
                        switches += int(line.split()[1])
            except (OSError, ValueError, IndexError):
                pass  # a thread that just ended
        return {
            "utime": int(fields[11]) / tick,
            "stime": int(fields[12]) / tick,
            "switches": switches,
            "threads": int(fields[17]),
        }

    def stop(self, timeout: float = 15.0) -> dict[str, Any]:
        """SIGTERM, then wait; SIGKILL if it does not stop. Returns what it said."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                log(f"  ! the watcher did not stop within {timeout:.0f} s of SIGTERM: killed")
                self.proc.kill()
                self.proc.wait()
        for thread in self._threads:
            thread.join(timeout=5)
        self.exit = self.proc.returncode
        try:
            summary = json.loads(self.stdout or b"null")
        except ValueError:
            summary = self.stdout.decode(errors="replace")
        warnings = [line for _, line in self.lines if line.startswith("warning:")]
        return {
            "cmd": self.cmd,
            "exit": self.exit,
            "summary": summary,
            "warnings": warnings,
            "log_lines": len(self.lines),
            "heartbeat_left": (self.vault / HEARTBEAT).exists(),
        }


# Statistics.


def percentile(values: list[float], p: float) -> float:
    """The p-th percentile (0-100), interpolated between the closest ranks."""
    ordered = sorted(values)
    k = (len(ordered) - 1) * p / 100
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    if ordered[hi] == float("inf") and (k > lo or ordered[lo] == float("inf")):
        return float("inf")
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def spread(values: list[float]) -> dict[str, float]:
    return {
        "n": len(values),
        "p50": percentile(values, 50),
        "p95": percentile(values, 95),
        "max": max(values),
        "min": min(values),
    }


# 1. Save to recall.


def made_up_word(rng: random.Random, taken: set[str]) -> str:
    """A word of no language, so that only the file saved in this run contains it."""
    while True:
        word = "".join(rng.choice("bdfgklmnprtvz") + rng.choice("aeiou") for _ in range(5))
        if word not in taken:
            taken.add(word)
            return word


def new_memory(i: int, word: str, rng: random.Random) -> str:
    """A memory file like those kenomem writes, with the word in its body."""
    now = datetime.now(UTC)
    stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    body = " ".join(sentence(rng) for _ in range(4))
    return (
        "---\n"
        f"id: mem_{now:%Y%m%d_%H%M%S}_{0xF0000 + i:05x}\n"
        "type: semantic\n"
        f"title: Watch note {i}\n"
        "tags: []\n"
        "scope: global\n"
        f"created: {stamp}\n"
        f"last_accessed: {stamp}\n"
        "access_count: 0\n"
        "reinforced: 0\n"
        "importance: 5\n"
        "pinned: false\n"
        "source: bench\n"
        "status: active\n"
        "supersedes: null\n"
        "---\n\n"
        f"{body} The code word is {word}.\n"
    )


def save_renamed(path: Path, text: str) -> None:
    """Write a temporary file beside the target, then rename it over (atomic save)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def save_in_place(path: Path, text: str) -> None:
    """Truncate the file and write it again, as most editors save by default."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def poll_recall(
    runner: Runner, vault: Path, word: str, path: str, saved: float, timeout: float
) -> dict[str, Any]:
    """Run `kenomem recall WORD` back to back until `path` is among its results."""
    cmd = [runner.kenomem, "recall", word, "--vault", str(vault), "--json", "--no-touch"]
    attempts: list[float] = []
    failed = 0
    while True:
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, env=runner.env, text=True)
        end = time.perf_counter()
        attempts.append(end - start)
        try:
            if proc.returncode != 0:
                raise ValueError(f"exit {proc.returncode}")
            found = path in {r["path"] for r in json.loads(proc.stdout)["results"]}
            failed = 0
        except (ValueError, KeyError, TypeError) as exc:
            failed += 1
            runner.incidents.append(
                {"cmd": cmd, "error": str(exc), "stderr": proc.stderr.strip(), "attempt": failed}
            )
            log(f"  ! {' '.join(cmd)}: {exc}")
            if proc.stderr.strip():
                log("    " + proc.stderr.strip().replace("\n", "\n    "))
            if failed >= 2:
                raise BenchError(f"failed twice: {' '.join(cmd)}") from None
            log("    running it once more")
            found = False
        if found:
            return {"latency": end - saved, "attempts": attempts}
        if end - saved > timeout:
            return {"latency": None, "attempts": attempts}


def measure_latency(
    runner: Runner,
    watcher: Watcher,
    vault: Path,
    args: argparse.Namespace,
    runs: int,
    taken: set[str],
    alone: bool = False,
) -> list[dict[str, Any]]:
    """--warmup + `runs` saves, each followed by recalls until the file is found.

    `alone`: the first recall starts only once the watcher has logged that it indexed
    the file, so that the watcher's own delay shows (otherwise the first recall, seeing
    changes pending in the heartbeat, usually scans and indexes the file itself).
    """
    kind = "alone" if alone else "latency"
    rng = random.Random(f"watch-{args.size}-{kind}")
    existing = sorted((vault / "semantic").glob("*.md"))
    rows = []
    for r in range(args.warmup + runs):
        kept = r >= args.warmup
        mode = MODES[r % len(MODES)]
        word = made_up_word(rng, taken)
        number = len(taken)  # distinct over both kinds of runs
        if mode == "rename":
            target = vault / "semantic" / f"watch-note-{number:03d}-{word}.md"
            text = new_memory(number, word, rng)
        else:
            target = existing[(number * 7919) % len(existing)]
            original = target.read_text(encoding="utf-8")
            text = original.rstrip("\n") + f"\n\nEdited: the code word is {word}.\n"
        rel = target.relative_to(vault).as_posix()
        lines_before = len(watcher.lines)
        (save_renamed if mode == "rename" else save_in_place)(target, text)
        saved = time.perf_counter()
        if alone:
            watcher.wait_reindexed(rel, lines_before, args.timeout)
        result = poll_recall(runner, vault, word, rel, saved, args.timeout)
        watcher.wait_idle()
        stamp = watcher.reindexed(rel, lines_before)
        row = {"run": r - args.warmup, "mode": mode, "path": rel, "word": word, **result}
        row["watcher_applied"] = None if stamp is None else stamp - saved
        label = f"{r + 1 - args.warmup}/{runs}" if kept else f"warm-up {r + 1}/{args.warmup}"
        found = "NOT FOUND" if result["latency"] is None else ms(result["latency"])
        by = "recall's scan" if stamp is None else f"watcher in {ms(stamp - saved)}"
        log(f"  {kind} {label} ({mode}): {found}, {len(result['attempts'])} recall(s), by {by}")
        if kept:
            rows.append(row)
        time.sleep(args.gap)
    return rows


def summarize_latency(runs: list[dict[str, Any]]) -> dict[str, Any]:
    def block(rows: list[dict[str, Any]]) -> dict[str, Any]:
        found = [r["latency"] for r in rows if r["latency"] is not None]
        out: dict[str, Any] = {"runs": len(rows), "not_found": len(rows) - len(found)}
        if found:
            out["latency"] = spread(found)
            # a run that never found its file counts as infinitely slow
            out["p95_all"] = percentile(found + [float("inf")] * out["not_found"], 95)
        applied = [r["watcher_applied"] for r in rows if r["watcher_applied"] is not None]
        out["watcher_applied"] = len(applied)
        if applied:
            out["apply_delay"] = spread(applied)
        return out

    s = {"all": block(runs), **{m: block([r for r in runs if r["mode"] == m]) for m in MODES}}
    attempts = [a for r in runs for a in r["attempts"]]
    s["recall_attempt"] = stats(attempts)
    s["attempts_to_find"] = dict(sorted(Counter(len(r["attempts"]) for r in runs).items()))
    return s


# 2. An idle watcher.


def measure_idle(watcher: Watcher, seconds: float) -> dict[str, Any]:
    watcher.wait_idle()
    lines_before = len(watcher.lines)
    start, wall = watcher.cpu(), time.perf_counter()
    log(f"  idle watcher: {seconds:g} s, the vault left alone ...")
    time.sleep(seconds)
    end, wall = watcher.cpu(), time.perf_counter() - wall
    watcher.wait_idle()
    cpu = (end["utime"] - start["utime"]) + (end["stime"] - start["stime"])
    return {
        "wall": wall,
        "start": start,
        "end": end,
        "cpu": cpu,
        "user": end["utime"] - start["utime"],
        "system": end["stime"] - start["stime"],
        "percent_of_one_core": 100 * cpu / wall,
        "switches": end["switches"] - start["switches"],
        "tick": 1 / os.sysconf("SC_CLK_TCK"),
        "log_lines": [line for _, line in watcher.lines[lines_before:]],
    }


# 3. Cold recall at a large size, with and without a watcher.


def markdown_files(vault: Path) -> int:
    count = 0
    for _folder, dirs, names in os.walk(vault):
        dirs[:] = [d for d in dirs if d != ".kenomem"]
        count += sum(name.endswith(".md") for name in names)
    return count


def indexed_copy(runner: Runner, n: int, args: argparse.Namespace) -> tuple[Path, dict[str, Any]]:
    """An indexed working copy of the vault of n memories: kept between runs and used
    again while its index exists and it has as many files as the generated vault."""
    vault = cached_vault(n, args.cache_dir, args.fresh)
    wanted = markdown_files(vault)
    info: dict[str, Any] = {"vault": str(vault), "files": wanted}
    for work in (args.cache_dir / f"work-{n}", args.cache_dir / f"watch-indexed-{n}"):
        if not args.fresh and (work / ".kenomem" / "index").is_dir():
            files = markdown_files(work)
            if files == wanted:
                log(f"  reusing the indexed working copy {work} ({files:,} files)")
                info.update(working_copy=str(work), reused=True)
                return work, info
            log(f"  {work}: {files:,} files, not {wanted:,}: not used")
    work = working_copy(vault, args.cache_dir / f"watch-indexed-{n}")
    log(f"  working copy: {work}; indexing {n:,} memories (minutes at 100,000) ...")
    seconds, proc = runner.output(runner.reindex(work))
    log(f"  indexed in {seconds:.1f} s")
    info.update(working_copy=str(work), reused=False, reindex=seconds)
    info["reindex_report"] = json.loads(proc.stdout)
    return work, info


def check_index(runner: Runner, work: Path, n: int, info: dict[str, Any]) -> None:
    """`kenomem stats`: brings the index in step (or rebuilds it) before any timing."""
    seconds, proc = runner.output([runner.kenomem, "stats", "--vault", str(work), "--json"])
    memories = json.loads(proc.stdout)["memories"]
    info.update(stats_seconds=seconds, memories=memories)
    log(f"  kenomem stats: {memories:,} memories ({seconds:.1f} s)")
    if memories != n:
        log(f"  ! {memories:,} memories indexed, not {n:,}")


def recall_rounds(
    runner: Runner, vault: Path, warmup: int, runs: int, label: str, watcher: Watcher | None
) -> list[dict[str, Any]]:
    """Rounds of, for each query: floor, then recall --no-touch."""
    rounds = []
    for r in range(warmup + runs):
        for query in QUERIES:
            row: dict[str, Any] = {"round": r - warmup, "query": query}
            row["floor"] = runner.timed(runner.floor(vault, query))
            if watcher is not None:
                row["watcher_trusted"] = watcher.trusted()
            row["recall"] = runner.timed(runner.recall(vault, query, touch=False))
            if r >= warmup:
                rounds.append(row)
        kept = f"{r + 1 - warmup}/{runs}" if r >= warmup else f"warm-up {r + 1}/{warmup}"
        log(f"  recall {label}, round {kept}")
    return rounds


def summarize_recall(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    def block(rows: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "floor": stats([r["floor"] for r in rows]),
            "recall": stats([r["recall"] for r in rows]),
            "recall/floor": statistics.median(r["recall"] for r in rows)
            / statistics.median(r["floor"] for r in rows),
            "recall/floor per round": statistics.median(r["recall"] / r["floor"] for r in rows),
            "recall-floor per round": statistics.median(r["recall"] - r["floor"] for r in rows),
        }

    out = block(rounds)
    out["queries"] = {q: block([r for r in rounds if r["query"] == q]) for q in QUERIES}
    if rounds and "watcher_trusted" in rounds[0]:
        out["watcher_trusted"] = sum(r["watcher_trusted"] for r in rounds)
    return out


# The tables.


def render_latency(doc: dict[str, Any]) -> str:
    lat = doc["latency"]
    s = lat["summary"]
    n = lat["size"]
    rows = []
    labels = {"all": "all saves", "rename": "temp file + rename", "in-place": "truncate + write"}
    for key, label in labels.items():
        b = s[key]
        if not b["runs"]:
            continue
        if "latency" not in b:
            rows.append([f"{label} ({b['runs']})", "–", "–", "–", "never found"])
            continue
        x = b["latency"]
        note = f"{b['not_found']} not found" if b["not_found"] else ""
        if key == "all" and n == TARGET_SIZE:
            p95 = b["p95_all"]
            note = (note + "; " if note else "") + (
                f"target p95 < {LATENCY_TARGET:g} s: {verdict(p95 < LATENCY_TARGET)}"
            )
        rows.append([f"{label} ({b['runs']})", ms(x["p50"]), ms(x["p95"]), ms(x["max"]), note])
    b = s["all"]
    note = f"in {b['watcher_applied']} of {b['runs']} runs; in the others, recall's own scan"
    if "apply_delay" in b:
        rows.append(["indexed by the watcher (save → its log line)", *_p(b["apply_delay"]), note])
    else:
        rows.append(["indexed by the watcher", "–", "–", "–", note])
    alone = lat.get("summary_alone")
    if alone:
        a = alone["all"]
        if "apply_delay" in a:
            note = f"{a['watcher_applied']} of {a['runs']} saves logged"
            rows.append(["watcher alone: save → its log line", *_p(a["apply_delay"]), note])
        if "latency" in a:
            note = f"{a['not_found']} not found" if a["not_found"] else ""
            rows.append(["watcher alone: … + a recall started then", *_p(a["latency"]), note])
    a = s["recall_attempt"]
    rows.append(
        [
            "one `recall` process (every attempt)",
            ms(a["median"]),
            "–",
            ms(a["max"]),
            f"min {ms(a['min'])}, IQR {iqr(a)}",
        ]
    )
    found = ", ".join(
        f"{k} recall{'s' if int(k) > 1 else ''}: {v}" for k, v in s["attempts_to_find"].items()
    )
    out = [f"### Save to recall with `kenomem watch` running, {n:,} memories", ""]
    out.append(
        f"{b['runs']} saves after {doc['settings']['warmup']} not kept, half of each kind, "
        "each of a file with a new word; `kenomem recall WORD --json --no-touch` run back "
        "to back until it returns the file. Latency: from the end of the save to the end of "
        "the first recall that finds it."
    )
    out += ["", table(["save to recall", "p50", "p95", "max", "note"], rows, "lrrrl"), ""]
    if alone:
        out.append(
            f'"Watcher alone": {alone["all"]["runs"]} more saves (after '
            f"{doc['settings']['warmup']} not kept), each recalled only once the watcher's "
            "verbose log said it had reindexed the file."
        )
    out.append(
        f"Recalls needed to find the file: {found}. Watcher started in "
        f"{secs(lat['watcher_start'])} s (to its first heartbeat); the working copy was "
        f"indexed in {secs(lat['reindex'])} s. Code: commit {lat['code']}."
    )
    return "\n".join(out) + "\n"


def _p(x: dict[str, float]) -> list[str]:
    return [ms(x["p50"]), ms(x["p95"]), ms(x["max"])]


def render_idle(idle: dict[str, Any], size: int) -> str:
    tick = ms(idle["tick"])
    rows = [
        [
            "CPU (utime + stime)",
            f"{idle['cpu']:.2f} s",
            f"{idle['percent_of_one_core']:.2f} % of one core; user {idle['user']:.2f} s, "
            f"system {idle['system']:.2f} s (counted in ticks of {tick})",
        ],
        [
            "context switches (all threads)",
            f"{idle['switches']:,}",
            f"{idle['switches'] / idle['wall']:.1f} a second",
        ],
        ["threads", str(idle["end"]["threads"]), ""],
        ["lines logged", str(len(idle["log_lines"])), "the vault was left alone"],
    ]
    out = [f"### An idle watcher over {idle['wall']:.1f} s, {size:,} memories", ""]
    out.append(table(["measurement", "value", "note"], rows, "lrl"))
    return "\n".join(out) + "\n"


def render_recall(rec: dict[str, Any], runs: int) -> str:
    n = rec["size"]
    s = rec["summary"]
    rows = []
    for phase, label in (("without", "no watcher"), ("with", "watcher running")):
        b = s[phase]
        f = b["floor"]
        rows.append([f"floor, {label}", ms(f["median"]), ms(f["min"]), iqr(f), "1.00×"])
        note = f"{b['recall/floor']:.2f}× floor (per round {b['recall/floor per round']:.2f}×)"
        if phase == "with":
            note += f"; heartbeat trusted before {b['watcher_trusted']} of {3 * runs} recalls"
        r = b["recall"]
        rows.append(
            [f"recall --json --no-touch, {label}", ms(r["median"]), ms(r["min"]), iqr(r), note]
        )
    w, wo = s["with"], s["without"]
    gain = w["recall"]["median"] - wo["recall"]["median"]
    extra = w["recall-floor per round"] - wo["recall-floor per round"]
    copy = rec["copy"]
    reused = (
        f"{copy['working_copy']} reused, already indexed"
        if copy["reused"]
        else f"made and indexed for this run (in {secs(copy['reindex'])} s)"
    )
    out = [f"### Cold recall at {n:,} memories, with and without a live watcher", ""]
    out.append(
        f"Medians of {runs} round{'s' if runs > 1 else ''} (min, interquartile range) over "
        f"the three queries; floor and recall interleaved. Working copy {reused}. Code: "
        f"commit {rec['code']}."
    )
    out += ["", table(["measurement", "median", "min", "IQR", "comparison"], rows, "lrrrl"), ""]
    qrows = []
    for q in QUERIES:
        a, b = wo["queries"][q], w["queries"][q]
        qrows.append(
            [
                f"`{q}`",
                ms(a["floor"]["median"]),
                ms(a["recall"]["median"]),
                f"{a['recall/floor']:.2f}×",
                ms(b["floor"]["median"]),
                ms(b["recall"]["median"]),
                f"{b['recall/floor']:.2f}×",
            ]
        )
    header = ["query", "floor", "recall", "/floor", "floor (watcher)", "recall (watcher)", "/floor"]
    out += [table(header, qrows, "lrrrrrr"), ""]
    out.append(
        f"With a watcher, recall's median moves by {signed_ms(gain)}; recall minus the floor "
        f"of the same round, by {signed_ms(extra)} (median "
        f"{ms(wo['recall-floor per round'])} without, {ms(w['recall-floor per round'])} with)."
    )
    return "\n".join(out) + "\n"


def render_watchers(stopped: list[dict[str, Any]]) -> str:
    parts = []
    for w in stopped:
        summary = w["summary"] if isinstance(w["summary"], dict) else {}
        left = "; heartbeat left behind" if w["heartbeat_left"] else ""
        parts.append(
            f"{w['label']}: exit {w['exit']} ({verdict(w['exit'] == 0)}), "
            f"{summary.get('batches', '?')} batches, {summary.get('reindexed', '?')} "
            f"reindexed, {len(w['warnings'])} warnings{left}"
        )
    return "Watchers stopped with SIGTERM: " + "; ".join(parts) + ".\n"


# The command line.


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    here = Path(sys.executable).parent
    today = datetime.now().strftime("%Y-%m-%d")
    default_out = BENCH / "results" / f"{today}-{socket.gethostname()}-watch.json"
    p = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--size", type=int, default=10_000, help="memories for latency and idle CPU")
    p.add_argument("--runs", type=int, default=40, help="saves measured (half of each kind)")
    p.add_argument(
        "--alone-runs",
        type=int,
        default=10,
        help="more saves, each recalled only once the watcher has indexed it (0: skip)",
    )
    p.add_argument("--warmup", type=int, default=2, help="warm-up saves or recall rounds")
    p.add_argument(
        "--timeout", type=float, default=30.0, help="seconds before a save counts as not found"
    )
    p.add_argument(
        "--gap", type=float, default=0.5, help="pause after each save, once the watcher is idle"
    )
    p.add_argument(
        "--idle-seconds",
        type=float,
        default=60.0,
        help="how long the idle watcher's CPU is measured (0: skip)",
    )
    p.add_argument(
        "--recall-size",
        type=int,
        default=100_000,
        help="memories for cold recall with and without a watcher (0: skip)",
    )
    p.add_argument("--recall-runs", type=int, default=15, help="rounds of each recall phase")
    p.add_argument(
        "--start-timeout",
        type=float,
        default=900.0,
        help="seconds to wait for a watcher's first heartbeat",
    )
    p.add_argument(
        "--cache-dir",
        type=Path,
        default=Path("/tmp/kenomem-bench"),
        help="generated vaults (<cache-dir>/<size>) and working copies",
    )
    p.add_argument("--fresh", action="store_true", help="generate and index everything again")
    p.add_argument(
        "--keep-work",
        action="store_true",
        help="keep the latency run's working copy (<cache-dir>/watch-work-<size>)",
    )
    p.add_argument("--python", default=str(here / "python"), help="the Python of floor.py")
    p.add_argument("--kenomem", default=str(here / "kenomem"), help="the kenomem command")
    p.add_argument("--out", type=Path, default=default_out, help="the JSON file of raw timings")
    args = p.parse_args(argv)
    if args.size < 1 or args.runs < 1 or args.warmup < 0 or args.recall_runs < 1:
        p.error("sizes and runs must be positive, warm-up runs not negative")
    if min(args.recall_size, args.idle_seconds, args.gap, args.alone_runs) < 0:
        p.error("--recall-size, --idle-seconds, --gap and --alone-runs cannot be negative")
    if args.timeout <= 0:
        p.error("--timeout must be positive")
    for name in ("python", "kenomem"):
        if not shutil.which(getattr(args, name)):
            p.error(f"--{name}: not found: {getattr(args, name)}")
    if args.idle_seconds and not Path("/proc/self/stat").exists():
        log("no /proc here: the idle watcher's CPU is not measured")
        args.idle_seconds = 0
    return args


def code_version(runner: Runner) -> str:
    """kenomem's commit, and whether kenomem/ has changes not committed (it may be edited
    while the benchmark runs: each part records the code it started with)."""
    git = ["git", "-C", str(BENCH.parent)]
    commit = first_line([*git, "rev-parse", "--short", "HEAD"], runner.env) or "?"
    if first_line([*git, "status", "--porcelain", "--", "kenomem"], runner.env):
        commit += ", kenomem/ modified"
    return commit


def stop(watcher: Watcher, label: str, doc: dict[str, Any]) -> None:
    log(f"  stopping the watcher ({label}) with SIGTERM ...")
    result = watcher.stop()
    result["label"] = label
    doc["watchers"].append(result)
    log(f"  the watcher exited with {result['exit']}")


def run_latency_and_idle(runner: Runner, args: argparse.Namespace, doc: dict[str, Any]) -> None:
    n = args.size
    log(f"\n== save to recall and an idle watcher, {n:,} memories ==")
    vault = cached_vault(n, args.cache_dir, args.fresh)
    work = working_copy(vault, args.cache_dir / f"watch-work-{n}")
    log(f"  working copy: {work}; indexing ...")
    seconds, _ = runner.output(runner.reindex(work))
    lat: dict[str, Any] = {"size": n, "vault": str(vault), "working_copy": str(work)}
    lat["code"] = code_version(runner)
    lat["reindex"] = seconds
    doc["latency"] = lat
    log(f"  indexed in {seconds:.1f} s; starting the watcher")
    watcher = Watcher(runner, work)
    try:
        lat["watcher_start"] = watcher.wait_started(args.start_timeout)
        watcher.wait_idle()
        taken: set[str] = set()
        lat["runs"] = measure_latency(runner, watcher, work, args, args.runs, taken)
        lat["summary"] = summarize_latency(lat["runs"])
        if args.alone_runs:
            lat["alone"] = measure_latency(
                runner, watcher, work, args, args.alone_runs, taken, alone=True
            )
            lat["summary_alone"] = summarize_latency(lat["alone"])
        print(render_latency(doc), flush=True)
        if args.idle_seconds:
            doc["idle"] = measure_idle(watcher, args.idle_seconds)
            print(render_idle(doc["idle"], n), flush=True)
    finally:
        stop(watcher, f"{n:,} memories", doc)
        lat["watcher_log"] = [line for _, line in watcher.lines]
        if not args.keep_work:
            shutil.rmtree(work, ignore_errors=True)


def run_recall(runner: Runner, args: argparse.Namespace, doc: dict[str, Any]) -> None:
    n = args.recall_size
    log(f"\n== cold recall at {n:,} memories, with and without a watcher ==")
    work, info = indexed_copy(runner, n, args)
    check_index(runner, work, n, info)
    rec: dict[str, Any] = {"size": n, "copy": info, "code": code_version(runner)}
    doc["recall"] = rec
    if (work / HEARTBEAT).exists():
        log(f"  ! a heartbeat is in {work / HEARTBEAT}: another watcher may be running")
    rec["without"] = recall_rounds(runner, work, args.warmup, args.recall_runs, "alone", None)
    watcher = Watcher(runner, work)
    try:
        rec["watcher_start"] = watcher.wait_started(args.start_timeout)
        watcher.wait_idle()
        log(f"  watcher up in {rec['watcher_start']:.1f} s")
        rec["with"] = recall_rounds(
            runner, work, args.warmup, args.recall_runs, "with a watcher", watcher
        )
    finally:
        stop(watcher, f"{n:,} memories", doc)
        rec["watcher_log"] = [line for _, line in watcher.lines]
    rec["summary"] = {
        "without": summarize_recall(rec["without"]),
        "with": summarize_recall(rec["with"]),
    }
    print(render_recall(rec, args.recall_runs), flush=True)


def write(out: Path, doc: dict[str, Any]) -> None:
    out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    check_queries()
    runner = Runner(args.python, args.kenomem, shutil.which("rg"))
    facts = machine_facts(runner)
    print(render_facts(facts) + "\n", flush=True)
    doc: dict[str, Any] = {
        "started": datetime.now().isoformat(timespec="seconds"),
        "machine": facts,
        "settings": {
            k: str(v) if isinstance(v, Path) else v
            for k, v in vars(args).items()
            if k not in ("python", "kenomem")
        },
        "watchers": [],
        "incidents": runner.incidents,
    }
    doc["settings"].update(queries=list(QUERIES), unit="seconds")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    status = 0
    try:
        with Timer() as t:
            warm_up(runner, args.cache_dir)
        log(f"  warm-up done in {t.seconds:.1f} s")
        run_latency_and_idle(runner, args, doc)
        write(args.out, doc)
        if args.recall_size:
            run_recall(runner, args, doc)
    except BenchError as exc:
        log(f"stopped: {exc}")
        status = 1
    finally:
        doc["finished"] = datetime.now().isoformat(timespec="seconds")
        write(args.out, doc)
        log(f"\nraw timings: {args.out}")
    if doc["watchers"]:
        print(render_watchers(doc["watchers"]), flush=True)
        if any(w["exit"] != 0 for w in doc["watchers"]):
            status = status or 1
    if runner.incidents:
        log(f"{len(runner.incidents)} command(s) failed once and were re-run; see the JSON")
    return status


if __name__ == "__main__":
    sys.exit(main())
